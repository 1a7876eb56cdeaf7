// Package database opens the store (PostgreSQL through pgx, or an embedded SQLite file),
// migrates it with the versioned SQL embedded in the binary, and hands modules one ent
// client. It must not hold business rules: modules own their entities and queries.
package database

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	entsql "entgo.io/ent/dialect/sql"
	"github.com/XSAM/otelsql"
	"github.com/exaring/otelpgx"
	"github.com/jackc/pgx/v5/multitracer"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	_ "modernc.org/sqlite" // registers the pure-Go "sqlite" database/sql driver

	"entgo.io/ent/dialect"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/tracing"
)

// DB is the one store of the process. Everything reads it through Ent; Pool is set on
// PostgreSQL only, for the few callers that need the raw driver (LISTEN/NOTIFY).
type DB struct {
	Storage config.Storage
	Ent     *ent.Client
	SQL     *sql.DB
	Pool    *pgxpool.Pool

	sqlitePath string
	// sync is SQLite's synchronous setting; group queues and commits SQLite's writers.
	sync  string
	group *groupCommit
	log   *slog.Logger

	migrated  atomic.Bool
	queries   atomic.Int64
	readyOnce sync.Once
	readyCh   chan struct{}
	stop      chan struct{}
	loopDone  chan struct{}
}

// Open prepares the store without touching it: pgxpool and database/sql both connect
// lazily, so a store that is down at start-up does not stop the process (SPEC §3). With
// tracing on, every query is a span (otelpgx on PostgreSQL, otelsql on SQLite); off, no
// instrumentation is installed.
func Open(cfg config.Config, log *slog.Logger, tr *tracing.Tracing) (*DB, error) {
	databaseURL := cfg.DatabaseURL
	st, err := config.StorageOf(databaseURL)
	if err != nil {
		return nil, err
	}
	db := &DB{Storage: st, log: log, readyCh: make(chan struct{}), stop: make(chan struct{}), loopDone: make(chan struct{})}
	var drv dialect.Driver
	switch st {
	case config.Postgres:
		// A dead store must fail requests quickly with 503 rather than hang them.
		pcfg, err := poolConfig("AUTHCORE_DATABASE_URL", databaseURL, 3*time.Second, &db.queries)
		if err != nil {
			return nil, err
		}
		if tr.Enabled() {
			pcfg.ConnConfig.Tracer = multitracer.New(selectCounter{&db.queries},
				otelpgx.NewTracer(otelpgx.WithTracerProvider(tr.Provider))) // statements only, never parameters: those hold digests and sealed secrets
		}
		pool, err := pgxpool.NewWithConfig(context.Background(), pcfg)
		if err != nil {
			return nil, fmt.Errorf("AUTHCORE_DATABASE_URL: %v", err)
		}
		db.Pool = pool
		db.SQL = stdlib.OpenDBFromPool(pool)
		drv = entsql.OpenDB(dialect.Postgres, db.SQL)
	case config.SQLite:
		path := strings.TrimPrefix(databaseURL, "sqlite:")
		db.sync = sqliteSync(cfg.SQLiteSync)
		dsn, memory := sqliteDSN(path, db.sync)
		var sqldb *sql.DB
		if tr.Enabled() {
			sqldb, err = otelsql.Open("sqlite", dsn, otelsql.WithTracerProvider(tr.Provider),
				otelsql.WithAttributes(semconv.DBSystemSqlite))
		} else {
			sqldb, err = sql.Open("sqlite", dsn)
		}
		if err != nil {
			return nil, fmt.Errorf("AUTHCORE_DATABASE_URL: %v", err)
		}
		if memory {
			// Each connection to :memory: is a database of its own; keep exactly one.
			sqldb.SetMaxOpenConns(1)
			sqldb.SetConnMaxIdleTime(0)
			sqldb.SetConnMaxLifetime(0)
		} else {
			db.sqlitePath = path
			// Idle connections are kept, all of them: database/sql closes all but two by
			// default, and each connection opened anew runs the DSN's pragmas and prepares
			// every statement again (half of an agent token's lookup in the profile of a
			// population of 300,000, with bursts of 64 requests).
			sqldb.SetMaxOpenConns(8)
			sqldb.SetMaxIdleConns(8)
		}
		db.SQL = sqldb
		db.group = newGroupCommit(newPreparedDriver(sqldb), sqliteBusyTimeout)
		drv = db.group
	}
	gated := &gatedDriver{Driver: drv, ready: &db.migrated}
	if st == config.SQLite {
		gated.queries = &db.queries
	}
	db.Ent = ent.NewClient(ent.Driver(gated))
	return db, nil
}

