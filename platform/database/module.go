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
	"github.com/authcore/authcore/platform/tracing"
)

// Module provides the store and its ent client, migrates it on start, and contributes a
// readiness check and the connection-pool gauges.
var Module = fx.Module("database",
	fx.Provide(
		func(cfg config.Config, log *slog.Logger, tr *tracing.Tracing) (*DB, error) {
			return Open(cfg.DatabaseURL, log, tr)
		},
		func(db *DB) *ent.Client { return db.Ent },
	),
	fx.Invoke(func(lc fx.Lifecycle, db *DB) {
		lc.Append(fx.Hook{OnStart: db.Start, OnStop: db.Stop})
	}),
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
)
