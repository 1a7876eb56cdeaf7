package schema

// Owned by modules/approval.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// AuthorizationDetailType is a kind of action a project's agents may ask its people to
// approve (RFC 9396 authorization_details, SPEC §23): its type, a name for people, and the
// JSON Schema every detail of the type must satisfy. The schema is kept as the admin wrote
// it, so the console renders its fields in their order; its digest names this version,
// and a request whose types changed since it was made is never approved nor served.
type AuthorizationDetailType struct{ ent.Schema }

func (AuthorizationDetailType) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: "adt_"}, CreatedMixin{}}
}

func (AuthorizationDetailType) Fields() []ent.Field {
	return []ent.Field{
		field.String("project_id").Immutable().NotEmpty(),
		field.String("type").Immutable().NotEmpty(),
		field.String("name").NotEmpty(),
		field.Text("schema").NotEmpty(),
		field.String("schema_digest").NotEmpty(),
		field.String("created_by").Optional().Nillable().Immutable(),
		field.Time("updated_at"),
	}
}

func (AuthorizationDetailType) Indexes() []ent.Index {
	return []ent.Index{index.Fields("project_id", "type").Unique()}
}
