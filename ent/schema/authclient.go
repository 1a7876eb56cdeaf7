package schema

// Owned by plugins/auth.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
)

// AuthClient is the OAuth 2.0 client of an auth badge. Its id is the client_id; only the
// SHA-256 of its secret is stored; the public keys it registered are kept as they are.
type AuthClient struct{ ent.Schema }

func (AuthClient) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: AuthClientIDPrefix}, CreatedMixin{}, AuthClientLifecycle}
}

func (AuthClient) Fields() []ent.Field {
	return []ent.Field{
		field.String("badge_id").Immutable().Unique().NotEmpty(),
		field.String("project_id").Immutable().NotEmpty(),
		field.String("role").Immutable(),
		field.Time("expires_at").Optional().Nillable().Immutable(),
		// keys are public JWKs the client may sign private_key_jwt assertions with
		// (SPEC §21), each under its kid.
		field.JSON("keys", []map[string]any{}).Optional(),
		// scopes are the agent scopes (x:y) granted to the client beside its role, within
		// the project's policy: what a machine client asks a resource for (SPEC §21).
		field.JSON("scopes", []string{}).Optional(),
	}
}
