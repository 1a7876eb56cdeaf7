package schema

// Owned by modules/webhook.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// WebhookDelivery is one event on its way to one webhook, written with the event: the
// queue the delivery workers drain, and the history the deliveries list shows.
type WebhookDelivery struct{ ent.Schema }

func (WebhookDelivery) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: "dlv_"}, CreatedMixin{}}
}

func (WebhookDelivery) Fields() []ent.Field {
	return []ent.Field{
		field.String("webhook_id").Immutable().NotEmpty(),
		field.String("event_id").Immutable().NotEmpty(),
		field.String("event_type").Immutable().NotEmpty(),
		field.Enum("status").Values("pending", "succeeded", "failed").Default("pending"),
		field.Int("attempts").Default(0),
		field.Time("next_attempt_at"),
		// locked_until is the lease of the worker sending it; a worker that died leaves a
		// lease that simply runs out.
		field.Time("locked_until").Optional().Nillable(),
		field.Int("last_status_code").Optional().Nillable(),
		field.String("last_error").Optional().Nillable(),
		field.Time("last_attempt_at").Optional().Nillable(),
		field.Time("delivered_at").Optional().Nillable(),
	}
}

func (WebhookDelivery) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("webhook_id", "status", "id"),
		index.Fields("status", "next_attempt_at"),
	}
}
