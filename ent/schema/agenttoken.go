package schema

// Owned by modules/agenttoken.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// AgentToken is a bearer token for an AI agent (seed 4.1, SPEC §5). Only the SHA-256 of
// the secret is stored.
type AgentToken struct{ ent.Schema }

func (AgentToken) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: "tok_"}, CreatedMixin{}, AgentTokenLifecycle}
}

func (AgentToken) Fields() []ent.Field {
	return []ent.Field{
		field.String("project_id").Immutable().NotEmpty(),
		field.String("agent_name").Immutable().NotEmpty(),
		field.JSON("scopes", []string{}).Immutable(),
		field.String("created_by").Optional().Nillable().Immutable(),
		field.Time("expires_at").Immutable(),
	}
}

func (AgentToken) Indexes() []ent.Index {
	return []ent.Index{index.Fields("project_id", "id")}
}
