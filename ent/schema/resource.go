package schema

// Owned by modules/resource.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Resource is a resource server a project registered (SPEC §11): tokens are issued for its
// URI only to that project. The URI is unique across projects in every spelling, so one
// tenant can never obtain tokens another tenant's server accepts.
type Resource struct{ ent.Schema }

func (Resource) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: "res_"}, CreatedMixin{}}
}

func (Resource) Fields() []ent.Field {
	return []ent.Field{
		field.String("project_id").Immutable().NotEmpty(),
		// uri is the resource as its project registered it, which its tokens carry as aud.
		field.String("uri").Immutable().NotEmpty().Unique(),
		// canonical_uri is the form every spelling of the URI shares (SPEC §9b,
		// platform/resource.Canonical): unique, so equivalent spellings cannot be held by
		// two projects, and what lookups compare. Null only on rows written before it
		// existed, until the resource module fills it in at start.
		field.String("canonical_uri").Optional().Nillable().Unique(),
		field.String("name").NotEmpty(),
		// scopes, when not empty, bound what tokens for this resource may carry.
		field.JSON("scopes", []string{}),
		field.String("created_by").Optional().Nillable().Immutable(),
	}
}

func (Resource) Indexes() []ent.Index {
	return []ent.Index{index.Fields("project_id", "id")}
}
