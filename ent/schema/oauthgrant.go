package schema

// Owned by modules/authorize.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// OAuthGrant is what a person approved (SPEC §16): a client may act for them on a project,
// with these scopes, for these resources. Its refresh and access tokens live only while it
// does; a remembered grant that covers a new request skips the consent screen.
type OAuthGrant struct{ ent.Schema }

func (OAuthGrant) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: "grt_"}, CreatedMixin{}}
}

func (OAuthGrant) Fields() []ent.Field {
	return []ent.Field{
		field.String("client_id").Immutable().NotEmpty(),
		field.String("client_name"),
		field.String("client_host"),
		field.String("user_id").Immutable().NotEmpty(),
		// project_id is "" for a personal grant (SPEC §25): identity scopes only, consented by
		// the person for themselves, speaking for no project.
		field.String("project_id").Immutable(),
		field.JSON("scopes", []string{}),
		field.JSON("resources", []string{}),
		field.Time("updated_at"),
		field.Time("revoked_at").Optional().Nillable(),
	}
}

func (OAuthGrant) Indexes() []ent.Index {
	return []ent.Index{index.Fields("user_id", "id"), index.Fields("project_id", "id")}
}
