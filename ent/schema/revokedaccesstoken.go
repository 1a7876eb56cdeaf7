package schema

// Owned by plugins/auth.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// RevokedAccessToken is an OAuth access token (at+jwt) revoked before its exp, by its jti
// (SPEC §9a): introspection answers it inactive on every replica until it expires, when
// the row is pruned.
type RevokedAccessToken struct{ ent.Schema }

func (RevokedAccessToken) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().NotEmpty().MaxLen(64), // the jti
		field.String("project_id").Immutable(),
		field.Time("expires_at").Immutable(),
	}
}

func (RevokedAccessToken) Indexes() []ent.Index {
	return []ent.Index{index.Fields("expires_at")}
}
