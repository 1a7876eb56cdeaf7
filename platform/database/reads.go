package database

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	entsql "entgo.io/ent/dialect/sql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/prometheus/client_golang/prometheus"

	"entgo.io/ent/dialect"

	"github.com/authcore/authcore/ent"
)

// Handle is one store a lookup can read: the primary, or the read replica.
type Handle struct {
	Ent *ent.Client
	// Pool is set on PostgreSQL, for lookups that go through pgx directly.
	Pool *pgxpool.Pool
}

// ErrNoRow is what a lookup returns when nothing matched; ent's not-found error and pgx's
// ErrNoRows mean the same. From the replica it is never believed alone (SPEC §18): a
// credential minted a moment ago may not have reached it.
var ErrNoRow = errors.New("no row")

// IsNoRow reports whether err means a lookup matched nothing.
func IsNoRow(err error) bool {
	return errors.Is(err, ErrNoRow) || ent.IsNotFound(err) || errors.Is(err, pgx.ErrNoRows) || errors.Is(err, sql.ErrNoRows)
}

// Reads routes verification lookups (cache misses) between the primary and a streaming
// read replica so that the replica can never make a revoked credential pass (SPEC §18).
//
// Every revocation reaches this process as an invalidation of (topic, key). On hearing it,
// the key is fenced: until the replica has replayed past a primary WAL position known to
// follow the revoking commit, lookups of that key go to the primary. The position is the
// primary's flushed WAL read after the invalidation was heard, not the one the revoking
// transaction put in its message: that one precedes the transaction's commit record, and a
// standby shows the old row until it replays the commit record. A process that may have
// missed invalidations (its listener reconnected, or has not started) fences every key the
// same way. Lag past the limit, or a replica that fails, sends every lookup to the primary.
type Reads struct {
	primary Handle
	replica *Handle // nil: no replica, every lookup reads the primary
	maxLag  time.Duration
	log     *slog.Logger
	queries atomic.Int64 // SELECTs the replica served

	// replay is the replica's replayed WAL position at the last probe; refusal is why the
	// replica may not answer at all ("lag", "unreachable"), "" when it may.
	replay  atomic.Uint64
	refusal atomic.Value

	mu sync.RWMutex
	// fences[topic+"\n"+key] is the position the replica must reach before the key may be
	// read there; pending until a probe reads the primary's after the fence was set.
	fences map[string]fence
	// global fences every key: unheard until the listener is in place, pending after it
	// (re)connects until a probe resolves it.
	global fence
	// gen numbers fences, so a probe resolves only those set before it read the primary:
	// a key fenced again meanwhile waits for the next probe.
	gen uint64
	// samples are recent probes of the primary's position, oldest first: the lag is how
	// long ago the primary first had WAL the replica has not replayed.
	samples []sample

	stop chan struct{}
	done chan struct{}

	lag       prometheus.Gauge
	available prometheus.Gauge
	reads     *prometheus.CounterVec
	fallbacks *prometheus.CounterVec
	// The children the hot path bumps, resolved once.
	fromReplica, fromPrimary prometheus.Counter
	fellBack                 map[string]prometheus.Counter
}

// fence is a WAL position (or pending, or unheard) and the generation that set it.
type fence struct {
	lsn, gen uint64
}

type sample struct {
	at  time.Time
	lsn uint64
}

const (
	pending = math.MaxUint64
	// unheard is the global fence until the invalidation listener is in place: no probe
	// resolves it, FenceAll (called once it listens) turns it into pending.
	unheard = math.MaxUint64 - 1
	// probeEvery is how often the replica's replay position and the primary's are read:
	// also how long a newly fenced key reads the primary at least.
	probeEvery = 100 * time.Millisecond
	// maxFences bounds the per-key fences kept (about 100 bytes each).
	maxFences = 100_000
	// replicaTimeout bounds one lookup on the replica.
	replicaTimeout = time.Second
	// keepSamples bounds the lag history; a replica further behind reads as that far.
	keepSamples = 6000
)

