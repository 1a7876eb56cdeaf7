package schema

// Owned by modules/org.

import (
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// OrgDomainIDPrefix is the id prefix of an org's domain claim.
const OrgDomainIDPrefix = "odm_"

// OrgDomain is an org's claim to a domain (SPEC §26), pending until proven by a code
// mailed to an address there (only the code's MAC is kept) or by a DNS TXT record of
// dns_token. Several orgs of a project may claim one domain; at most one holds it
// verified, which the partial unique index makes true even for racing verifications.
type OrgDomain struct{ ent.Schema }

func (OrgDomain) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: OrgDomainIDPrefix}, CreatedMixin{}}
}

func (OrgDomain) Fields() []ent.Field {
	return []ent.Field{
		field.String("project_id").Immutable().NotEmpty(),
		field.String("org_id").Immutable().NotEmpty(),
		field.String("domain").Immutable().NotEmpty().MaxLen(253),
		field.Enum("method").Values("email", "dns"),
		// email is the address the code went to (method email).
		field.String("email").Optional().Nillable(),
		field.String("code_mac").Optional().Nillable().Sensitive(),
		// attempts counts the codes tried, each before it is compared: five end the claim.
		field.Int("attempts").Default(0),
		field.String("dns_token").NotEmpty(),
		field.Time("expires_at"),
		field.Time("verified_at").Optional().Nillable(),
	}
}

func (OrgDomain) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("org_id", "domain").Unique(),
		index.Fields("project_id", "domain").StorageKey("orgdomain_verified").Unique().
			Annotations(entsql.IndexWhere("verified_at IS NOT NULL")),
	}
}
