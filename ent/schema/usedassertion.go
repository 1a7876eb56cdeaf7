package schema

// Owned by modules/oauth.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// UsedAssertion is a JWT assertion accepted once (a client's private_key_jwt, SPEC §21; a
// jwt-bearer grant, SPEC §22): its issuer and jti, kept until it expires so that the same
// assertion is refused on every replica. The unique index is the single-use rule.
type UsedAssertion struct{ ent.Schema }

func (UsedAssertion) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: AssertionIDPrefix}, CreatedMixin{}}
}

func (UsedAssertion) Fields() []ent.Field {
	return []ent.Field{
		field.String("issuer").Immutable().MaxLen(2048),
		field.String("jti").Immutable().MaxLen(256),
		field.Time("expires_at").Immutable(),
	}
}

func (UsedAssertion) Indexes() []ent.Index {
	return []ent.Index{index.Fields("issuer", "jti").Unique(), index.Fields("expires_at")}
}
