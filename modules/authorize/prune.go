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
)

// pruneEvery is how often expired requests, codes and refresh tokens are deleted.
const pruneEvery = 10 * time.Minute

// Pruner deletes what can no longer be presented: authorization requests and codes past
// their expiry (a replayed code is recognised only while it could still be valid, and it
// could not be once expired), and refresh tokens past their idle or absolute end.
type Pruner struct {
	ent   *ent.Client
	clock clock.Clock
	log   *slog.Logger
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
	p := &Pruner{ent: c, clock: clk, log: log}
	stop, done := make(chan struct{}), make(chan struct{})
	lc.Append(fx.StartStopHook(func() { go p.loop(stop, done) }, func(ctx context.Context) {
		close(stop)
		select {
		case <-done:
		case <-ctx.Done():
		}
	}))
	return p
}

func (p *Pruner) loop(stop, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(pruneEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			if _, err := p.Prune(ctx); err != nil {
				p.log.Warn("pruning expired OAuth authorizations, codes and refresh tokens failed", "error", err)
			}
			cancel()
		}
	}
}
