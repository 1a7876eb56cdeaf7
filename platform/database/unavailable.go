package database

import (
	"context"
	"database/sql"
	"strings"
	"sync/atomic"

	"entgo.io/ent/dialect"
	"github.com/jackc/pgx/v5"

	"github.com/authcore/authcore/platform/database/dberr"
)

// ErrUnavailable and IsUnavailable are re-exported for callers that already hold the store.
var ErrUnavailable = dberr.ErrUnavailable

// IsUnavailable reports whether err means the store cannot be reached.
func IsUnavailable(err error) bool { return dberr.IsUnavailable(err) }

// gatedDriver refuses every query until the schema is migrated, so a request that arrives
// while the store is still coming up gets 503 instead of "relation does not exist".
type gatedDriver struct {
	dialect.Driver
	ready *atomic.Bool
	// queries counts SELECTs sent (SQLite; on PostgreSQL the pgx tracer counts them), so
	// tests can prove a path never reached the store.
	queries *atomic.Int64
}

func (d *gatedDriver) count(ctx context.Context, query string) {
	if d.queries != nil && isSelect(query) && !background(ctx) {
		d.queries.Add(1)
	}
}

func isSelect(q string) bool {
	q = strings.TrimSpace(q)
	return len(q) >= 6 && strings.EqualFold(q[:6], "SELECT")
}

// selectCounter is a pgx tracer counting SELECTs, whichever layer (ent through
// database/sql, or pgx directly) sent them.
type selectCounter struct{ n *atomic.Int64 }

func (c selectCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	if isSelect(data.SQL) && !background(ctx) {
		c.n.Add(1)
	}
	return ctx
}

func (selectCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (d *gatedDriver) Exec(ctx context.Context, query string, args, v any) error {
	if !d.ready.Load() {
		return ErrUnavailable
	}
	d.count(ctx, query)
	return d.Driver.Exec(ctx, query, args, v)
}

func (d *gatedDriver) Query(ctx context.Context, query string, args, v any) error {
	if !d.ready.Load() {
		return ErrUnavailable
	}
	d.count(ctx, query)
	return d.Driver.Query(ctx, query, args, v)
}

func (d *gatedDriver) Tx(ctx context.Context) (dialect.Tx, error) {
	if !d.ready.Load() {
		return nil, ErrUnavailable
	}
	return d.Driver.Tx(ctx)
}

// BeginTx keeps ent's tx options (isolation level, read-only) working through the gate.
func (d *gatedDriver) BeginTx(ctx context.Context, opts *sql.TxOptions) (dialect.Tx, error) {
	if !d.ready.Load() {
		return nil, ErrUnavailable
	}
	if b, ok := d.Driver.(interface {
		BeginTx(context.Context, *sql.TxOptions) (dialect.Tx, error)
	}); ok {
		return b.BeginTx(ctx, opts)
	}
	return d.Driver.Tx(ctx)
}

type backgroundKey struct{}

// Background marks ctx as a background loop's (a worker, a batcher, a pruner): its
// queries are not counted by Queries, which tests read to prove a request path never
// reached the store, whatever the loops are doing meanwhile.
func Background(ctx context.Context) context.Context {
	return context.WithValue(ctx, backgroundKey{}, true)
}

func background(ctx context.Context) bool { b, _ := ctx.Value(backgroundKey{}).(bool); return b }

// execQuerier is database/sql's side of a driver: what ent's ExecContext and QueryContext
// (feature sql/execquery) reach, for SQL that is not an entity's (platform/lifecycle
// reads and writes every credential kind's table with ent's SQL builder).
type execQuerier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func (d *gatedDriver) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if !d.ready.Load() {
		return nil, ErrUnavailable
	}
	d.count(ctx, query)
	return d.Driver.(execQuerier).ExecContext(ctx, query, args...)
}

func (d *gatedDriver) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if !d.ready.Load() {
		return nil, ErrUnavailable
	}
	d.count(ctx, query)
	return d.Driver.(execQuerier).QueryContext(ctx, query, args...)
}
