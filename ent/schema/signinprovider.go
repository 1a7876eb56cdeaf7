package schema

// Owned by modules/federation.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// SignInProvider is an upstream identity provider a tenant's people sign in with (SPEC
// §20): OpenID Connect by issuer, or OAuth 2.0 with a userinfo endpoint and a claim
// mapping. The client secret is sealed under the master key (AAD: the row id); the
// server must present it again, so it cannot be a digest.
type SignInProvider struct{ ent.Schema }

func (SignInProvider) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: SigninProviderIDPrefix}, CreatedMixin{}}
}

func (SignInProvider) Fields() []ent.Field {
	return []ent.Field{
		field.String("tenant_id").Immutable().NotEmpty(),
		field.Enum("type").Values("oidc", "oauth2").Immutable(),
		// preset names the upstream whose endpoints were filled in (google, github, …);
		// "generic" for one configured by hand.
		field.String("preset").Default("generic"),
		field.String("name").NotEmpty(),
		field.String("issuer").Default(""),
		field.String("authorization_endpoint").Default(""),
		field.String("token_endpoint").Default(""),
		field.String("userinfo_endpoint").Default(""),
		field.String("client_id").NotEmpty(),
		field.String("client_secret_sealed").Sensitive(),
		field.JSON("scopes", []string{}),
		// trust_email: the provider vouches for the addresses it calls verified, so a new
		// subject may be linked to an existing account by email.
		field.Bool("trust_email").Default(false),
		// claims maps subject, email, email_verified and name to the upstream's claim names.
		field.JSON("claims", map[string]string{}),
		// sso_required refuses password sign-in for addresses in the provider's proven domains.
		field.Bool("sso_required").Default(false),
		// offline asks the upstream for a refresh token, kept sealed on the identity.
		field.Bool("offline").Default(false),
		field.Bool("enabled").Default(true),
		// org_id binds the provider to one org of the project as its connection (SPEC §26):
		// the way in its policy's ssoRequired admits. Nil for the tenant's own providers.
		field.String("org_id").Optional().Nillable().Immutable(),
		field.Time("updated_at").Default(now).UpdateDefault(now),
	}
}

func (SignInProvider) Indexes() []ent.Index {
	return []ent.Index{index.Fields("tenant_id", "id")}
}
