package session

import (
	"context"
	"time"

	"entgo.io/ent/dialect/sql"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/predicate"
	entsession "github.com/authcore/authcore/ent/session"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/identity"
)

// Session administration (seed 4.3) for a project admin. Every query is scoped to what
// that admin may see (SPEC §3, §9): sessions of the project's tenant, its end users, and
// nothing else. A dashboard user's sessions, members' included, are theirs alone
// (session/mine): adding someone to a project must give its admins no power over them.
// Anything out of scope is treated as absent, never as an error.

// admin is the engine as the session administration routes see it.
type admin struct{ e *Engine }

// Recent is one element of session/recent.
type Recent struct {
	SessionHandle string    `json:"sessionHandle"`
	UserID        string    `json:"userId"`
	TenantID      string    `json:"tenantId"`
	CreatedAt     time.Time `json:"createdAt"`
	LastActiveAt  time.Time `json:"lastActiveAt"`
	ExpiresAt     time.Time `json:"expiresAt"`
	UserAgent     *string   `json:"userAgent"`
	IPHash        *string   `json:"ipHash"`
	// How and when the user last authenticated (SPEC §17).
	AMR      []string  `json:"amr"`
	AuthTime time.Time `json:"authTime"`
}

// scope is the predicate for sessions a project's admin may act on: its tenant's.
func scope(projectID string) predicate.Session { return entsession.TenantID(projectID) }

func (a admin) live() []predicate.Session {
	return []predicate.Session{entsession.RevokedAtIsNil(), entsession.ExpiresAtGT(a.e.clock.Now())}
}

// Handles lists the live session handles of a user, within the admin's scope.
func (a admin) Handles(ctx context.Context, projectID, userID string) ([]string, error) {
	ids, err := a.e.ent.Session.Query().
		Where(entsession.UserID(userID), scope(projectID)).
		Where(a.live()...).
		Order(entsession.ByID()).
		IDs(ctx)
	if ids == nil {
		ids = []string{}
	}
	return ids, err
}

// Recent lists the newest live sessions of a tenant (when given) within the admin's scope.
func (a admin) Recent(ctx context.Context, projectID string, tenantID *string, limit int) ([]Recent, error) {
	q := a.e.ent.Session.Query().Where(scope(projectID))
	if tenantID != nil {
		q = q.Where(entsession.TenantID(*tenantID))
	}
	return a.newestLive(ctx, q.Limit(limit))
}

// newestLive runs q for live sessions, newest first, as recent-session elements.
func (a admin) newestLive(ctx context.Context, q *ent.SessionQuery) ([]Recent, error) {
	rows, err := q.Where(a.live()...).Order(entsession.ByCreatedAt(sql.OrderDesc()), entsession.ByID(sql.OrderDesc())).All(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Recent, 0, len(rows))
	for _, s := range rows {
		out = append(out, recentOf(s))
	}
	return out, nil
}

func recentOf(s *ent.Session) Recent {
	return Recent{
		SessionHandle: s.ID, UserID: s.UserID, TenantID: s.TenantID,
		CreatedAt: s.CreatedAt.UTC(), LastActiveAt: s.LastActiveAt.UTC(), ExpiresAt: s.ExpiresAt.UTC(),
		UserAgent: s.UserAgent, IPHash: s.IPHash, AMR: amrOf(s.Amr), AuthTime: authTimeOf(s).UTC(),
	}
}

// AdminRevoke revokes one session within the admin's scope: 1 when this call revoked it,
// 0 when it was out of scope, unknown or already revoked.
func (a admin) AdminRevoke(ctx context.Context, projectID, sid, actorID string, origin audit.Origin) (int, error) {
	return a.e.revokeWhere(ctx, []predicate.Session{entsession.ID(sid), scope(projectID)}, func(n int) audit.Event {
		return audit.Event{ActorID: &actorID, ProjectID: projectID, Action: "session.revoke", Metadata: map[string]any{"sessionHandle": sid}, Origin: origin}
	})
}

