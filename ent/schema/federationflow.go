package schema

// Owned by modules/federation.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// FederationFlow is an upstream sign-in in flight, between the redirect to the provider
// and its callback (SPEC §20): the state (its digest), the nonce, the PKCE verifier
// (sealed, AAD: the row id), the browser that started it (a cookie's digest) and where to
// send the person afterwards. The callback spends it once.
type FederationFlow struct{ ent.Schema }

func (FederationFlow) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: FederationFlowIDPrefix}, CreatedMixin{}}
}

func (FederationFlow) Fields() []ent.Field {
	return []ent.Field{
		field.String("tenant_id").Immutable().NotEmpty(),
		field.String("provider_id").Immutable().NotEmpty(),
		field.Bytes("state_digest").Immutable().Unique().Sensitive(),
		field.Bytes("browser_digest").Immutable().Sensitive(),
		field.String("nonce").Immutable().Sensitive(),
		field.String("verifier_sealed").Immutable().Sensitive(),
		// test: an admin's test of an org's connection (SPEC §26), which signs no one in.
		field.Enum("purpose").Values("signin", "link", "test").Immutable(),
		// The signed-in user a link flow adds the identity to.
		field.String("link_user_id").Optional().Nillable().Immutable(),
		field.String("redirect").Immutable(),
		field.Time("expires_at").Immutable(),
		field.Time("used_at").Optional().Nillable(),
		// test_result is what a test flow's upstream said, mapped (subject, email, …).
		field.JSON("test_result", map[string]any{}).Optional(),
	}
}

func (FederationFlow) Indexes() []ent.Index {
	return []ent.Index{index.Fields("expires_at")}
}
