// Package audit records who did what to a project (SPEC §6–7). A record is written inside
// the caller's transaction, so a change and its record commit together or not at all.
// It must not decide what is audited: callers name the action and its metadata.
package audit

import (
	"context"
	"time"

	"entgo.io/ent/dialect/sql"

	"go.uber.org/fx"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/auditevent"
	"github.com/authcore/authcore/platform/page"
	"github.com/authcore/authcore/platform/secret"
)

// Module provides the recorder.
var Module = fx.Module("audit", fx.Provide(NewRecorder))

// Origin is what a record keeps of the request, copied out of the HTTP layer.
type Origin struct {
	// ClientIP is the client's address as the trusted proxies tell it (httpserver.Origin),
	// nil for a request without X-Forwarded-For; only its keyed hash is stored.
	ClientIP  *string
	UserAgent *string
}

// Event is one record to write.
type Event struct {
	ActorID   *string
	ProjectID string
	Action    string
	Metadata  map[string]any
	Origin    Origin
}

// Recorder writes audit records and pages through them.
type Recorder struct {
	keys   *secret.Keyring
	ent    *ent.Client
	outbox Outbox
}

// Outbox is handed every record in the transaction that wrote it: the webhook module's
// outbox keeps those that are events (SPEC §12), so a change, its record and its event
// commit together or not at all.
type Outbox interface {
	Append(ctx context.Context, tx *ent.Tx, rec *ent.AuditEvent) error
}

// Params are the recorder's dependencies; without an outbox, records are only records.
type Params struct {
	fx.In
	Keys   *secret.Keyring
	Ent    *ent.Client
	Outbox Outbox `optional:"true"`
}

// NewRecorder returns a recorder hashing client addresses under the server's key.
// ipPurpose keys the audit ipHash (of the client address); sessions use another key, so the
// two kinds of hash cannot be compared (SPEC §9).
const ipPurpose = "audit-forwarded-for"

func NewRecorder(p Params) *Recorder {
	return &Recorder{keys: p.Keys, ent: p.Ent, outbox: p.Outbox}
}

// Record writes e inside tx.
func (r *Recorder) Record(ctx context.Context, tx *ent.Tx, e Event) (*ent.AuditEvent, error) {
	md := e.Metadata
	if md == nil {
		md = map[string]any{}
	}
	rec, err := tx.AuditEvent.Create().
		SetNillableActorID(e.ActorID).
		SetProjectID(e.ProjectID).
		SetAction(e.Action).
		SetNillableIPHash(r.IPHash(e.ProjectID, e.Origin.ClientIP)).
		SetNillableUserAgent(e.Origin.UserAgent).
		SetMetadata(md).
		Save(ctx)
	if err != nil || r.outbox == nil {
		return rec, err
	}
	return rec, r.outbox.Append(ctx, tx, rec)
}

// IPHash is the hex HMAC-SHA256 of a client address, or nil when there was none.
// Keyed, so the stored hash cannot be reversed by hashing the IPv4 space; keyed per
// project too (SPEC §9a), so one project's admins cannot tell whether an address in their
// trail also acts in another project's.
func (r *Recorder) IPHash(projectID string, clientIP *string) *string {
	if clientIP == nil {
		return nil
	}
	h := r.keys.MAC(ipPurpose+"/"+projectID, []byte(*clientIP))
	return &h
}

// View is one audit record as the audit endpoint shows it (SPEC §7).
type View struct {
	ID        string         `json:"id"`
	ActorID   *string        `json:"actorId"`
	ProjectID string         `json:"projectId"`
	Action    string         `json:"action"`
	IPHash    *string        `json:"ipHash"`
	UserAgent *string        `json:"userAgent"`
	Metadata  map[string]any `json:"metadata"`
	CreatedAt time.Time      `json:"createdAt"`
}

// Page is one page of a project's trail, newest first. NextBefore is the cursor of the
// next page, nil on the last.
type Page struct {
	Events     []View  `json:"events"`
	NextBefore *string `json:"nextBefore"`
}

// List returns up to limit records of projectID older than the record before (all when
// before is ""). Ids sort by creation, so the id is the cursor.
func (r *Recorder) List(ctx context.Context, projectID string, limit int, before string) (Page, error) {
	q := r.ent.AuditEvent.Query().Where(auditevent.ProjectID(projectID))
	if before != "" {
		q = q.Where(auditevent.IDLT(before))
	}
	// One extra row tells whether another page follows.
	rows, err := q.Order(auditevent.ByID(sql.OrderDesc())).Limit(limit + 1).All(ctx)
	if err != nil {
		return Page{}, err
	}
	rows, next := page.Cut(rows, limit, func(e *ent.AuditEvent) string { return e.ID })
	p := Page{Events: make([]View, 0, len(rows)), NextBefore: next}
	for _, e := range rows {
		p.Events = append(p.Events, View{
			ID: e.ID, ActorID: e.ActorID, ProjectID: e.ProjectID, Action: e.Action, IPHash: e.IPHash,
			UserAgent: e.UserAgent, Metadata: e.Metadata, CreatedAt: e.CreatedAt.UTC(),
		})
	}
	return p, nil
}
