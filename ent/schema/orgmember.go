package schema

// Owned by modules/org.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// OrgMember makes a user of the project's tenant a member of one of its orgs with a role
// (SPEC §26): a built-in one (owner, admin, member) or one the project defines. The
// project id is kept so that every query of members carries it.
type OrgMember struct{ ent.Schema }

func (OrgMember) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: OrgMemberIDPrefix}, CreatedMixin{}}
}

func (OrgMember) Fields() []ent.Field {
	return []ent.Field{
		field.String("project_id").Immutable().NotEmpty(),
		field.String("org_id").Immutable().NotEmpty(),
		field.String("user_id").Immutable().NotEmpty(),
		field.String("role").NotEmpty(),
	}
}

func (OrgMember) Indexes() []ent.Index {
	return []ent.Index{index.Fields("org_id", "user_id").Unique(), index.Fields("project_id", "user_id")}
}
