package schema

// Owned by modules/logout.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// AppSession records that an SSO session signed its person in to a project's app (SPEC
// §25): when the session ends, however it ends, each such app hears of it.
type AppSession struct{ ent.Schema }

func (AppSession) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: AppSessionIDPrefix}, CreatedMixin{}}
}

func (AppSession) Fields() []ent.Field {
	return []ent.Field{
		field.String("sid").Immutable().NotEmpty(),
		field.String("client_id").Immutable().NotEmpty(),
		field.String("user_id").Immutable().NotEmpty(),
		field.String("project_id").Immutable().NotEmpty(),
	}
}

func (AppSession) Indexes() []ent.Index {
	return []ent.Index{index.Fields("sid", "client_id").Unique(), index.Fields("client_id")}
}
