package schema

// Owned by modules/resource.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Resource is a resource server a project registered (SPEC §11): tokens are issued for its
// URI only to that project. The URI is unique across projects, so one tenant can never
// obtain tokens another tenant's server accepts.
type Resource struct{ ent.Schema }

func (Resource) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: "res_"}, CreatedMixin{}}
}

func (Resource) Fields() []ent.Field {
	return []ent.Field{
		field.String("project_id").Immutable().NotEmpty(),
		field.String("uri").Immutable().NotEmpty().Unique(),
		field.String("name").NotEmpty(),
		// scopes, when not empty, bound what tokens for this resource may carry.
		field.JSON("scopes", []string{}),
		field.String("created_by").Optional().Nillable().Immutable(),
	}
}

func (Resource) Indexes() []ent.Index {
	return []ent.Index{index.Fields("project_id", "id")}
}
