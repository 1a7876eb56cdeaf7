// Package audit records who did what to a project (SPEC §6–7). A record is written inside
// the caller's transaction, so a change and its record commit together or not at all.
// It must not decide what is audited: callers name the action and its metadata.
package audit

import (
	"context"
	"strings"
	"time"

	"entgo.io/ent/dialect/sql"

	"go.uber.org/fx"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/auditevent"
	"github.com/authcore/authcore/ent/schema"
	"github.com/authcore/authcore/platform/logging"
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

// ActorType is what kind of actor an event's actor id names (SPEC §28).
type ActorType string

// The actors of SPEC §28.
const (
	ActorUser          ActorType = "user"
	ActorAgentToken    ActorType = "agent_token"
	ActorClient        ActorType = "client"
	ActorSetupLink     ActorType = "setup_link"
	ActorSCIMDirectory ActorType = "scim_directory"
	ActorSystem        ActorType = "system"
)

// ActorTypes are every actor type, in the order the API documents them.
var ActorTypes = []ActorType{ActorUser, ActorAgentToken, ActorClient, ActorSetupLink, ActorSCIMDirectory, ActorSystem}

// ClientActor is the actor type of an OAuth client id: an agent token acting as a client
// of its project (SPEC §23) is an agent_token, any other a client.
func ClientActor(clientID string) ActorType {
	if strings.HasPrefix(clientID, schema.AgentTokenIDPrefix) {
		return ActorAgentToken
	}
	return ActorClient
}

// Delegation is the act of an event whose actor acts for a person (SPEC §28): RFC 8693's
// claims as a token issued for the act would carry them, sub the person and act the
// actors, the one acting now outermost.
func Delegation(person string, actors ...string) map[string]any {
	out := map[string]any{"sub": person}
	at := out
	for _, a := range actors {
		next := map[string]any{"sub": a}
		at["act"] = next
		at = next
	}
	return out
}

// Event is one record to write. The request id comes from ctx (the HTTP layer's, which
// the access log shows too), so no caller passes it.
type Event struct {
	ActorID *string
	// ActorType is what ActorID names. Empty is a user when ActorID is set (every route
	// behind a session), else the system (a background job, an expiry): only the callers
	// whose actor is something else name it.
	ActorType ActorType
	// Act is the delegation when an agent acts for a person (Delegation), else nil.
	Act       map[string]any
	OrgID     *string
	ProjectID string
	Action    string
	Metadata  map[string]any
	Origin    Origin
}

// actorType is e's actor type, defaulted as Event says.
func (e Event) actorType() string {
	switch {
	case e.ActorType != "":
		return string(e.ActorType)
	case e.ActorID != nil:
		return string(ActorUser)
	}
	return string(ActorSystem)
}

// Recorder writes audit records and pages through them.
type Recorder struct {
	keys    *secret.Keyring
	ent     *ent.Client
	outbox  Outbox
	chainer Committed
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
	// Chainer, when there is one, is told as each record commits.
	Chainer Committed `optional:"true"`
}

// Committed is told that a record committed in this process: the hash chain's chainer
// (platform/audit/chainer) links it at once instead of on its next look.
type Committed interface{ Nudge() }

// NewRecorder returns a recorder hashing client addresses under the server's key.
// ipPurpose keys the audit ipHash (of the client address); sessions use another key, so the
// two kinds of hash cannot be compared (SPEC §9).
const ipPurpose = "audit-forwarded-for"

func NewRecorder(p Params) *Recorder {
	return &Recorder{keys: p.Keys, ent: p.Ent, outbox: p.Outbox, chainer: p.Chainer}
}

// Record writes e inside tx.
func (r *Recorder) Record(ctx context.Context, tx *ent.Tx, e Event) (*ent.AuditEvent, error) {
	md := e.Metadata
	if md == nil {
		md = map[string]any{}
	}
	var requestID *string
	if id := logging.RequestID(ctx); id != "" {
		requestID = &id
	}
	c := tx.AuditEvent.Create().
		SetNillableActorID(e.ActorID).
		SetActorType(e.actorType()).
		SetNillableOrgID(e.OrgID).
		SetNillableRequestID(requestID).
		SetProjectID(e.ProjectID).
		SetAction(e.Action).
		SetNillableIPHash(r.IPHash(e.ProjectID, e.Origin.ClientIP)).
		SetNillableUserAgent(e.Origin.UserAgent).
		SetMetadata(md)
	if e.Act != nil {
		c = c.SetAct(e.Act)
	}
	rec, err := c.Save(ctx)
	if err != nil {
		return rec, err
	}
	if r.chainer != nil {
		// The chainer links it as soon as it is visible (a stream's p99 from commit to
		// receipt); other replicas' chainers find it on their next look.
		tx.OnCommit(func(next ent.Committer) ent.Committer {
			return ent.CommitFunc(func(ctx context.Context, tx *ent.Tx) error {
				err := next.Commit(ctx, tx)
				if err == nil {
					r.chainer.Nudge()
				}
				return err
			})
		})
	}
	if r.outbox == nil {
		return rec, nil
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
	ActorType *string        `json:"actorType"`
	Act       map[string]any `json:"act"`
	ProjectID string         `json:"projectId"`
	OrgID     *string        `json:"orgId"`
	Action    string         `json:"action"`
	RequestID *string        `json:"requestId"`
	IPHash    *string        `json:"ipHash"`
	UserAgent *string        `json:"userAgent"`
	Metadata  map[string]any `json:"metadata"`
	CreatedAt time.Time      `json:"createdAt"`
}

// ViewOf is e as the audit endpoint shows it.
func ViewOf(e *ent.AuditEvent) View {
	return View{
		ID: e.ID, ActorID: e.ActorID, ActorType: e.ActorType, Act: e.Act, ProjectID: e.ProjectID, OrgID: e.OrgID, Action: e.Action,
		RequestID: e.RequestID, IPHash: e.IPHash, UserAgent: e.UserAgent, Metadata: e.Metadata, CreatedAt: e.CreatedAt.UTC(),
	}
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
		p.Events = append(p.Events, ViewOf(e))
	}
	return p, nil
}
