// Package invalidation tells every replica that a cached credential changed (revoked,
// rotated). Publish is part of the transaction that makes the change: this process's
// subscribers hear it when that transaction commits, and other replicas sharing
// PostgreSQL through a NOTIFY delivered on the same commit, typically within milliseconds.
// On SQLite there is one process, so local delivery is all there is. It carries keys only,
// never a secret.
package invalidation

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/metrics"
)

// Channel is the PostgreSQL NOTIFY channel.
const Channel = "authcore_invalidate"

// Bus delivers invalidations to subscribers.
type Bus interface {
	// Publish invalidates key within topic as part of tx: here once tx commits, and on
	// other replicas through a NOTIFY that PostgreSQL delivers on that same commit. A
	// failed NOTIFY fails the transaction, so a change that committed is never missed.
	Publish(ctx context.Context, tx *ent.Tx, topic, key string) error
	// Subscribe calls fn(key) for each invalidation of topic, and fn("") when
	// invalidations may have been missed (the listener reconnected): drop everything.
	Subscribe(topic string, fn func(key string))
}

// Module provides the bus and runs the PostgreSQL listener.
var Module = fx.Module("invalidation",
	fx.Provide(fx.Annotate(New, fx.As(new(Bus)), fx.As(fx.Self()))),
	metrics.AsCollector(func(b *PG) prometheus.Collector { return b.heard }),
	fx.Invoke(func(lc fx.Lifecycle, b *PG) { lc.Append(fx.Hook{OnStart: b.Start, OnStop: b.Stop}) }),
)

// PG is the Bus over PostgreSQL LISTEN/NOTIFY (local-only without a pool).
type PG struct {
	pool  *pgxpool.Pool
	reads *database.Reads
	log   *slog.Logger
	heard prometheus.Counter

	mu   sync.RWMutex
	subs map[string][]func(string)

	stop chan struct{}
	done chan struct{}
	// listening is closed once LISTEN is in place (tests wait on it).
	listening     chan struct{}
	listeningOnce sync.Once
}

// New returns the bus for db.
func New(db *database.DB, reads *database.Reads, log *slog.Logger) *PG {
	heard := prometheus.NewCounter(prometheus.CounterOpts{Name: "authcore_invalidations_heard_total",
		Help: "Invalidation messages this process heard through PostgreSQL NOTIFY, its own included (each change goes out in two forms, see Publish)."})
	return &PG{pool: db.Pool, reads: reads, log: log, heard: heard,
		subs: map[string][]func(string){}, stop: make(chan struct{}), done: make(chan struct{}), listening: make(chan struct{})}
}

func (b *PG) Subscribe(topic string, fn func(string)) {
	b.mu.Lock()
	b.subs[topic] = append(b.subs[topic], fn)
	b.mu.Unlock()
}

// deliver fences key on the read replica before the caches drop it, so a lookup that
// misses after the drop cannot read a replica that has not replayed the change.
func (b *PG) deliver(topic, key string) {
	b.reads.Fence(topic, key)
	b.mu.RLock()
	fns := b.subs[topic]
	b.mu.RUnlock()
	for _, fn := range fns {
		fn(key)
	}
}

func (b *PG) deliverAll() {
	b.reads.FenceAll()
	b.mu.RLock()
	defer b.mu.RUnlock()
	for _, fns := range b.subs {
		for _, fn := range fns {
			fn("")
		}
	}
}

func (b *PG) Publish(ctx context.Context, tx *ent.Tx, topic, key string) error {
	if b.pool != nil {
		// The message carries the transaction's WAL position (SPEC §18) for whoever reads
		// the channel; processes fence by a later one (database.Reads). Processes of
		// releases before it read "topic\nkey" and would take the position for part of the
		// key, so during a rolling upgrade that form is sent too: hearing both costs a
		// second invalidation. It can go once no such process runs.
		if _, err := tx.ExecContext(ctx, "SELECT pg_notify($1, $2 || pg_current_wal_insert_lsn()::text), pg_notify($1, $3)",
			Channel, topic+"\n"+key+"\n", topic+"\n"+key); err != nil {
			return err
		}
	}
	// Local subscribers hear it after the commit: forgetting a credential before then
	// would let a lookup in between cache the state about to change.
	tx.OnCommit(func(next ent.Committer) ent.Committer {
		return ent.CommitFunc(func(ctx context.Context, tx *ent.Tx) error {
			err := next.Commit(ctx, tx)
			if err == nil {
				b.deliver(topic, key)
			}
			return err
		})
	})
	return nil
}

// Listening is closed once this replica receives notifications.
func (b *PG) Listening() <-chan struct{} { return b.listening }

// Start runs the listener in the background (PostgreSQL only).
func (b *PG) Start(context.Context) error {
	if b.pool == nil {
		close(b.done)
		b.listeningOnce.Do(func() { close(b.listening) })
		return nil
	}
	go b.listen()
	return nil
}

// Stop ends the listener.
func (b *PG) Stop(context.Context) error {
	close(b.stop)
	<-b.done
	return nil
}

func (b *PG) listen() {
	defer close(b.done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { <-b.stop; cancel() }()
	first := true
	for ctx.Err() == nil {
		err := b.listenOnce(ctx, first)
		first = false
		if ctx.Err() != nil {
			return
		}
		b.log.Warn("invalidation listener lost its connection; retrying", "error", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func (b *PG) listenOnce(ctx context.Context, first bool) error {
	conn, err := b.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	// The connection is in LISTEN mode for good; never hand it back to the pool.
	pc := conn.Hijack()
	defer pc.Close(context.Background())
	if _, err := pc.Exec(ctx, "LISTEN "+Channel); err != nil {
		return err
	}
	if !first {
		// Anything published while we were not listening is lost: drop all caches.
		b.deliverAll()
	} else {
		// Only now may the replica answer: a revocation committed before LISTEN was
		// never heard, so every key waits for the replica to pass this point.
		b.reads.FenceAll()
	}
	b.listeningOnce.Do(func() { close(b.listening) })
	for {
		n, err := pc.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		topic, key, ok := strings.Cut(n.Payload, "\n")
		key, _, _ = strings.Cut(key, "\n") // then the publisher's WAL position
		if ok {
			b.deliver(topic, key)
			b.heard.Inc()
		}
	}
}
