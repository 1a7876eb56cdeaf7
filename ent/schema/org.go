package schema

// Owned by modules/org.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Org is one of a project's business customers (SPEC §26): a group of the project's
// tenant users, not a tenant of its own. Its slug names it in URLs, once per project.
type Org struct{ ent.Schema }

func (Org) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: OrgIDPrefix}, CreatedMixin{}}
}

func (Org) Fields() []ent.Field {
	return []ent.Field{
		field.String("project_id").Immutable().NotEmpty(),
		field.String("name").NotEmpty(),
		field.String("slug").NotEmpty().MaxLen(64),
	}
}

func (Org) Indexes() []ent.Index {
	return []ent.Index{index.Fields("project_id", "slug").Unique()}
}
