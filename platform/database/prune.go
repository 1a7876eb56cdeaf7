package database

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"go.uber.org/fx"
)

// PruneEvery runs prune every period from the app's start to its stop, each run bounded
// to 30 s. A failure is logged under what and the next tick tries again: pruning deletes
// only rows nobody can present any more, so a late run costs space, not correctness.
func PruneEvery(lc fx.Lifecycle, log *slog.Logger, what string, period time.Duration, prune func(context.Context) error) {
	every(lc, log, "pruning "+what+" failed", period, 30*time.Second, prune, false)
}

// FlushEvery runs flush every period, each run bounded to 10 s, and once more as the app
// stops — after the HTTP server drained, since fx stops in reverse order — so what a
// batcher holds in memory is written before the store closes. A failure is logged under
// what; flush keeps what it could not write for its next run.
func FlushEvery(lc fx.Lifecycle, log *slog.Logger, what string, period time.Duration, flush func(context.Context) error) {
	every(lc, log, "writing "+what+" failed; will retry", period, 10*time.Second, flush, true)
}

// every is the loop both share: queries marked Background, a ticker, a clean stop.
func every(lc fx.Lifecycle, log *slog.Logger, failed string, period, timeout time.Duration, fn func(context.Context) error, atStop bool) {
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
				ctx, cancel := context.WithTimeout(Background(context.Background()), timeout)
				if err := fn(ctx); err != nil {
					log.Warn(failed, "error", err)
				}
				cancel()
			}
		}
	}
	lc.Append(fx.Hook{
		OnStart: func(context.Context) error { go loop(); return nil },
		OnStop: func(ctx context.Context) error {
			close(stop)
			select {
			case <-done:
			case <-ctx.Done():
				return ctx.Err()
			}
			if atStop {
				return fn(ctx)
			}
			return nil
		},
	})
}

// Wake is a background loop's doorbell: a ring runs the loop's work now rather than at
// its next tick. NewWake makes one.
type Wake chan struct{}

// NewWake is a doorbell that remembers one ring.
func NewWake() Wake { return make(Wake, 1) }

// Ring wakes the loop without waiting: a ring while one is pending is that ring.
func (w Wake) Ring() {
	select {
	case w <- struct{}{}:
	default:
	}
}

// RunWoken runs work from the app's start to its stop: at once, then every period and
// whenever wake rings. Its queries are a background loop's (Background). Stopping cancels
// work's context and waits for it as long as the stop allows. work reports its own
// failures: it knows what they mean.
func RunWoken(lc fx.Lifecycle, wake Wake, period time.Duration, work func(context.Context)) {
	ctx, cancel := context.WithCancel(Background(context.Background()))
	done := make(chan struct{})
	loop := func() {
		defer close(done)
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			work(ctx)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			case <-wake:
			}
		}
	}
	lc.Append(fx.Hook{
		OnStart: func(context.Context) error { go loop(); return nil },
		OnStop: func(stop context.Context) error {
			cancel()
			select {
			case <-done:
			case <-stop.Done():
			}
			return nil
		},
	})
}

// Drain claims items and sends those claimed at once, each on its own, until a claim finds
// nothing or ctx ends: the discipline of the outbox workers (webhook deliveries, audit
// streams). failed hears each send that failed while ctx was live.
func Drain[T any](ctx context.Context, claim func(context.Context) ([]T, error), send func(context.Context, T) error, failed func(T, error)) error {
	for ctx.Err() == nil {
		claimed, err := claim(ctx)
		if err != nil || len(claimed) == 0 {
			return err
		}
		var wg sync.WaitGroup
		for _, item := range claimed {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := send(ctx, item); err != nil && ctx.Err() == nil {
					failed(item, err)
				}
			}()
		}
		wg.Wait()
	}
	return nil
}
