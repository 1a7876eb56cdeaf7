// Package audit records who did what to a project (SPEC §6–7). A record is written inside
// the caller's transaction, so a change and its record commit together or not at all.
// It must not decide what is audited: callers name the action and its metadata.
package audit

import (
	"context"

	"go.uber.org/fx"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/platform/secret"
)

// Module provides the recorder.
var Module = fx.Module("audit", fx.Provide(NewRecorder))

// Origin is what a record keeps of the request, copied out of the HTTP layer.
type Origin struct {
	ForwardedFor *string // raw x-forwarded-for; only its keyed hash is stored
	UserAgent    *string
}

// Event is one record to write.
type Event struct {
	ActorID   *string
	ProjectID string
	Action    string
	Metadata  map[string]any
	Origin    Origin
}

// Recorder writes audit records.
type Recorder struct{ keys *secret.Keyring }

// NewRecorder returns a recorder hashing client addresses under the server's key.
func NewRecorder(keys *secret.Keyring) *Recorder { return &Recorder{keys: keys} }

// Record writes e inside tx.
func (r *Recorder) Record(ctx context.Context, tx *ent.Tx, e Event) (*ent.AuditEvent, error) {
	md := e.Metadata
	if md == nil {
		md = map[string]any{}
	}
	return tx.AuditEvent.Create().
		SetNillableActorID(e.ActorID).
		SetProjectID(e.ProjectID).
		SetAction(e.Action).
		SetNillableIPHash(r.IPHash(e.Origin.ForwardedFor)).
		SetNillableUserAgent(e.Origin.UserAgent).
		SetMetadata(md).
		Save(ctx)
}

// IPHash is the hex HMAC-SHA256 of an x-forwarded-for value, or nil when there was none.
// Keyed, so the stored hash cannot be reversed by hashing the IPv4 space.
func (r *Recorder) IPHash(forwardedFor *string) *string {
	if forwardedFor == nil {
		return nil
	}
	h := r.keys.MAC("ip", []byte(*forwardedFor))
	return &h
}
