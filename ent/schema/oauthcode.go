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
	return append([]ent.Field{
		field.Bytes("digest").Immutable().Unique().NotEmpty(),
		field.String("grant_id").Immutable().NotEmpty(),
		field.String("client_id").Immutable().NotEmpty(),
		field.String("redirect_uri").Immutable().NotEmpty(),
		field.String("code_challenge").Immutable().NotEmpty(),
		field.JSON("scopes", []string{}).Immutable(),
		field.JSON("resources", []string{}).Immutable(),
		field.Time("expires_at").Immutable(),
		field.Time("used_at").Optional().Nillable(),
		// nonce is the OpenID Connect request's, for its id_token.
		field.String("nonce").Optional().Immutable(),
	}, authentication()...)
}

// authentication is how the person who approved had signed in, for the id_tokens of
// what they approved (SPEC §21): the session's authentication time and methods (RFC
// 8176), and the session itself (sid, for RP-initiated logout). A code carries it to
// the refresh tokens it starts, and each rotation to the next.
func authentication() []ent.Field {
	return []ent.Field{
		field.Time("auth_time").Optional().Nillable().Immutable(),
		field.JSON("amr", []string{}).Optional().Immutable(),
		field.String("sid").Optional().Immutable(),
		// org_id is the organisation the person signed in for (SPEC §26): its role and
		// permissions are read again at each token, so that they follow changes.
		field.String("org_id").Optional().Immutable(),
	}
}

func (OAuthCode) Indexes() []ent.Index {
	return []ent.Index{index.Fields("expires_at")}
}