// newReads returns the router; readURL "" means no replica.
func newReads(db *DB, readURL string, maxLag time.Duration, log *slog.Logger) (*Reads, error) {
	r := &Reads{
		primary: Handle{Ent: db.Ent, Pool: db.Pool},
		maxLag:  maxLag,
		log:     log,
		fences:  map[string]fence{},
		global:  fence{lsn: unheard},
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
		lag: prometheus.NewGauge(prometheus.GaugeOpts{Name: "authcore_replica_lag_seconds",
			Help: "How long ago the primary first had WAL the read replica has not replayed (0: caught up)."}),
		available: prometheus.NewGauge(prometheus.GaugeOpts{Name: "authcore_replica_usable",
			Help: "1 when the read replica answered the last probe within AUTHCORE_READ_MAX_LAG, else 0."}),
		reads: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "authcore_verification_reads_total",
			Help: "Verification lookups (cache misses) by the store that answered them."}, []string{"store"}),
		fallbacks: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "authcore_replica_fallbacks_total",
			Help: "Verification lookups sent to the primary although a replica is configured, by reason."}, []string{"reason"}),
	}
	r.refusal.Store("unreachable")
	r.fromReplica, r.fromPrimary = r.reads.WithLabelValues("replica"), r.reads.WithLabelValues("primary")
	r.fellBack = map[string]prometheus.Counter{}
	for _, reason := range []string{"lag", "unreachable", "fence", "not_found", "error"} {
		r.fellBack[reason] = r.fallbacks.WithLabelValues(reason)
	}
	if readURL == "" {
		close(r.done)
		return r, nil
	}
	// A dead replica costs a lookup no more than a second before it falls back to the
	// primary; after that failure every lookup goes straight there until a probe finds it.
	pcfg, err := poolConfig("AUTHCORE_DATABASE_READ_URL", readURL, time.Second, &r.queries)
	if err != nil {
		return nil, err
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), pcfg)
	if err != nil {
		return nil, fmt.Errorf("AUTHCORE_DATABASE_READ_URL: %v", err)
	}
	r.replica = &Handle{Pool: pool,
		Ent: ent.NewClient(ent.Driver(entsql.OpenDB(dialect.Postgres, stdlib.OpenDBFromPool(pool))))}
	return r, nil
}

// ReplicaQueries is how many SELECTs the replica served.
func (r *Reads) ReplicaQueries() int64 { return r.queries.Load() }

// Read runs a verification lookup of key (as the invalidation bus names it under topic) on
// the replica when that is safe, else on the primary. A replica that fails, or finds
// nothing, is asked no further: the primary answers.
func Read[T any](ctx context.Context, r *Reads, topic, key string, fn func(context.Context, Handle) (T, error)) (T, error) {
	if r.replica != nil {
		if reason := r.refuse(topic, key); reason != "" {
			r.fellBack[reason].Inc()
		} else {
			// A replica that accepted the connection but does not answer (a partition, a
			// stuck host) must not hold the request: past this, the primary answers.
			rctx, cancel := context.WithTimeout(ctx, replicaTimeout)
			v, err := fn(rctx, *r.replica)
			cancel()
			switch {
			case err == nil:
				r.fromReplica.Inc()
				return v, nil
			case ctx.Err() != nil:
				return v, err
			case IsNoRow(err):
				r.fellBack["not_found"].Inc()
			case IsUnavailable(err) || errors.Is(err, context.DeadlineExceeded):
				r.setRefusal("unreachable")
				r.fellBack["unreachable"].Inc()
				r.log.WarnContext(ctx, "read replica failed; reading the primary until it answers a probe", "error", err)
			default:
				r.fellBack["error"].Inc()
				r.log.WarnContext(ctx, "read replica lookup failed; read the primary", "error", err)
			}
		}
	}
	r.fromPrimary.Inc()
	return fn(ctx, r.primary)
}

// refuse says why the replica must not answer a lookup of key, or "" when it may.
func (r *Reads) refuse(topic, key string) string {
	if why := r.refusal.Load().(string); why != "" {
		return why
	}
	replay := r.replay.Load()
	r.mu.RLock()
	f, fenced := r.fences[topic+"\n"+key]
	g := r.global
	r.mu.RUnlock()
	if replay < g.lsn || (fenced && replay < f.lsn) {
		return "fence"
	}
	return ""
}

// Fence is told of an invalidation of key under topic, before the caches drop it: from now
// on the replica may answer for it only once it has replayed past what the primary has
// flushed by the next probe (which follows the revoking commit, since the invalidation is
// heard only after it).
func (r *Reads) Fence(topic, key string) {
	if r.replica == nil {
		return
	}
	r.mu.Lock()
	r.gen++
	if len(r.fences) >= maxFences {
		// A replica down through a mass revocation would grow the map without bound:
		// one fence on every key is as safe, and lifts as soon.
		clear(r.fences)
		if r.global.lsn != unheard {
			r.global = fence{lsn: pending, gen: r.gen}
		}
	} else {
		r.fences[topic+"\n"+key] = fence{lsn: pending, gen: r.gen}
	}
	r.mu.Unlock()
}

// FenceAll fences every key: invalidations may have been missed.
func (r *Reads) FenceAll() {
	if r.replica == nil {
		return
	}
	r.mu.Lock()
	r.gen++
	r.global = fence{lsn: pending, gen: r.gen}
	r.mu.Unlock()
}

// Start probes the replica in the background. A replica that is down at start does not
// stop the process (or its readiness): lookups read the primary until it answers.
func (r *Reads) Start(context.Context) error {
	if r.replica != nil {
		go r.probeLoop()
	}
	return nil
}

