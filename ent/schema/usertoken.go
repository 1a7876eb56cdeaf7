package schema

// Owned by modules/account.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// UserToken is a single-use token mailed to a user (SPEC §14): a password reset
// (ac_rst_…, 30 minutes) or an email verification (ac_evf_…, 24 hours). Only its digest
// is stored.
type UserToken struct{ ent.Schema }

func (UserToken) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: "utk_"}, CreatedMixin{}}
}

func (UserToken) Fields() []ent.Field {
	return []ent.Field{
		field.String("user_id").Immutable().NotEmpty(),
		field.Enum("purpose").Values("reset", "verify").Immutable(),
		field.Bytes("digest").Immutable().Unique().Sensitive(),
		field.Time("expires_at").Immutable(),
		field.Time("used_at").Optional().Nillable(),
	}
}

func (UserToken) Indexes() []ent.Index {
	// The reset-mail budget counts a user's recent tokens of one purpose.
	return []ent.Index{index.Fields("user_id", "purpose", "created_at")}
}
