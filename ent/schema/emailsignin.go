package schema

// Owned by modules/federation.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// EmailSignIn is a sign-in by mail (SPEC §20): one link (ac_esl_…, its digest kept) and
// one six-digit code (a keyed MAC kept, so a copy of the store does not give the codes
// away by brute force), ten minutes, single use; five wrong codes kill it. Rows exist for
// addresses without an account too when sign-up is open, since using one creates it.
type EmailSignIn struct{ ent.Schema }

func (EmailSignIn) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: EmailSigninIDPrefix}, CreatedMixin{}}
}

func (EmailSignIn) Fields() []ent.Field {
	return []ent.Field{
		field.String("tenant_id").Immutable().NotEmpty(),
		field.String("email").Immutable().NotEmpty(),
		field.Bytes("token_digest").Immutable().Unique().Sensitive(),
		field.String("code_mac").Immutable().Sensitive(),
		field.Int("attempts").Default(0),
		field.Time("expires_at").Immutable(),
		field.Time("used_at").Optional().Nillable(),
	}
}

func (EmailSignIn) Indexes() []ent.Index {
	// The mail budget counts an address's recent requests; a code finds the newest one.
	return []ent.Index{index.Fields("tenant_id", "email", "created_at"), index.Fields("expires_at")}
}
