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
		// dpop_jkt binds the token to a DPoP key (SPEC §22): its RFC 7638 thumbprint. A
		// bound token verifies only with a proof by that key.
		field.String("dpop_jkt").Optional().Nillable().Immutable(),
	}
}
