package schema

// Owned by modules/project.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
)

// Project owns a tenant whose id is the project id (SPEC §2).
type Project struct{ ent.Schema }

func (Project) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: "prj_"}, CreatedMixin{}}
}

func (Project) Fields() []ent.Field {
	return []ent.Field{
		field.String("name").NotEmpty(),
		field.String("created_by").Immutable(),
		// The project's credential policy (SPEC §12); null: no limit beyond the service's.
		field.Int("agent_token_max_ttl_hours").Optional().Nillable(),
		field.Int("badge_max_expires_in_days").Optional().Nillable(),
		field.JSON("allowed_scopes", []string{}).Optional(),
		// Members without a second factor may not use the project's routes (SPEC §17).
		field.Bool("require_mfa").Default(false),
	}
}
