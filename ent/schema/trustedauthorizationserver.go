package schema

// Owned by modules/trust.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// TrustedAuthorizationServer is another authorization server a project lets authcore, as
// its people's enterprise identity provider, issue ID-JAGs for (SPEC §22): its issuer, and
// the client_id the ID-JAG names there.
type TrustedAuthorizationServer struct{ ent.Schema }

func (TrustedAuthorizationServer) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: "tas_"}, CreatedMixin{}}
}

func (TrustedAuthorizationServer) Fields() []ent.Field {
	return []ent.Field{
		field.String("project_id").Immutable().NotEmpty(),
		field.String("issuer").Immutable().NotEmpty(),
		field.String("client_id").Immutable().NotEmpty(),
		field.String("created_by").Optional().Nillable().Immutable(),
	}
}

func (TrustedAuthorizationServer) Indexes() []ent.Index {
	return []ent.Index{index.Fields("project_id", "issuer").Unique(), index.Fields("issuer")}
}
