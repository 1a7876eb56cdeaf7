package schema

// Owned by platform/audit.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// AuditEvent is one audit record of SPEC §6–7.
type AuditEvent struct{ ent.Schema }

func (AuditEvent) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: "aud_"}, CreatedMixin{}}
}

func (AuditEvent) Fields() []ent.Field {
	return []ent.Field{
		field.String("actor_id").Optional().Nillable().Immutable(),
		field.String("project_id").Immutable(),
		field.String("action").Immutable().NotEmpty(),
		field.String("ip_hash").Optional().Nillable().Immutable(),
		field.String("user_agent").Optional().Nillable().Immutable(),
		field.JSON("metadata", map[string]any{}).Immutable(),
	}
}

func (AuditEvent) Indexes() []ent.Index {
	// Pages of a project's audit trail walk ids downwards from a cursor.
	return []ent.Index{index.Fields("project_id", "id")}
}
