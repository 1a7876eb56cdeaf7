// Package sink delivers batches of a project's audit events to one receiver of an audit
// stream (SPEC §28): an HTTPS endpoint, an S3-compatible bucket, a syslog server or an
// OpenTelemetry collector. A sink knows its receiver's protocol only; which events, in
// which order, and what happens after a failure is the stream's worker's business.
package sink

import (
	"context"
	"encoding/json"
	"time"
)

// Event is one audit event as a stream sends it.
type Event struct {
	// ID is the audit event's id: receivers deduplicate on it, since delivery is at least
	// once.
	ID string
	// Seq is its place in its project's hash chain, Hash its link.
	Seq  int64
	Hash string
	// Time and Action are the event's, for receivers that index on them (syslog's
	// timestamp and MSGID, OTLP's time and event name, S3 object names).
	Time   time.Time
	Action string
	// Body is the whole event as the stream's format renders it: one JSON object.
	Body json.RawMessage
}

// Sink sends one batch, in order, and returns nil only when the receiver took all of it.
// A batch that failed is sent again whole, so a receiver may see an event twice, always
// with the same ID.
type Sink interface {
	Send(ctx context.Context, batch []Event) error
	// Close releases what the sink holds open (a syslog connection).
	Close() error
}

// The formats an event's Body may take.
const (
	Native = "native" // the audit endpoint's view of the event (SPEC §7), with the chain's fields
	OCSF   = "ocsf"   // an Open Cybersecurity Schema Framework event (docs/audit-streams.md)
)
