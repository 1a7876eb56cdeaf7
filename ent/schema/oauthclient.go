package schema

// Owned by modules/authorize.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
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
		// What an app's admins may change (SPEC §25) is mutable; a host's own registration
		// never changes after it is made.
		field.String("name"),
		field.JSON("redirect_uris", []string{}),
		field.String("application_type").Immutable(),
		field.JSON("grant_types", []string{}),
		field.String("client_uri").Optional().Immutable(),
		// last_used_at is when a code was last issued to it: clients unused for 30 days,
		// with no live grant, are pruned (SPEC §9b).
		field.Time("last_used_at").Optional().Nillable(),
		field.String("token_endpoint_auth_method").Default("none").Immutable(),
		field.Bytes("secret_digest").Optional().Nillable().Sensitive(),
		field.JSON("jwks", map[string]any{}).Optional(),
		field.String("jwks_uri").Optional(),
		field.JSON("post_logout_redirect_uris", []string{}).Optional(),
		// scope is the registration's (RFC 7591 §2): what it may ask for; "" for anything.
		field.String("scope").Optional(),
		field.String("id_token_signed_response_alg").Optional(),
		// dpop_bound_access_tokens (RFC 9449 §5.2): the client always uses DPoP.
		field.Bool("dpop_bound_access_tokens").Default(false).Immutable(),
		// An app a project registered for its own people (SPEC §25): project_id is its
		// project ("" for a host's own registration, which serves dashboard users), and its
		// tenant's users sign in to it. A first-party app asks no consent.
		field.String("project_id").Optional().Immutable(),
		field.String("app_type").Optional().Immutable(),
		field.Bool("first_party").Default(false),
		field.String("backchannel_logout_uri").Optional(),
		field.String("frontchannel_logout_uri").Optional(),
		// claims maps claim names to user metadata paths ("metadata.plan").
		field.JSON("claims", map[string]string{}).Optional(),
		// A rotated secret stays valid until previous_secret_expires_at (the grace).
		field.Bytes("previous_secret_digest").Optional().Nillable().Sensitive(),
		field.Time("previous_secret_expires_at").Optional().Nillable(),
	}
}

func (OAuthClient) Indexes() []ent.Index {
	return []ent.Index{index.Fields("project_id")}
}
