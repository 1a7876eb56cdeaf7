package authorize

import (
	"context"
	"log/slog"
	"time"

	"go.uber.org/fx"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/grantrefreshtoken"
	"github.com/authcore/authcore/ent/oauthauthorization"
	"github.com/authcore/authcore/ent/oauthcode"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/database"
)

// pruneEvery is how often expired requests, codes and refresh tokens are deleted.
const pruneEvery = 10 * time.Minute

// Pruner deletes what can no longer be presented: authorization requests and codes past
// their expiry (a replayed code is recognised only while it could still be valid, and it
// could not be once expired), and refresh tokens past their idle or absolute end.
type Pruner struct {
	ent   *ent.Client
	clock clock.Clock
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
	return a + c + r, err
}

func startPruner(lc fx.Lifecycle, c *ent.Client, clk clock.Clock, log *slog.Logger) *Pruner {
	p := &Pruner{ent: c, clock: clk}
	database.PruneEvery(lc, log, "expired OAuth authorizations, codes and refresh tokens", pruneEvery, func(ctx context.Context) error {
		_, err := p.Prune(ctx)
		return err
	})
	return p
}
