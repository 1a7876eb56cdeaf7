package schema

// Owned by modules/agenttoken.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
)

// AgentToken is a bearer token for an AI agent (seed 4.1, SPEC §5). Only the SHA-256 of
// the secret is stored.
type AgentToken struct{ ent.Schema }

func (AgentToken) Mixin() []ent.Mixin { return []ent.Mixin{AgentTokenKind} }

func (AgentToken) Fields() []ent.Field {
	return []ent.Field{
		field.String("agent_name").Immutable().NotEmpty(),
		field.JSON("scopes", []string{}).Immutable(),
	}
}
