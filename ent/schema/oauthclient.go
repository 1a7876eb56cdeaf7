package schema

// Owned by modules/authorize.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
)

// OAuthClient is a public client a host registered for itself (RFC 7591, SPEC §16). It
// holds no secret: it proves nothing but its redirect URIs, which is why a person approves
// every grant it gets.
type OAuthClient struct{ ent.Schema }

func (OAuthClient) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: "dcr_"}, CreatedMixin{}}
}

func (OAuthClient) Fields() []ent.Field {
	return []ent.Field{
		field.String("name").Immutable(),
		field.JSON("redirect_uris", []string{}).Immutable(),
		field.String("application_type").Immutable(),
		field.JSON("grant_types", []string{}).Immutable(),
		field.String("client_uri").Optional().Immutable(),
		// last_used_at is when a code was last issued to it: clients unused for 30 days,
		// with no live grant, are pruned (SPEC §9b).
		field.Time("last_used_at").Optional().Nillable(),
	}
}
