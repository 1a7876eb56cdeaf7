package schema

// Owned by modules/mfa.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// MFAChallenge is a second step in flight (SPEC §17): the mfaToken a password sign-in
// answers with (only its digest is kept), or a WebAuthn ceremony's session data between
// its begin and finish. Each is used once and lives five minutes.
type MFAChallenge struct{ ent.Schema }

func (MFAChallenge) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: MFAChallengeIDPrefix}, CreatedMixin{}}
}

func (MFAChallenge) Fields() []ent.Field {
	return []ent.Field{
		field.Enum("purpose").Values("signin", "passkey_register", "passkey_signin").Immutable(),
		field.String("tenant_id").Immutable().NotEmpty(),
		// Unset for a passwordless sign-in, whose user the assertion names.
		field.String("user_id").Optional().Nillable().Immutable(),
		// The mfaToken's digest.
		field.Bytes("digest").Optional().Nillable().Unique().Immutable().Sensitive(),
		// webauthn.SessionData as JSON.
		field.String("data").Default("").Immutable(),
		field.Time("expires_at").Immutable(),
	}
}

func (MFAChallenge) Indexes() []ent.Index {
	return []ent.Index{index.Fields("expires_at")}
}
