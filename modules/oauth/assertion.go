package oauth

import (
	"context"
	"log/slog"
	"time"

	"go.uber.org/fx"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/usedassertion"
	"github.com/authcore/authcore/platform/assertion"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/database"
)

// replay is assertion.Replay over the store: an accepted assertion's issuer and jti are
// inserted under a unique index, so of two replicas accepting the same assertion at once
// one insert fails, and that one refuses it.
type replay struct {
	ent   *ent.Client
	clock clock.Clock
}

var _ assertion.Replay = (*replay)(nil)

func newReplay(lc fx.Lifecycle, c *ent.Client, clk clock.Clock, log *slog.Logger) *replay {
	r := &replay{ent: c, clock: clk}
	database.PruneEvery(lc, log, "expired assertion ids", 10*time.Minute, func(ctx context.Context) error {
		_, err := c.UsedAssertion.Delete().Where(usedassertion.ExpiresAtLT(clk.Now())).Exec(ctx)
		return err
	})
	return r
}

// Spend records jti of issuer until until; false when it is recorded already.
func (r *replay) Spend(ctx context.Context, issuer, jti string, until time.Time) (bool, error) {
	err := r.ent.UsedAssertion.Create().SetIssuer(issuer).SetJti(jti).SetExpiresAt(until).Exec(ctx)
	if ent.IsConstraintError(err) {
		return false, nil
	}
	return err == nil, err
}
