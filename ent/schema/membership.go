package schema

// Owned by modules/project.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Membership gives a dashboard user a role on a project.
type Membership struct{ ent.Schema }

func (Membership) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: "mbr_"}, CreatedMixin{}}
}

func (Membership) Fields() []ent.Field {
	return []ent.Field{
		field.String("project_id").Immutable().NotEmpty(),
		field.String("user_id").Immutable().NotEmpty(),
		field.Enum("role").Values("viewer", "developer", "admin"),
	}
}

func (Membership) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("project_id", "user_id").Unique(),
		index.Fields("user_id"),
	}
}