// AdminRevokeUser revokes every live session of a user within the admin's scope.
func (a admin) AdminRevokeUser(ctx context.Context, projectID, userID, actorID string, origin audit.Origin) (int, error) {
	return a.e.revokeWhere(ctx, []predicate.Session{entsession.UserID(userID), scope(projectID)}, func(n int) audit.Event {
		return audit.Event{ActorID: &actorID, ProjectID: projectID, Action: "session.revoke_all", Metadata: map[string]any{"userId": userID, "revoked": n}, Origin: origin}
	})
}

// revokeWhere revokes the unrevoked sessions matching where and, when it revoked any and
// event is given, writes the audit record in the same transaction. The invalidation of
// every revoked session commits with it (SPEC §9): no replica can miss a revoke that
// returned success.
func (e *Engine) revokeWhere(ctx context.Context, where []predicate.Session, event func(n int) audit.Event) (int, error) {
	n := 0
	err := database.WithTx(ctx, e.ent, func(tx *ent.Tx) error {
		var err error
		if n, err = revokeIn(ctx, e, tx, where); err != nil || n == 0 || event == nil {
			return err
		}
		_, err = e.audit.Record(ctx, tx, event(n))
		return err
	})
	if err != nil {
		return 0, err
	}
	e.metrics.Revoked.WithLabelValues("session", "").Add(float64(n))
	return n, nil
}

// revokeIn revokes, in tx, the unrevoked sessions matching where, invalidates each on
// every replica as tx commits and tells the endings (back-channel logout). A function, not
// a method: the engine is at its methods' limit.
func revokeIn(ctx context.Context, e *Engine, tx *ent.Tx, where []predicate.Session) (int, error) {
	ids, err := tx.Session.Query().Where(where...).Where(entsession.RevokedAtIsNil()).IDs(ctx)
	if err != nil || len(ids) == 0 {
		return 0, err
	}
	n, err := tx.Session.Update().Where(entsession.IDIn(ids...), entsession.RevokedAtIsNil()).SetRevokedAt(e.clock.Now()).Save(ctx)
	if err != nil || n == 0 {
		return 0, err
	}
	// Every id is invalidated: the few a concurrent revoke got first are already
	// dead, and forgetting them again costs nothing.
	for _, id := range ids {
		if err := e.bus.Publish(ctx, tx, topicSessions, id); err != nil {
			return 0, err
		}
	}
	for _, end := range e.endings {
		if err := end.SessionsEnded(ctx, tx, ids); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// personSessions ends a deprovisioned person's sessions in the deprovisioning's
// transaction (SPEC §27), with back-channel logout to every app they signed in to.
type personSessions struct{ e *Engine }

func (p personSessions) EndPerson(ctx context.Context, tx *ent.Tx, end identity.PersonEnd) (identity.PersonEnded, error) {
	n, err := revokeIn(ctx, p.e, tx, []predicate.Session{entsession.UserID(end.UserID)})
	if err != nil {
		return identity.PersonEnded{}, err
	}
	return identity.PersonEnded{Kind: "sessions", Ended: n, After: func(context.Context) {
		p.e.metrics.Revoked.WithLabelValues("session", "").Add(float64(n))
	}}, nil
}

// Mine lists a user's own live sessions, newest first (SPEC §3 "Own sessions").
func (a admin) Mine(ctx context.Context, userID string) ([]Recent, error) {
	return a.newestLive(ctx, a.e.ent.Session.Query().Where(entsession.UserID(userID)))
}

// RevokeMine revokes one of the user's own sessions: 1 when this call revoked it, 0 when
// it is another user's, unknown or already revoked (all alike, so nothing is revealed).
func (a admin) RevokeMine(ctx context.Context, userID, sid string) (int, error) {
	return a.e.revokeWhere(ctx, []predicate.Session{entsession.ID(sid), entsession.UserID(userID)}, nil)
}
