package database

import (
	"context"
	"database/sql"
	"sync"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
)

// Prepared statements for SQLite. ent sends every query as text, and modernc.org/sqlite
// compiles each one anew: in the profile of refresh-token rotations, compiling was a third
// of SQLite's CPU, as much as half of executing. database/sql keeps a prepared statement
// per connection for a *sql.Stmt, so ent's queries go through one *sql.Stmt per distinct
// text (inside a transaction, through tx.StmtContext, which reuses the connection's). No
// driver option or library does this for ent, hence this driver.
//
// A text is prepared the first time it is seen, in the background, and runs as text
// meanwhile: preparing takes a connection of the pool, which a caller inside a transaction
// on a one-connection pool (an in-memory store) would wait for forever. Statements are never
// evicted, so none is closed while another goroutine uses it; past maxStatements distinct
// texts (ent's are a few hundred; IN lists of new lengths add more), new texts run as text.
const maxStatements = 1024

type stmtCache struct {
	db *sql.DB
	mu sync.RWMutex
	// m holds every text seen: its statement, or nil while it is being prepared or when
	// it did not prepare (it then always runs as text, which reports any error of its own).
	m map[string]*sql.Stmt
}

// stmt is query's statement, or nil: run it as text.
func (c *stmtCache) stmt(query string) *sql.Stmt {
	c.mu.RLock()
	s, seen := c.m[query]
	c.mu.RUnlock()
	if seen {
		return s
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, seen := c.m[query]; !seen && len(c.m) < maxStatements {
		c.m[query] = nil
		go c.prepare(query)
	}
	return nil
}

func (c *stmtCache) prepare(query string) {
	ctx, cancel := context.WithTimeout(Background(context.Background()), sqliteBusyTimeout)
	defer cancel()
	s, err := c.db.PrepareContext(ctx, query)
	if err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[query] = s
}

// preparedDriver is ent's SQLite driver with its statements prepared once.
type preparedDriver struct {
	entsql.Conn
	cache *stmtCache
}

func newPreparedDriver(db *sql.DB) *preparedDriver {
	c := &stmtCache{db: db, m: map[string]*sql.Stmt{}}
	return &preparedDriver{Conn: entsql.Conn{ExecQuerier: preparedDB{c}}, cache: c}
}

func (d *preparedDriver) Dialect() string { return dialect.SQLite }

func (d *preparedDriver) Close() error { return d.cache.db.Close() }

func (d *preparedDriver) Tx(ctx context.Context) (dialect.Tx, error) { return d.BeginTx(ctx, nil) }

func (d *preparedDriver) BeginTx(ctx context.Context, opts *sql.TxOptions) (dialect.Tx, error) {
	tx, err := d.cache.db.BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &entsql.Tx{Conn: entsql.Conn{ExecQuerier: preparedTx{tx, d.cache}}, Tx: tx}, nil
}

// preparedDB runs statements on the pool.
type preparedDB struct{ c *stmtCache }

func (p preparedDB) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if s := p.c.stmt(query); s != nil {
		return s.ExecContext(ctx, args...)
	}
	return p.c.db.ExecContext(ctx, query, args...)
}

func (p preparedDB) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if s := p.c.stmt(query); s != nil {
		return s.QueryContext(ctx, args...)
	}
	return p.c.db.QueryContext(ctx, query, args...)
}

// preparedTx runs statements in a transaction; the transaction closes its statements when
// it ends.
type preparedTx struct {
	tx *sql.Tx
	c  *stmtCache
}

func (p preparedTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if s := p.c.stmt(query); s != nil {
		return p.tx.StmtContext(ctx, s).ExecContext(ctx, args...)
	}
	return p.tx.ExecContext(ctx, query, args...)
}

func (p preparedTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if s := p.c.stmt(query); s != nil {
		return p.tx.StmtContext(ctx, s).QueryContext(ctx, args...)
	}
	return p.tx.QueryContext(ctx, query, args...)
}