// poolConfig is the pgx pool configuration for url (named by setting in errors): 16
// connections unless the URL says, idle ones closed after 5 minutes, connecting given up
// after connectTimeout unless the URL says, and SELECTs counted into queries.
func poolConfig(setting, url string, connectTimeout time.Duration, queries *atomic.Int64) (*pgxpool.Config, error) {
	pcfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", setting, err)
	}
	if !strings.Contains(url, "pool_max_conns") {
		pcfg.MaxConns = 16
	}
	pcfg.MaxConnIdleTime = 5 * time.Minute
	if pcfg.ConnConfig.ConnectTimeout == 0 {
		pcfg.ConnConfig.ConnectTimeout = connectTimeout
	}
	pcfg.ConnConfig.Tracer = selectCounter{queries}
	return pcfg, nil
}

// sqliteBusyTimeout bounds a writer's wait for the lock, in SQLite and in groupCommit.
const sqliteBusyTimeout = 10 * time.Second

// sqliteSync is SQLite's synchronous setting for AUTHCORE_SQLITE_SYNC: FULL unless relaxed.
func sqliteSync(setting string) string {
	if setting == "" {
		return "FULL"
	}
	return strings.ToUpper(setting)
}

// durable reports whether a commit under this synchronous setting survives power loss: in
// WAL mode FULL flushes the WAL at every commit (EXTRA adds nothing there), NORMAL only at
// checkpoints.
func durable(sync string) bool { return sync == "FULL" || sync == "EXTRA" }

// sqliteDSN builds the modernc.org/sqlite DSN: WAL so readers never wait for the writer,
// foreign keys on, a busy timeout instead of immediate SQLITE_BUSY (for other processes on
// the file: this one's writers queue in groupCommit), IMMEDIATE transactions so two
// writers queue on the lock instead of deadlocking on upgrade, and the synchronous setting
// (FULL: a commit returns once the WAL is on the disk). Temporary files stay files past
// 64 KiB: the journal of a group member's savepoint lives there, and SQLite truncates an
// in-memory one by walking it from its start after every statement, which made a member of
// 30,000 statements (a flush of usage counts) quadratic.
var uriPath = strings.NewReplacer("%", "%25", "?", "%3F", "#", "%23")

func sqliteDSN(path, sync string) (dsn string, memory bool) {
	q := url.Values{}
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", sqliteBusyTimeout.Milliseconds()))
	q.Add("_txlock", "immediate")
	if path == ":memory:" {
		return "file::memory:?" + q.Encode(), true
	}
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous("+sync+")")
	// SQLite reads the name as a URI: a % ? or # in the path is escaped, or the file would
	// land elsewhere (a # cuts the path short).
	return "file:" + uriPath.Replace(path) + "?" + q.Encode(), false
}

// Start migrates the store, or, when it cannot be reached, keeps trying in the
// background so the process becomes ready by itself once the store answers.
func (db *DB) Start(ctx context.Context) error {
	if err := db.PrepareDir(); err != nil {
		return err
	}
	err := db.migrateOnce(ctx)
	if err == nil {
		close(db.loopDone)
		return nil
	}
	if !IsUnavailable(err) {
		close(db.loopDone)
		return err
	}
	db.log.Warn("store unreachable at start; serving 503 until it answers", "error", err)
	go db.retryLoop()
	return nil
}

// PrepareDir creates the directory of the SQLite file, if there is one, and the file
// itself readable by its owner only: it holds digests and sealed secrets. SQLite gives the
// -wal and -shm files it makes later the mode of the database file.
func (db *DB) PrepareDir() error {
	if db.sqlitePath == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(db.sqlitePath), 0o700); err != nil {
		return fmt.Errorf("creating the SQLite directory: %w", err)
	}
	f, err := os.OpenFile(db.sqlitePath, os.O_RDONLY|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("creating the SQLite file: %w", err)
	}
	return f.Close()
}

func (db *DB) retryLoop() {
	defer close(db.loopDone)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-db.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := db.migrateOnce(ctx)
		cancel()
		if err == nil {
			db.log.Info("store reachable; ready")
			return
		}
		db.log.Debug("store still unreachable", "error", err)
	}
}

func (db *DB) migrateOnce(ctx context.Context) error {
	if err := Migrate(ctx, db.Storage, db.SQL, db.log); err != nil {
		return err
	}
	db.warnIfNotDurable(ctx)
	db.migrated.Store(true)
	db.readyOnce.Do(func() { close(db.readyCh) })
	return nil
}

// warnIfNotDurable logs, once the store answers, when an acknowledged write could be lost
// to a power failure (SPEC §24): SQLite relaxed by AUTHCORE_SQLITE_SYNC, or a PostgreSQL
// server (or role) with synchronous_commit or fsync off.
func (db *DB) warnIfNotDurable(ctx context.Context) {
	switch {
	case db.sqlitePath != "" && !durable(db.sync):
		db.log.Warn("AUTHCORE_SQLITE_SYNC relaxes durability: an acknowledged write survives a crash of the process but may be lost to a power failure or a crash of the machine; for development only",
			"synchronous", db.sync)
	case db.Pool != nil:
		for _, setting := range []string{"synchronous_commit", "fsync"} {
			var v string
			if err := db.Pool.QueryRow(ctx, "SHOW "+setting).Scan(&v); err != nil {
				db.log.Warn("could not read a PostgreSQL durability setting", "setting", setting, "error", err)
				continue
			}
			if v == "off" {
				db.log.Warn("PostgreSQL runs with "+setting+"=off: an acknowledged write may be lost to a crash; keep it on for authcore's role", "setting", setting)
			}
		}
	}
}

