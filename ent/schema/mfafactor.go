package schema

// Owned by modules/mfa.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// MFAFactor is a user's second factor (SPEC §17): a TOTP app, whose shared secret is
// sealed under the master key (the server must compute codes from it, so a digest would
// not do), or a passkey, whose public key and signature counter are kept as the WebAuthn
// library's credential record.
type MFAFactor struct{ ent.Schema }

func (MFAFactor) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: MFAFactorIDPrefix}, CreatedMixin{}}
}

func (MFAFactor) Fields() []ent.Field {
	return []ent.Field{
		field.String("user_id").Immutable().NotEmpty(),
		field.String("tenant_id").Immutable().NotEmpty(),
		field.Enum("type").Values("totp", "passkey").Immutable(),
		field.String("name").Default(""),
		// TOTP: the base32 secret, sealed with the factor id as associated data.
		field.String("secret_sealed").Optional().Nillable().Sensitive(),
		// A TOTP factor is pending until a code from it is confirmed; a passkey is
		// confirmed by its registration.
		field.Time("confirmed_at").Optional().Nillable(),
		// TOTP: the last time step accepted, so no code is used twice (RFC 6238 §5.2).
		field.Int64("last_step").Default(0),
		// Passkey: the credential id the authenticator names in an assertion.
		field.Bytes("credential_id").Optional().Nillable().Unique(),
		// Passkey: webauthn.Credential as JSON (public key, sign count, flags).
		field.String("credential").Optional().Nillable(),
		field.Time("last_used_at").Optional().Nillable(),
	}
}

func (MFAFactor) Indexes() []ent.Index {
	return []ent.Index{index.Fields("user_id")}
}
