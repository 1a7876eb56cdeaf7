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
	write batchWriter

	mu      sync.Mutex
	pending map[string]time.Time
}

// newBatcher ties the batcher to the lifecycle: flushed every FlushEvery and once more at
// stop (database.FlushEvery).
func newBatcher(lc fx.Lifecycle, log *slog.Logger, kind string, write batchWriter) *batcher {
	b := &batcher{write: write, pending: map[string]time.Time{}}
	database.FlushEvery(lc, log, "last-used times of "+kind, FlushEvery, b.flush)
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
