package schema

// Owned by modules/vault.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// VaultConnection is a person's upstream account (a §20 provider with offline access)
// connected for some of a project's agents (SPEC §23): the agents (agent token ids and
// client ids) that may exchange their own credential for its access token, and the
// upstream's tokens, sealed (AAD: the row id). One refresh at a time on any replica: the
// refresher holds a lease (lease_until, lease_owner) and bumps version when it stores the
// new tokens. Revoking deletes the row, and its tokens with it.
type VaultConnection struct{ ent.Schema }

func (VaultConnection) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: VaultConnectionIDPrefix}, CreatedMixin{}}
}

func (VaultConnection) Fields() []ent.Field {
	return []ent.Field{
		field.String("project_id").Immutable().NotEmpty(),
		field.String("provider_id").Immutable().NotEmpty(),
		field.String("user_id").Immutable().NotEmpty(),
		field.JSON("agents", []string{}),
		field.String("tokens_sealed").Sensitive(),
		field.Time("access_expires_at").Optional().Nillable(),
		field.String("scope").Default(""),
		field.Int("version").Default(0),
		field.Time("lease_until").Optional().Nillable(),
		field.String("lease_owner").Default(""),
		field.Time("last_refreshed_at").Optional().Nillable(),
		// broken_at: the upstream refused the refresh token (its grant is gone); the
		// person must connect again.
		field.Time("broken_at").Optional().Nillable(),
		field.Time("updated_at"),
	}
}

func (VaultConnection) Indexes() []ent.Index {
	return []ent.Index{index.Fields("provider_id", "user_id").Unique(), index.Fields("user_id")}
}
