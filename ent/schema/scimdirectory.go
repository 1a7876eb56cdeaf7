package schema

// Owned by modules/scim.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// SCIMDirectory is one SCIM 2.0 endpoint of an org (SPEC §27): an IdP's provisioning
// client (Okta, Microsoft Entra) presents its token at /scim/v2/{id}/…. The token is kept
// as a digest only; a roll replaces it at once and a revocation (RFC 7009, a leak report)
// ends it until the next roll.
type SCIMDirectory struct{ ent.Schema }

func (SCIMDirectory) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: SCIMDirectoryIDPrefix}, CreatedMixin{}}
}

func (SCIMDirectory) Fields() []ent.Field {
	return []ent.Field{
		field.String("project_id").Immutable().NotEmpty(),
		field.String("org_id").Immutable().NotEmpty(),
		field.String("name"),
		field.Bytes("digest").Unique().NotEmpty(),
		// The token's last characters, shown in lists (ac_scim_…abcd).
		field.String("hint"),
		field.Time("token_revoked_at").Optional().Nillable(),
		// A group's displayName → the org role its members get.
		field.JSON("group_roles", map[string]string{}),
		field.Time("last_sync_at").Optional().Nillable(),
		field.String("created_by").Optional().Nillable().Immutable(),
	}
}

func (SCIMDirectory) Indexes() []ent.Index {
	return []ent.Index{index.Fields("project_id", "org_id")}
}
