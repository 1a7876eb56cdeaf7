package schema

// Owned by modules/federation.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// ProviderDomain is an email domain a tenant's provider claims (SPEC §20), proven by the
// admin's own verified address in it or by a link mailed to postmaster@ (the proof
// token's digest kept until it is used). Only proven domains route discovery and
// sso_required; one domain belongs to one provider per tenant.
type ProviderDomain struct{ ent.Schema }

func (ProviderDomain) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: "pdm_"}, CreatedMixin{}}
}

func (ProviderDomain) Fields() []ent.Field {
	return []ent.Field{
		field.String("tenant_id").Immutable().NotEmpty(),
		field.String("provider_id").Immutable().NotEmpty(),
		field.String("domain").Immutable().NotEmpty(),
		field.Time("verified_at").Optional().Nillable(),
		field.Bytes("proof_digest").Optional().Nillable().Sensitive(),
		field.Time("proof_expires_at").Optional().Nillable(),
	}
}

func (ProviderDomain) Indexes() []ent.Index {
	return []ent.Index{index.Fields("tenant_id", "domain").Unique(), index.Fields("provider_id")}
}
