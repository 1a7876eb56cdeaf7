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
)

// Session administration (seed 4.3) for a project admin. Every query is scoped to what
// that admin may see (SPEC §3): sessions of the project's tenant, and sessions of the
// project's members. Anything else is treated as absent, never as an error.

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
}

// scope is the predicate for sessions a project's admin may act on.
func (e *Engine) scope(ctx context.Context, projectID string) (predicate.Session, error) {
	members, err := e.members.MemberIDs(ctx, projectID)
	if err != nil {
		return nil, err
	}
	if len(members) == 0 {
		return entsession.TenantID(projectID), nil
	}
	return entsession.Or(entsession.TenantID(projectID), entsession.UserIDIn(members...)), nil
}

func (e *Engine) live() []predicate.Session {
	return []predicate.Session{entsession.RevokedAtIsNil(), entsession.ExpiresAtGT(e.clock.Now())}
}

// Handles lists the live session handles of a user, within the admin's scope.
func (e *Engine) Handles(ctx context.Context, projectID, userID string) ([]string, error) {
	in, err := e.scope(ctx, projectID)
	if err != nil {
		return nil, err
	}
	ids, err := e.ent.Session.Query().
		Where(entsession.UserID(userID), in).
		Where(e.live()...).
		Order(entsession.ByID()).
		IDs(ctx)
	if ids == nil {
		ids = []string{}
	}
	return ids, err
}

// Recent lists the newest live sessions of a tenant (when given) within the admin's scope.
func (e *Engine) Recent(ctx context.Context, projectID string, tenantID *string, limit int) ([]Recent, error) {
	in, err := e.scope(ctx, projectID)
	if err != nil {
		return nil, err
	}
	q := e.ent.Session.Query().Where(in).Where(e.live()...)
	if tenantID != nil {
		q = q.Where(entsession.TenantID(*tenantID))
	}
	rows, err := q.Order(entsession.ByCreatedAt(sql.OrderDesc()), entsession.ByID(sql.OrderDesc())).Limit(limit).All(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Recent, 0, len(rows))
	for _, s := range rows {
		out = append(out, Recent{
			SessionHandle: s.ID, UserID: s.UserID, TenantID: s.TenantID,
			CreatedAt: s.CreatedAt.UTC(), LastActiveAt: s.LastActiveAt.UTC(), ExpiresAt: s.ExpiresAt.UTC(),
			UserAgent: s.UserAgent, IPHash: s.IPHash,
		})
	}
	return out, nil
}

// AdminRevoke revokes one session within the admin's scope: 1 when this call revoked it,
// 0 when it was out of scope, unknown or already revoked.
func (e *Engine) AdminRevoke(ctx context.Context, projectID, sid, actorID string, origin audit.Origin) (int, error) {
	in, err := e.scope(ctx, projectID)
	if err != nil {
		return 0, err
	}
	return e.revokeAudited(ctx, []predicate.Session{entsession.ID(sid), in}, func(n int) audit.Event {
		return audit.Event{ActorID: &actorID, ProjectID: projectID, Action: "session.revoke", Metadata: map[string]any{"sessionHandle": sid}, Origin: origin}
	})
}

// AdminRevokeUser revokes every live session of a user within the admin's scope.
func (e *Engine) AdminRevokeUser(ctx context.Context, projectID, userID, actorID string, origin audit.Origin) (int, error) {
	in, err := e.scope(ctx, projectID)
	if err != nil {
		return 0, err
	}
	return e.revokeAudited(ctx, []predicate.Session{entsession.UserID(userID), in}, func(n int) audit.Event {
		return audit.Event{ActorID: &actorID, ProjectID: projectID, Action: "session.revoke_all", Metadata: map[string]any{"userId": userID, "revoked": n}, Origin: origin}
	})
}

// revokeAudited revokes the live sessions matching where, and writes the audit record in
// the same transaction when it revoked any.
func (e *Engine) revokeAudited(ctx context.Context, where []predicate.Session, event func(n int) audit.Event) (int, error) {
	var ids []string
	n := 0
	err := database.WithTx(ctx, e.ent, func(tx *ent.Tx) error {
		var err error
		ids, err = tx.Session.Query().Where(where...).Where(entsession.RevokedAtIsNil()).IDs(ctx)
		if err != nil || len(ids) == 0 {
			return err
		}
		n, err = tx.Session.Update().Where(entsession.IDIn(ids...), entsession.RevokedAtIsNil()).SetRevokedAt(e.clock.Now()).Save(ctx)
		if err != nil || n == 0 {
			return err
		}
		_, err = e.audit.Record(ctx, tx, event(n))
		return err
	})
	if err != nil {
		return 0, err
	}
	// Every id is invalidated: the few a concurrent revoke got first are already dead,
	// and forgetting them again costs nothing.
	for _, id := range ids {
		e.bus.Publish(ctx, topicSessions, id)
	}
	e.metrics.Revoked.WithLabelValues("session", "").Add(float64(n))
	return n, nil
}