// Stop ends the probes and closes the replica's pool.
func (r *Reads) Stop(context.Context) error {
	if r.replica == nil {
		return nil
	}
	close(r.stop)
	<-r.done
	err := r.replica.Ent.Close()
	r.replica.Pool.Close()
	return err
}

func (r *Reads) probeLoop() {
	defer close(r.done)
	t := time.NewTicker(probeEvery)
	defer t.Stop()
	for {
		r.probe()
		select {
		case <-r.stop:
			return
		case <-t.C:
		}
	}
}

// lsnQuery reads a WAL position as a number (pg_lsn minus 0/0 is its byte offset).
const (
	primaryLSN = "SELECT (pg_current_wal_flush_lsn() - '0/0'::pg_lsn)::bigint"
	// On a server that is not in recovery there is nothing to replay: it is as current as
	// its own WAL (READ_URL naming the primary itself is consistent, if pointless).
	replicaLSN = "SELECT (COALESCE(pg_last_wal_replay_lsn(), pg_current_wal_flush_lsn()) - '0/0'::pg_lsn)::bigint"
)

func (r *Reads) probe() {
	ctx, cancel := context.WithTimeout(Background(context.Background()), time.Second)
	defer cancel()

	// Fences set before the primary's position is read are resolved with it: it follows
	// the commits they stand for. Ones set meanwhile wait for the next probe.
	waiting := r.pendingFences()
	var p int64
	if err := r.primary.Pool.QueryRow(ctx, primaryLSN).Scan(&p); err == nil {
		r.resolve(waiting, uint64(p), time.Now())
	}

	var rep int64
	if err := r.replica.Pool.QueryRow(ctx, replicaLSN).Scan(&rep); err != nil {
		if r.setRefusal("unreachable") {
			r.log.Warn("read replica unreachable; verification lookups read the primary", "error", err)
		}
		return
	}
	lag := r.replayed(uint64(rep), time.Now())
	r.lag.Set(lag.Seconds())
	switch {
	case lag > r.maxLag:
		if r.setRefusal("lag") {
			r.log.Warn("read replica lags past AUTHCORE_READ_MAX_LAG; verification lookups read the primary", "lag", lag)
		}
	case r.setRefusal(""):
		r.log.Info("read replica in use for verification lookups", "lag", lag)
	}
}

// pendingFences is the generation of every pending fence (the global one under "").
func (r *Reads) pendingFences() map[string]uint64 {
	r.mu.RLock()
	defer r.mu.RUnlock()
	waiting := map[string]uint64{}
	for k, f := range r.fences {
		if f.lsn == pending {
			waiting[k] = f.gen
		}
	}
	if r.global.lsn == pending {
		waiting[""] = r.global.gen
	}
	return waiting
}

// resolve gives the fences that were waiting (and have not been set again since) the
// primary's position p, read at at, which also becomes a lag sample.
func (r *Reads) resolve(waiting map[string]uint64, p uint64, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, gen := range waiting {
		if k == "" {
			if r.global == (fence{lsn: pending, gen: gen}) {
				r.global = fence{lsn: p, gen: gen}
			}
		} else if r.fences[k] == (fence{lsn: pending, gen: gen}) {
			r.fences[k] = fence{lsn: p, gen: gen}
		}
	}
	r.samples = append(r.samples, sample{at: at, lsn: p})
	if len(r.samples) > keepSamples {
		r.samples = r.samples[len(r.samples)-keepSamples:]
	}
}

// replayed records that the replica has replayed up to replay at now: fences it passed
// lift, and the lag is how long ago the primary first had WAL beyond it.
func (r *Reads) replayed(replay uint64, now time.Time) time.Duration {
	r.replay.Store(replay)
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, f := range r.fences {
		if f.lsn != pending && f.lsn <= replay {
			delete(r.fences, k)
		}
	}
	if r.global.lsn != pending && r.global.lsn != unheard && r.global.lsn <= replay {
		r.global = fence{}
	}
	i := 0
	for i < len(r.samples) && r.samples[i].lsn <= replay {
		i++
	}
	r.samples = r.samples[i:]
	if len(r.samples) == 0 {
		return 0
	}
	return now.Sub(r.samples[0].at)
}

// setRefusal records why the replica may not answer ("" : it may), and reports whether
// that changed.
func (r *Reads) setRefusal(why string) bool {
	if why == "" {
		r.available.Set(1)
	} else {
		r.available.Set(0)
	}
	return r.refusal.Swap(why).(string) != why
}

// Describe and Collect make the router's metrics one collector.
func (r *Reads) Describe(ch chan<- *prometheus.Desc) {
	r.lag.Describe(ch)
	r.available.Describe(ch)
	r.reads.Describe(ch)
	r.fallbacks.Describe(ch)
}

func (r *Reads) Collect(ch chan<- prometheus.Metric) {
	r.lag.Collect(ch)
	r.available.Collect(ch)
	r.reads.Collect(ch)
	r.fallbacks.Collect(ch)
}
