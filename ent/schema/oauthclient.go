package schema

// Owned by modules/authorize.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
)

// OAuthClient is a client a host registered for itself (RFC 7591, SPEC §16, §21). A
// public one (token_endpoint_auth_method none) proves nothing but its redirect URIs, which
// is why a person approves every grant it gets; a confidential one also proves a secret
// (client_secret_basic or _post, kept as its digest) or a key (private_key_jwt, by jwks or
// jwks_uri).
type OAuthClient struct{ ent.Schema }

func (OAuthClient) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: OAuthClientIDPrefix}, CreatedMixin{}}
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
		field.String("token_endpoint_auth_method").Default("none").Immutable(),
		field.Bytes("secret_digest").Optional().Nillable().Sensitive(),
		field.JSON("jwks", map[string]any{}).Optional().Immutable(),
		field.String("jwks_uri").Optional().Immutable(),
		field.JSON("post_logout_redirect_uris", []string{}).Optional().Immutable(),
		// scope is the registration's (RFC 7591 §2): what it may ask for; "" for anything.
		field.String("scope").Optional().Immutable(),
		field.String("id_token_signed_response_alg").Optional().Immutable(),
		// dpop_bound_access_tokens (RFC 9449 §5.2): the client always uses DPoP.
		field.Bool("dpop_bound_access_tokens").Default(false).Immutable(),
	}
}
