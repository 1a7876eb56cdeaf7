package schema

// Owned by modules/authorize.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// RegistrationToken is an initial access token (RFC 7591 §3, SPEC §25): a project admin
// mints it so that dynamic client registration puts a third-party app into the project.
// Only its digest is kept; uses counts registrations, spent atomically (uses < max_uses in
// the same UPDATE), so two racing registrations cannot both spend the last use.
type RegistrationToken struct{ ent.Schema }

func (RegistrationToken) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: RegistrationTokenIDPrefix}, CreatedMixin{}}
}

func (RegistrationToken) Fields() []ent.Field {
	return []ent.Field{
		field.String("project_id").Immutable().NotEmpty(),
		field.Bytes("digest").Unique().Immutable().Sensitive(),
		// hint is what a list shows of the token (secret.Hint), never enough to use it.
		field.String("hint").Immutable(),
		field.Time("expires_at").Immutable(),
		field.Int("max_uses").Immutable(),
		field.Int("uses").Default(0),
		field.String("created_by").Optional().Nillable().Immutable(),
	}
}

func (RegistrationToken) Indexes() []ent.Index {
	return []ent.Index{index.Fields("project_id", "id")}
}
