package schema

// Owned by modules/org.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// OrgPolicy is what an org asks of the addresses in its verified domains (SPEC §26). Its
// id is the org's: an org has one policy or none, and none reads as every rule off.
type OrgPolicy struct{ ent.Schema }

func (OrgPolicy) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().NotEmpty().MaxLen(40),
		field.String("project_id").Immutable().NotEmpty(),
		field.Bool("sso_required").Default(false),
		field.Bool("mfa_required").Default(false),
		// session_max_hours: 0 leaves the project's own session lifetime.
		field.Int("session_max_hours").Default(0),
		// auto_join_role is the role a person who proves an address in a verified domain is
		// given; absent, autoJoin is off.
		field.String("auto_join_role").Optional().Nillable(),
		field.Bool("revoke_minted_on_deprovision").Default(false),
		field.Time("updated_at").Default(now).UpdateDefault(now),
	}
}

func (OrgPolicy) Indexes() []ent.Index {
	return []ent.Index{index.Fields("project_id", "auto_join_role")}
}
