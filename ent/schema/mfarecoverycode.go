package schema

// Owned by modules/mfa.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// MFARecoveryCode is one of a user's ten single-use recovery codes (SPEC §17); only its
// digest is stored. A new set replaces the old one.
type MFARecoveryCode struct{ ent.Schema }

func (MFARecoveryCode) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: "rcv_"}, CreatedMixin{}}
}

func (MFARecoveryCode) Fields() []ent.Field {
	return []ent.Field{
		field.String("user_id").Immutable().NotEmpty(),
		field.Bytes("digest").Immutable().Sensitive(),
		field.Time("used_at").Optional().Nillable(),
	}
}

func (MFARecoveryCode) Indexes() []ent.Index {
	return []ent.Index{index.Fields("user_id", "digest").Unique()}
}
