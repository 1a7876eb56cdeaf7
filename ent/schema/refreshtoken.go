package schema

// Owned by modules/session.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// RefreshToken is one refresh token of a session, stored only as its SHA-256 digest. A
// rotated token is kept (rotated_at set) so that presenting it again is recognised as
// theft.
type RefreshToken struct{ ent.Schema }

func (RefreshToken) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: "rtk_"}, CreatedMixin{}}
}

func (RefreshToken) Fields() []ent.Field {
	return []ent.Field{
		field.Bytes("digest").Immutable().Unique().NotEmpty(),
		field.String("session_id").Immutable().NotEmpty(),
		field.Time("rotated_at").Optional().Nillable(),
	}
}

func (RefreshToken) Indexes() []ent.Index {
	return []ent.Index{index.Fields("session_id")}
}
