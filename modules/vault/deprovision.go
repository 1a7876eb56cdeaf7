package vault

import (
	"context"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/vaultconnection"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/identity"
)

// personConnections ends a deprovisioned person's connections (SPEC §27) in the
// deprovisioning's transaction: their rows and sealed tokens go, and every replica
// forgets them as it commits; then each upstream is asked to revoke its grant, as a
// person's own revoke does.
type personConnections struct{ s *service }

// upstreamGrant is a connection's refresh token, to revoke at its provider.
type upstreamGrant struct{ providerID, connectionID, refresh string }

func (p personConnections) EndPerson(ctx context.Context, tx *ent.Tx, e identity.PersonEnd) (identity.PersonEnded, error) {
	s := p.s
	out := identity.PersonEnded{Kind: "vault_connections"}
	rows, err := tx.VaultConnection.Query().Where(vaultconnection.UserID(e.UserID)).All(ctx)
	if err != nil || len(rows) == 0 {
		return out, err
	}
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	if out.Ended, err = tx.VaultConnection.Delete().Where(vaultconnection.IDIn(ids...)).Exec(ctx); err != nil {
		return out, err
	}
	var actor *string
	if e.Actor != "" {
		actor = &e.Actor
	}
	var upstream []upstreamGrant
	for _, r := range rows {
		if _, err := s.audit.Record(ctx, tx, audit.Event{ActorID: actor, ActorType: e.ActorType, ProjectID: r.ProjectID, Action: actionRevoke, Origin: e.Origin,
			Metadata: map[string]any{"connectionId": r.ID, "providerId": r.ProviderID, "userId": r.UserID, "reason": "user_deprovisioned"}}); err != nil {
			return out, err
		}
		if err := s.bus.Publish(ctx, tx, topic, key(r.ProviderID, r.UserID)); err != nil {
			return out, err
		}
		// A connection whose tokens no longer open (a key retired) has nothing to revoke
		// upstream; its row goes all the same.
		if t, err := s.open(r); err == nil && t.RefreshToken != "" {
			upstream = append(upstream, upstreamGrant{providerID: r.ProviderID, connectionID: r.ID, refresh: t.RefreshToken})
		}
	}
	if len(upstream) > 0 {
		out.After = func(ctx context.Context) {
			for _, g := range upstream {
				// Revoking the refresh token ends the upstream's grant, its access tokens with it.
				if _, err := s.up.Revoke(ctx, g.providerID, g.refresh, "refresh_token"); err != nil {
					s.log.WarnContext(ctx, "upstream revocation failed; the connection is gone here",
						append([]any{"provider", g.providerID, "connection", g.connectionID}, failureAttrs(err)...)...)
				}
			}
		}
	}
	return out, nil
}
