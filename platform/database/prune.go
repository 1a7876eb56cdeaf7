package database

import (
	"context"
	"log/slog"
	"time"

	"go.uber.org/fx"
)

// PruneEvery runs prune every period from the app's start to its stop, each run bounded
// to 30 s. A failure is logged under what and the next tick tries again: pruning deletes
// only rows nobody can present any more, so a late run costs space, not correctness.
func PruneEvery(lc fx.Lifecycle, log *slog.Logger, what string, period time.Duration, prune func(context.Context) error) {
	stop, done := make(chan struct{}), make(chan struct{})
	loop := func() {
		defer close(done)
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				ctx, cancel := context.WithTimeout(Background(context.Background()), 30*time.Second)
				if err := prune(ctx); err != nil {
					log.Warn("pruning "+what+" failed", "error", err)
				}
				cancel()
			}
		}
	}
	lc.Append(fx.StartStopHook(func() { go loop() }, func(ctx context.Context) {
		close(stop)
		select {
		case <-done:
		case <-ctx.Done():
		}
	}))
}
