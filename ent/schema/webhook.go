package schema

// Owned by modules/webhook.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Webhook is a project's endpoint for its events (SPEC §12). Signing needs the secret
// itself, so it is sealed under the master key, never stored in clear.
type Webhook struct{ ent.Schema }

func (Webhook) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: WebhookIDPrefix}, CreatedMixin{}}
}

func (Webhook) Fields() []ent.Field {
	return []ent.Field{
		field.String("project_id").Immutable().NotEmpty(),
		field.String("url").Immutable().NotEmpty(),
		// events are the types delivered; empty: all of them.
		field.JSON("events", []string{}).Immutable(),
		field.String("secret_sealed").Sensitive(),
		field.String("created_by").Optional().Nillable().Immutable(),
	}
}

func (Webhook) Indexes() []ent.Index {
	return []ent.Index{index.Fields("project_id", "id")}
}
