package schema

// Owned by modules/session.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
)

// SigningKey is a key that signs JWTs: Ed25519 (algorithm EdDSA) for authcore's own
// tokens, RSA (RS256) for OpenID Connect id_tokens. The private half is sealed under the
// master key (an Ed25519 seed, or PKCS #8); the public half (raw Ed25519, or PKIX) is
// served in the JWKS.
type SigningKey struct{ ent.Schema }

func (SigningKey) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: SigningKeyIDPrefix}, CreatedMixin{}}
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