// Exec runs a write that ent's builders cannot express. On SQLite it is a member of the
// group commit, so it queues with the other writers instead of polling SQLite's lock (which
// a stream of groups would keep it from getting); on PostgreSQL it runs on the pool.
func (db *DB) Exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if !db.migrated.Load() {
		return nil, ErrUnavailable
	}
	if db.group == nil {
		return db.SQL.ExecContext(ctx, query, args...)
	}
	m, err := db.group.begin(ctx)
	if err != nil {
		return nil, err
	}
	res, err := m.ExecContext(ctx, query, args...)
	if err != nil {
		return nil, errors.Join(err, m.Rollback())
	}
	return res, m.Commit()
}

// Query runs a read that ent's builders cannot express, on the primary.
func (db *DB) Query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if !db.migrated.Load() {
		return nil, ErrUnavailable
	}
	return db.SQL.QueryContext(ctx, query, args...)
}

// Dialect is ent's name of the store's SQL dialect, for queries built with ent's sql builder.
func (db *DB) Dialect() string {
	if db.Storage == config.Postgres {
		return dialect.Postgres
	}
	return dialect.SQLite
}

// WriteRow is Exec for a write that returns a row (… RETURNING): it scans the first row
// into dest, or answers sql.ErrNoRows when there is none (the write is then kept all the
// same: a conditional upsert that changed nothing).
func (db *DB) WriteRow(ctx context.Context, query string, args []any, dest ...any) error {
	if !db.migrated.Load() {
		return ErrUnavailable
	}
	if db.group == nil {
		return db.SQL.QueryRowContext(ctx, query, args...).Scan(dest...)
	}
	m, err := db.group.begin(ctx)
	if err != nil {
		return err
	}
	scanned, err := scanFirst(m, ctx, query, args, dest)
	if err != nil {
		return errors.Join(err, m.Rollback())
	}
	if err := m.Commit(); err != nil {
		return err
	}
	if !scanned {
		return sql.ErrNoRows
	}
	return nil
}

func scanFirst(m *memberTx, ctx context.Context, query string, args, dest []any) (bool, error) {
	rows, err := m.QueryContext(ctx, query, args...)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	if !rows.Next() {
		return false, rows.Err()
	}
	if err := rows.Scan(dest...); err != nil {
		return false, err
	}
	for rows.Next() {
	}
	return true, errors.Join(rows.Err(), rows.Close())
}

// GroupCommits is how many writes SQLite's group commit committed, and in how many
// commits (each one flush of the WAL when synchronous is FULL); zeros on PostgreSQL.
func (db *DB) GroupCommits() (writes, commits int64) {
	if db.group == nil {
		return 0, 0
	}
	return db.group.Stats()
}

// Stop ends the retry loop and closes the store.
func (db *DB) Stop(context.Context) error {
	close(db.stop)
	<-db.loopDone
	return db.Close()
}

// Close closes the store without the lifecycle (for one-shot commands).
func (db *DB) Close() error {
	err := db.Ent.Close()
	if db.Pool != nil {
		db.Pool.Close()
	}
	return err
}

// Queries is how many SELECTs reached the store (on SQLite, those sent through the ent
// client outside transactions). Tests use it to prove a path never touched the store.
func (db *DB) Queries() int64 { return db.queries.Load() }

// Migrated reports whether the schema is in place; until then every query answers
// ErrUnavailable.
func (db *DB) Migrated() bool { return db.migrated.Load() }

// ReadyC is closed once the store is migrated. Modules that must load state from the
// store before they can serve (the session engine's keys) wait on it.
func (db *DB) ReadyC() <-chan struct{} { return db.readyCh }

// Ping checks that the store answers now.
func (db *DB) Ping(ctx context.Context) error {
	if db.Pool != nil {
		return db.Pool.Ping(ctx)
	}
	return db.SQL.PingContext(ctx)
}

// WithTx runs fn in a transaction and commits when it returns nil. A change and its audit
// record go through one call, so they commit together or not at all.
func WithTx(ctx context.Context, client *ent.Client, fn func(tx *ent.Tx) error) (err error) {
	tx, err := client.Tx(ctx)
	if err != nil {
		return err
	}
	defer func() {
		if v := recover(); v != nil {
			_ = tx.Rollback()
			panic(v)
		}
	}()
	if err := fn(tx); err != nil {
		if rerr := tx.Rollback(); rerr != nil {
			return errors.Join(err, fmt.Errorf("rolling back: %w", rerr))
		}
		return err
	}
	return tx.Commit()
}
