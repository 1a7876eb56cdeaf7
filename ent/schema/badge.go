package schema

// Owned by modules/badge.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
)

// Badge is a per-project machine credential for one product (seed 4.4, SPEC §6). Only the
// SHA-256 of its secret is stored.
type Badge struct{ ent.Schema }

func (Badge) Mixin() []ent.Mixin { return []ent.Mixin{BadgeKind} }

func (Badge) Fields() []ent.Field {
	return []ent.Field{
		field.String("product").Immutable().NotEmpty(),
		field.String("name").Immutable().NotEmpty(),
		field.String("role").Immutable().NotEmpty(),
	}
}
