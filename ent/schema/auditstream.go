package schema

// Owned by modules/auditstream.

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// AuditStream sends a project's audit events to a receiver of its own (SPEC §28): an
// HTTPS endpoint, an S3-compatible bucket, a syslog server or an OpenTelemetry collector.
// The target's settings are flat columns, one set per type; the secrets a sink needs in
// clear (the https signing key, the S3 secret key) are sealed under the master key.
// cursor is the chain_seq of the last event delivered (or skipped by the filter): the
// stream's place in its project's hash chain.
type AuditStream struct{ ent.Schema }

func (AuditStream) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{Prefix: AuditStreamIDPrefix}, CreatedMixin{}}
}

func (AuditStream) Fields() []ent.Field {
	return []ent.Field{
		field.String("project_id").Immutable().NotEmpty(),
		field.Enum("type").Values("https", "s3", "syslog", "otlp").Immutable(),
		field.Enum("format").Values("native", "ocsf").Immutable(),
		// actions are the filter's globs; empty: every event.
		field.JSON("actions", []string{}).Immutable(),
		// https and otlp
		field.String("url").Optional().Nillable().Immutable(),
		field.String("secret_sealed").Optional().Nillable().Sensitive(),
		// syslog
		field.String("host").Optional().Nillable().Immutable(),
		field.Int("port").Optional().Nillable().Immutable(),
		field.Bool("tls").Default(false).Immutable(),
		// s3
		field.String("endpoint").Optional().Nillable().Immutable(),
		field.String("region").Optional().Nillable().Immutable(),
		field.String("bucket").Optional().Nillable().Immutable(),
		field.String("prefix").Optional().Nillable().Immutable(),
		field.String("access_key_id").Optional().Nillable().Immutable(),
		field.String("secret_access_key_sealed").Optional().Nillable().Sensitive(),
		field.Bool("path_style").Default(false).Immutable(),

		// Delivery state.
		field.Int64("cursor").Default(0),
		// generation changes with every replay: a batch in flight when the cursor was set
		// back must not move it forward again.
		field.Int64("generation").Default(0),
		field.String("last_delivered_id").Optional().Nillable(),
		field.String("last_error").Optional().Nillable(),
		field.Time("failing_since").Optional().Nillable(),
		field.Int("failures").Default(0),
		field.Time("next_attempt_at").Optional().Nillable(),
		field.Time("paused_at").Optional().Nillable(),
		// locked_until is the lease of the replica sending the stream's next batch.
		field.Time("locked_until").Optional().Nillable(),
		field.String("created_by").Optional().Nillable().Immutable(),
	}
}

func (AuditStream) Indexes() []ent.Index {
	return []ent.Index{index.Fields("project_id", "id")}
}
