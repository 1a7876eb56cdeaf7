package schema

// Owned by modules/org.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// OrgRole is a role a project defines for the members of its orgs (SPEC §26), beside the
// built-in owner, admin and member: a name and the permissions it grants.
type OrgRole struct{ ent.Schema }

func (OrgRole) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: OrgRoleIDPrefix}, CreatedMixin{}}
}

func (OrgRole) Fields() []ent.Field {
	return []ent.Field{
		field.String("project_id").Immutable().NotEmpty(),
		field.String("name").Immutable().NotEmpty(),
		field.JSON("permissions", []string{}),
	}
}

func (OrgRole) Indexes() []ent.Index {
	return []ent.Index{index.Fields("project_id", "name").Unique()}
}
