package schema

// Owned by modules/authorize.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// GrantRefreshToken is a refresh token of an OAuth grant (SPEC §16), stored only as its
// digest. It rotates on every use; the rotated one is kept (rotated_at set) so that
// presenting it again is recognised as theft and ends the grant. expires_at is the idle
// limit, renewed by each rotation but never past family_expires_at, the absolute one.
type GrantRefreshToken struct{ ent.Schema }

func (GrantRefreshToken) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: "grk_"}, CreatedMixin{}}
}

func (GrantRefreshToken) Fields() []ent.Field {
	return append([]ent.Field{
		field.Bytes("digest").Immutable().Unique().NotEmpty(),
		field.String("grant_id").Immutable().NotEmpty(),
		field.String("client_id").Immutable().NotEmpty(),
		field.JSON("scopes", []string{}).Immutable(),
		field.JSON("resources", []string{}).Immutable(),
		field.Time("expires_at").Immutable(),
		field.Time("family_expires_at").Immutable(),
		field.Time("rotated_at").Optional().Nillable(),
		// successor is the answer its rotation gave, sealed under the master key: a
		// racing second refresh by the same client within the grace gets the same pair
		// (SPEC §9b) instead of ending the grant. Cleared by the pruner after the grace, so
		// keys reseal need not know it.
		field.String("successor").Optional().Nillable().Sensitive(),
		// jkt binds a public client's refresh token to the DPoP key it was issued under
		// (RFC 9449 §5): a thief without the key cannot use it.
		field.String("jkt").Optional().Immutable(),
	}, authentication()...)
}

func (GrantRefreshToken) Indexes() []ent.Index {
	return []ent.Index{index.Fields("grant_id")}
}
