package schema

// Owned by modules/authorize.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
)

// OAuthAuthorization is an authorization request (SPEC §16) between the host's redirect to
// /oauth/authorize and the person's decision: what was asked, by which client, with which
// PKCE challenge. It lives ten minutes and is decided once.
type OAuthAuthorization struct{ ent.Schema }

func (OAuthAuthorization) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: "azr_"}, CreatedMixin{}}
}

func (OAuthAuthorization) Fields() []ent.Field {
	return []ent.Field{
		field.String("client_id").Immutable().NotEmpty(),
		field.String("client_name").Immutable(),
		// client_host is the verified host the consent screen shows large: the redirect
		// URI's (SPEC §9b), in IDNA ASCII. client_uri is only what the client claims.
		field.String("client_host").Immutable(),
		field.String("client_uri").Optional().Immutable(),
		field.String("redirect_uri").Immutable().NotEmpty(),
		field.String("state").Immutable(),
		field.String("code_challenge").Immutable().NotEmpty(),
		field.JSON("scopes", []string{}).Immutable(),
		field.JSON("resources", []string{}).Immutable(),
		// project_id is the project that registered the requested resources; empty when
		// none was named and the person chooses.
		field.String("project_id").Immutable(),
		field.Time("expires_at").Immutable(),
		field.Time("decided_at").Optional().Nillable(),
		// browser is the digest of the cookie set on the browser that opened the request,
		// and session_handle the session that first viewed it (SPEC §9b): nobody else
		// may see or decide it.
		field.Bytes("browser").Optional().Immutable(),
		field.String("session_handle").Optional().Nillable(),
		// OpenID Connect (SPEC §21): the nonce for the id_token, prompt (space-separated),
		// and max_age in seconds (nil: none given).
		field.String("nonce").Optional().Immutable(),
		field.String("prompt").Optional().Immutable(),
		field.Int("max_age").Optional().Nillable().Immutable(),
		// org_id is the request's organization= (SPEC §26), checked against the person's
		// memberships when they decide.
		field.String("org_id").Optional().Immutable(),
	}
}
