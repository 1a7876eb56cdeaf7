package schema

// Owned by platform/audit.

import (
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// AuditEvent is one audit record of SPEC §6–7.
type AuditEvent struct{ ent.Schema }

func (AuditEvent) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: "aud_"}, CreatedMixin{}}
}

func (AuditEvent) Fields() []ent.Field {
	return []ent.Field{
		field.String("actor_id").Optional().Nillable().Immutable(),
		field.String("project_id").Immutable(),
		field.String("action").Immutable().NotEmpty(),
		field.String("ip_hash").Optional().Nillable().Immutable(),
		field.String("user_agent").Optional().Nillable().Immutable(),
		field.JSON("metadata", map[string]any{}).Immutable(),
		// Who acted, beyond its id (SPEC §28): user, agent_token, client, setup_link,
		// scim_directory or system; act is the delegation chain when an agent acts for a
		// person (RFC 8693's act claim); org_id and request_id place the event.
		field.String("actor_type").Optional().Nillable().Immutable(),
		field.JSON("act", map[string]any{}).Optional().Immutable(),
		field.String("org_id").Optional().Nillable().Immutable(),
		field.String("request_id").Optional().Nillable().Immutable(),
		// The project's hash chain (SPEC §28), set after commit by the one chainer, in the
		// order it sees events: chain_seq is the event's place in its project's chain (also
		// the streams' cursor), hash the SHA-256 over its canonical JSON and the previous
		// event's hash. NULL until chained.
		field.Int64("chain_seq").Optional().Nillable(),
		field.String("hash").Optional().Nillable(),
	}
}

func (AuditEvent) Indexes() []ent.Index {
	// Pages of a project's audit trail walk ids downwards from a cursor.
	return []ent.Index{
		index.Fields("project_id", "id"),
		// Streams and verify walk a project's chain in order.
		index.Fields("project_id", "chain_seq").Unique(),
		// The chainer finds what it has not chained yet without reading the whole trail.
		index.Fields("id").StorageKey("auditevent_unchained").Annotations(entsql.IndexWhere("chain_seq IS NULL")),
	}
}
