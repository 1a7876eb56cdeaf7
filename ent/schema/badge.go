package schema

// Owned by modules/badge.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Badge is a per-project machine credential for one product (seed 4.4, SPEC §6). Only the
// SHA-256 of its secret is stored.
type Badge struct{ ent.Schema }

func (Badge) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: "bdg_"}, CreatedMixin{}, BadgeLifecycle}
}

func (Badge) Fields() []ent.Field {
	return []ent.Field{
		field.String("project_id").Immutable().NotEmpty(),
		field.String("product").Immutable().NotEmpty(),
		field.String("name").Immutable().NotEmpty(),
		field.String("role").Immutable().NotEmpty(),
		field.String("created_by").Optional().Nillable().Immutable(),
		field.Time("expires_at").Optional().Nillable().Immutable(),
	}
}

func (Badge) Indexes() []ent.Index {
	return []ent.Index{index.Fields("project_id", "id")}
}
