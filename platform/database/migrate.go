package database

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"log/slog"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/authcore/authcore/platform/config"
)

// The SQL in migrations/<dialect> is generated from the ent schema by
// migrations/gen.go (see docs/extending.md); it is never written by hand.
//
//go:embed migrations/postgres/*.sql migrations/sqlite/*.sql
var migrationFiles embed.FS

// advisoryLockID is the PostgreSQL advisory lock every replica takes before migrating, so
// replicas that start together apply each migration exactly once. "authcore" in ASCII.
const advisoryLockID int64 = 0x61757468636f7265

// Migrate applies every embedded migration the store has not seen yet.
func Migrate(ctx context.Context, st config.Storage, db *sql.DB, log *slog.Logger) error {
	// goose does not bound its first connection attempt; the caller's deadline should.
	if err := db.PingContext(ctx); err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	p, err := newProvider(st, db)
	if err != nil {
		return err
	}
	results, err := p.Up(ctx)
	if err != nil {
		if IsUnavailable(err) {
			return fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
		return fmt.Errorf("migrating the %s store: %w", st, err)
	}
	for _, r := range results {
		log.Info("applied migration", "version", r.Source.Version, "file", r.Source.Path, "duration", r.Duration)
	}
	return nil
}

func newProvider(st config.Storage, db *sql.DB) (*goose.Provider, error) {
	sub, err := fs.Sub(migrationFiles, "migrations/"+string(st))
	if err != nil {
		return nil, err
	}
	opts := []goose.ProviderOption{goose.WithDisableGlobalRegistry(true)}
	dialect := goose.DialectSQLite3
	if st == config.Postgres {
		dialect = goose.DialectPostgres
		locker, err := lock.NewPostgresSessionLocker(lock.WithLockID(advisoryLockID), lock.WithLockTimeout(1, 120))
		if err != nil {
			return nil, err
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	}
	return goose.NewProvider(dialect, db, sub, opts...)
}
