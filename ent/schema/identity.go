package schema

// Owned by modules/federation.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Identity links a user to a subject of an upstream provider (SPEC §20): a returning
// subject signs its user in. Upstream tokens are kept only for providers that ask for
// offline access, sealed (AAD: the row id), for a later token vault.
type Identity struct{ ent.Schema }

func (Identity) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: IdentityIDPrefix}, CreatedMixin{}}
}

func (Identity) Fields() []ent.Field {
	return []ent.Field{
		field.String("tenant_id").Immutable().NotEmpty(),
		field.String("user_id").Immutable().NotEmpty(),
		field.String("provider_id").Immutable().NotEmpty(),
		field.String("subject").Immutable().NotEmpty(),
		field.String("email").Default(""),
		field.Bool("email_verified").Default(false),
		field.String("tokens_sealed").Default("").Sensitive(),
		field.Time("last_used_at").Optional().Nillable(),
	}
}

func (Identity) Indexes() []ent.Index {
	return []ent.Index{
		// One subject of one provider belongs to one user.
		index.Fields("provider_id", "subject").Unique(),
		index.Fields("user_id"),
	}
}
