package database

import (
	"context"
	"errors"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"go.uber.org/fx"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/health"
	"github.com/authcore/authcore/platform/metrics"
	"github.com/authcore/authcore/platform/secret"
	"github.com/authcore/authcore/platform/tracing"
)

// Module provides the store and its ent client, migrates it on start, and contributes a
// readiness check and the connection-pool gauges.
var Module = fx.Module("database",
	fx.Provide(
		// The hook is appended as the store is built, before anything that uses it: fx
		// stops in reverse order, so a batcher's last flush at stop still has its store.
		func(lc fx.Lifecycle, cfg config.Config, log *slog.Logger, tr *tracing.Tracing) (*DB, error) {
			db, err := Open(cfg, log, tr)
			if err == nil {
				lc.Append(fx.Hook{OnStart: db.Start, OnStop: db.Stop})
			}
			return db, err
		},
		func(db *DB) *ent.Client { return db.Ent },
		func(db *DB) secret.Store { return db }, // what `keys reseal` re-seals the declared columns in
		func(lc fx.Lifecycle, db *DB, cfg config.Config, log *slog.Logger) (*Reads, error) {
			r, err := newReads(db, cfg.DatabaseReadURL, cfg.ReadMaxLag, log)
			if err == nil {
				lc.Append(fx.Hook{OnStart: r.Start, OnStop: r.Stop})
			}
			return r, err
		},
	),
	fx.Invoke(func(*DB) {}), // opened and migrated whether or not anything asks for it
	health.AsCheck(func(db *DB) health.Check {
		return health.Check{Name: "store", Check: func(ctx context.Context) error {
			if !db.Migrated() {
				return errors.New("not migrated")
			}
			return db.Ping(ctx)
		}}
	}),
	metrics.AsCollector(func(db *DB) prometheus.Collector {
		return collectors.NewDBStatsCollector(db.SQL, "authcore")
	}),
	metrics.AsCollector(newGroupCollector),
	// The replica is no part of readiness: while only it is down, lookups read the primary.
	metrics.AsCollector(func(r *Reads) prometheus.Collector { return r }),
)

// groupCollector exports SQLite's group commit: writes over commits is how many writes
// share one flush of the WAL. Nothing on PostgreSQL, which groups its commits itself.
type groupCollector struct {
	db             *DB
	writes, groups *prometheus.Desc
}

func newGroupCollector(db *DB) prometheus.Collector {
	return groupCollector{db: db,
		writes: prometheus.NewDesc("authcore_sqlite_group_writes_total", "Write transactions SQLite's group commit committed.", nil, nil),
		groups: prometheus.NewDesc("authcore_sqlite_group_commits_total", "Commits of SQLite's group commit (each one flush of the WAL under synchronous=FULL): the writes above shared them.", nil, nil)}
}

func (c groupCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.writes; ch <- c.groups }

func (c groupCollector) Collect(ch chan<- prometheus.Metric) {
	if c.db.group == nil {
		return
	}
	w, g := c.db.GroupCommits()
	ch <- prometheus.MustNewConstMetric(c.writes, prometheus.CounterValue, float64(w))
	ch <- prometheus.MustNewConstMetric(c.groups, prometheus.CounterValue, float64(g))
}
