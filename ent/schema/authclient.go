package schema

// Owned by plugins/auth.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
)

// AuthClient is the OAuth 2.0 client of an auth badge. Its id is the client_id; only the
// SHA-256 of its secret is stored.
type AuthClient struct{ ent.Schema }

func (AuthClient) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: "cli_"}, CreatedMixin{}, AuthClientLifecycle}
}

func (AuthClient) Fields() []ent.Field {
	return []ent.Field{
		field.String("badge_id").Immutable().Unique().NotEmpty(),
		field.String("project_id").Immutable().NotEmpty(),
		field.String("role").Immutable(),
		field.Time("expires_at").Optional().Nillable().Immutable(),
	}
}
