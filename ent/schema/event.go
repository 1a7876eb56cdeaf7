package schema

// Owned by modules/webhook.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Event is one entry of the outbox (SPEC §12): a credential change, written in the
// transaction that made it, so a committed change never lacks its event.
type Event struct{ ent.Schema }

func (Event) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: "evt_"}, CreatedMixin{}}
}

func (Event) Fields() []ent.Field {
	return []ent.Field{
		field.String("project_id").Immutable().NotEmpty(),
		field.String("type").Immutable().NotEmpty(),
		// body is the delivered JSON, encoded once: every webhook gets the same bytes.
		field.Bytes("body").Immutable(),
	}
}

func (Event) Indexes() []ent.Index {
	return []ent.Index{index.Fields("project_id", "id")}
}
