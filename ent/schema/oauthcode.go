package schema

// Owned by modules/authorize.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// OAuthCode is an authorization code (SPEC §16), stored only as its digest: single use,
// sixty seconds, bound to its client, redirect URI, PKCE challenge and resources. A used
// code is kept until it expires so that a second use is recognised.
type OAuthCode struct{ ent.Schema }

func (OAuthCode) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: "cod_"}, CreatedMixin{}}
}

func (OAuthCode) Fields() []ent.Field {
	return []ent.Field{
		field.Bytes("digest").Immutable().Unique().NotEmpty(),
		field.String("grant_id").Immutable().NotEmpty(),
		field.String("client_id").Immutable().NotEmpty(),
		field.String("redirect_uri").Immutable().NotEmpty(),
		field.String("code_challenge").Immutable().NotEmpty(),
		field.JSON("scopes", []string{}).Immutable(),
		field.JSON("resources", []string{}).Immutable(),
		field.Time("expires_at").Immutable(),
		field.Time("used_at").Optional().Nillable(),
	}
}

func (OAuthCode) Indexes() []ent.Index {
	return []ent.Index{index.Fields("expires_at")}
}
