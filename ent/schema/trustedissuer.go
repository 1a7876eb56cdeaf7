package schema

// Owned by modules/trust.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// TrustedIssuer is an issuer of JWTs a project accepts as grants (SPEC §22): a workload
// platform (Kubernetes service accounts, SPIFFE, CI) whose tokens become resource-bound
// access tokens, or an enterprise identity provider whose ID-JAGs do. Its keys come by
// discovery, a jwks_uri, or inline; what it may be given is bounded by scopes and
// resources.
type TrustedIssuer struct{ ent.Schema }

func (TrustedIssuer) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: TrustedIssuerIDPrefix}, CreatedMixin{}}
}

func (TrustedIssuer) Fields() []ent.Field {
	return []ent.Field{
		field.String("project_id").Immutable().NotEmpty(),
		field.String("issuer").Immutable().NotEmpty(),
		field.Enum("kind").Values("workload", "enterprise").Immutable(),
		field.String("name").Immutable(),
		field.String("jwks_uri").Optional().Immutable(),
		field.JSON("jwks", map[string]any{}).Optional().Immutable(),
		// audience is what a workload token's aud must be; an ID-JAG's is this server.
		field.String("audience").Optional().Immutable(),
		field.String("subject_claim").Default("sub").Immutable(),
		field.String("subject_pattern").Optional().Immutable(),
		field.JSON("scopes", []string{}).Immutable(),
		field.JSON("resources", []string{}).Immutable(),
		// trust_email maps an ID-JAG's email claim to the project's user with that address.
		field.Bool("trust_email").Default(false).Immutable(),
		field.String("created_by").Optional().Nillable().Immutable(),
	}
}

func (TrustedIssuer) Indexes() []ent.Index {
	return []ent.Index{index.Fields("project_id", "issuer").Unique()}
}
