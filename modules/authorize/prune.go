package authorize

import (
	"context"
	"log/slog"
	"time"

	"entgo.io/ent/dialect/sql"
	"go.uber.org/fx"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/deviceauthorization"
	"github.com/authcore/authcore/ent/grantrefreshtoken"
	"github.com/authcore/authcore/ent/oauthauthorization"
	"github.com/authcore/authcore/ent/oauthclient"
	"github.com/authcore/authcore/ent/oauthcode"
	"github.com/authcore/authcore/ent/oauthgrant"
	"github.com/authcore/authcore/ent/registrationtoken"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/invalidation"
)

// pruneEvery is how often expired requests, codes and refresh tokens are deleted.
const pruneEvery = 10 * time.Minute

// Pruner deletes what can no longer be presented: authorization requests and codes past
// their expiry (a replayed code is recognised only while it could still be valid, and it
// could not be once expired), and refresh tokens past their idle or absolute end. It
// drops the sealed answers rotations keep for the refresh grace once it is over, and
// registered clients nobody used for clientIdle (SPEC §9b): registration is open to
// anyone, so its rows must not pile up. Device authorizations and initial access tokens
// go a while after they expire (expiredKept): long enough that a late poll still hears
// expired_token and an admin's list still shows the token as expired.
type Pruner struct {
	ent   *ent.Client
	clock clock.Clock
	bus   invalidation.Bus
}

// Prune deletes the expired rows and says how many.
func (p *Pruner) Prune(ctx context.Context) (int, error) {
	now := p.clock.Now()
	a, err := p.ent.OAuthAuthorization.Delete().Where(oauthauthorization.ExpiresAtLT(now)).Exec(ctx)
	if err != nil {
		return 0, err
	}
	c, err := p.ent.OAuthCode.Delete().Where(oauthcode.ExpiresAtLT(now)).Exec(ctx)
	if err != nil {
		return a, err
	}
	r, err := p.ent.GrantRefreshToken.Delete().Where(grantrefreshtoken.ExpiresAtLT(now)).Exec(ctx)
	if err != nil {
		return a + c, err
	}
	if err := p.ent.GrantRefreshToken.Update().Where(grantrefreshtoken.SuccessorNotNil(), grantrefreshtoken.RotatedAtLT(now.Add(-refreshGrace))).
		ClearSuccessor().Exec(ctx); err != nil {
		return a + c + r, err
	}
	cut := now.Add(-clientIdle)
	k := 0
	err = database.WithTx(ctx, p.ent, func(tx *ent.Tx) error {
		ids, err := tx.OAuthClient.Query().Where(oauthclient.CreatedAtLT(cut),
			oauthclient.Or(oauthclient.LastUsedAtIsNil(), oauthclient.LastUsedAtLT(cut)), withoutLiveGrant,
			// A project's app (SPEC §25) is its admins' to delete, however idle.
			oauthclient.Or(oauthclient.ProjectIDIsNil(), oauthclient.ProjectID(""))).IDs(ctx)
		if err != nil || len(ids) == 0 {
			return err
		}
		if k, err = tx.OAuthClient.Delete().Where(oauthclient.IDIn(ids...)).Exec(ctx); err != nil {
			return err
		}
		for _, id := range ids { // every replica forgets them as this commits
			if err := p.bus.Publish(ctx, tx, clientTopic, id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return a + c + r + k, err
	}
	old := now.Add(-expiredKept)
	d, err := p.ent.DeviceAuthorization.Delete().Where(deviceauthorization.ExpiresAtLT(old)).Exec(ctx)
	if err != nil {
		return a + c + r + k, err
	}
	t, err := p.ent.RegistrationToken.Delete().Where(registrationtoken.ExpiresAtLT(old)).Exec(ctx)
	return a + c + r + k + d + t, err
}

// expiredKept is how long an expired device authorization or initial access token stays.
const expiredKept = 24 * time.Hour

// clientTopic drops a registered client from every replica's cache (clients.registered).
const clientTopic = "oauth_client"

// clientIdle is how long a registered client may go without a code before it is pruned,
// unless a person's grant to it is live.
const clientIdle = 30 * 24 * time.Hour

// withoutLiveGrant keeps clients that a live grant names.
func withoutLiveGrant(s *sql.Selector) {
	g := sql.Table(oauthgrant.Table)
	s.Where(sql.NotExists(sql.Select(g.C(oauthgrant.FieldID)).From(g).
		Where(sql.And(sql.ColumnsEQ(g.C(oauthgrant.FieldClientID), s.C(oauthclient.FieldID)), sql.IsNull(g.C(oauthgrant.FieldRevokedAt))))))
}

func startPruner(lc fx.Lifecycle, c *ent.Client, clk clock.Clock, log *slog.Logger, bus invalidation.Bus) *Pruner {
	p := &Pruner{ent: c, clock: clk, bus: bus}
	database.PruneEvery(lc, log, "expired OAuth authorizations, codes, refresh tokens and idle clients", pruneEvery, func(ctx context.Context) error {
		_, err := p.Prune(ctx)
		return err
	})
	return p
}
