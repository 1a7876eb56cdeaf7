package bearer

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"go.uber.org/fx"

	"github.com/authcore/authcore/platform/database"
)

// FlushEvery is how often recorded uses are written.
const FlushEvery = 5 * time.Second

// batchWriter stores a batch: credential id → newest use.
type batchWriter func(ctx context.Context, batch map[string]time.Time) error

// batcher keeps "last used at" writes off the request path: verifications only record the
// time in memory, and a background loop writes each credential's newest time in one
// transaction every few seconds, and once more at shutdown.
type batcher struct {
	kind  string
	write batchWriter
	log   *slog.Logger

	mu      sync.Mutex
	pending map[string]time.Time

	stop chan struct{}
	done chan struct{}
}

// newBatcher ties the batcher's loop to the lifecycle: the last flush happens in OnStop,
// after the HTTP server has drained (fx stops in reverse start order).
func newBatcher(lc fx.Lifecycle, log *slog.Logger, kind string, write batchWriter) *batcher {
	b := &batcher{kind: kind, write: write, log: log, pending: map[string]time.Time{}, stop: make(chan struct{}), done: make(chan struct{})}
	lc.Append(fx.Hook{
		OnStart: func(context.Context) error { go b.loop(); return nil },
		OnStop: func(ctx context.Context) error {
			close(b.stop)
			<-b.done
			return b.flush(ctx)
		},
	})
	return b
}

// touch records a use of id at t. Cheap: a map write under a mutex.
func (b *batcher) touch(id string, t time.Time) {
	b.mu.Lock()
	if prev, ok := b.pending[id]; !ok || t.After(prev) {
		b.pending[id] = t
	}
	b.mu.Unlock()
}

// flush writes what was recorded since the last flush.
func (b *batcher) flush(ctx context.Context) error {
	b.mu.Lock()
	batch := b.pending
	b.pending = make(map[string]time.Time, len(batch))
	b.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	if err := b.write(ctx, batch); err != nil {
		// Put them back so the next flush retries; newer uses win.
		for id, t := range batch {
			b.touch(id, t)
		}
		return err
	}
	return nil
}

func (b *batcher) loop() {
	defer close(b.done)
	t := time.NewTicker(FlushEvery)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(database.Background(context.Background()), 10*time.Second)
			if err := b.flush(ctx); err != nil {
				b.log.Warn("writing last-used times failed; will retry", "credential", b.kind, "error", err)
			}
			cancel()
		}
	}
}
