// Package usage counts every verification per credential, minute and outcome (SPEC §19),
// off the request path, and serves the counts: as series for the console's charts, and as
// 24-hour totals for the lists of agent tokens and badges.
package usage

import (
	"context"
	"log/slog"
	"time"

	"go.uber.org/fx"

	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/usage"
)

// Module provides the Counter and the Reader, and serves GET /v1/projects/{id}/usage.
var Module = fx.Module("usage",
	fx.Provide(
		newRecorder,
		fx.Annotate(func(r *Recorder) *Recorder { return r }, fx.As(new(usage.Counter))),
		fx.Annotate(func(r *Recorder) *Recorder { return r }, fx.As(new(usage.Reader))),
	),
	fx.Invoke(func(lc fx.Lifecycle, r *Recorder, log *slog.Logger) {
		database.PruneEvery(lc, log, "usage counts (roll-up)", time.Hour, func(ctx context.Context) error {
			_, err := r.RollUp(ctx)
			return err
		})
	}),
	httpserver.AsModuleRoutes("usage", func(r *Recorder, g *guard.Guard) []httpserver.Route { return (&handler{rec: r, guard: g}).routes() }),
)
