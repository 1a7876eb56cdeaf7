package schema

// Owned by modules/session.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
)

// SigningKey is an Ed25519 key that signs JWTs. The private half is sealed under the
// master key; the public half is served in the JWKS.
type SigningKey struct{ ent.Schema }

func (SigningKey) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: "key_"}, CreatedMixin{}}
}

func (SigningKey) Fields() []ent.Field {
	return []ent.Field{
		field.String("algorithm").Immutable().Default("EdDSA"),
		field.Bytes("public_key").Immutable(),
		field.String("private_sealed").Sensitive(), // mutable only to re-seal it under a new master key
		// After this, the key no longer signs; it still verifies until tokens it signed expire.
		field.Time("retire_at"),
	}
}
