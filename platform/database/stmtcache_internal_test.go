package database

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func prepared(t *testing.T, dsn string, conns int) *preparedDriver {
	t.Helper()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(conns)
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec("CREATE TABLE t (n INTEGER)"); err != nil {
		t.Fatal(err)
	}
	return newPreparedDriver(db)
}

// waitPrepared waits for the background preparation of query.
func waitPrepared(t *testing.T, d *preparedDriver, query string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		d.cache.mu.RLock()
		s := d.cache.m[query]
		d.cache.mu.RUnlock()
		if s != nil {
			return
		}
	}
	t.Fatalf("%q was not prepared", query)
}

func sum(t *testing.T, ctx context.Context, q interface {
	Query(context.Context, string, any, any) error
}) int {
	t.Helper()
	return scalar(t, ctx, q, "SELECT coalesce(sum(n), 0) FROM t")
}

// A text runs as text the first time and as its prepared statement after, with the same
// results, outside and inside transactions.
func TestPreparedStatementsAreReused(t *testing.T) {
	dsn, _ := sqliteDSN(filepath.Join(t.TempDir(), "p.db"), "FULL")
	d := prepared(t, dsn, 4)
	ctx := context.Background()
	const insert = "INSERT INTO t (n) VALUES (?)"
	for i := 1; i <= 3; i++ {
		if err := d.Exec(ctx, insert, []any{i}, nil); err != nil {
			t.Fatal(err)
		}
		waitPrepared(t, d, insert)
	}
	if got := sum(t, ctx, d); got != 6 {
		t.Fatalf("sum %d", got)
	}
	waitPrepared(t, d, "SELECT coalesce(sum(n), 0) FROM t")
	stmt := d.cache.stmt(insert)
	for i := 4; i <= 5; i++ {
		tx, err := d.Tx(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.Exec(ctx, insert, []any{i}, nil); err != nil {
			t.Fatal(err)
		}
		if got := sum(t, ctx, tx); got != sumTo(i) {
			t.Fatalf("sum in the transaction %d", got)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	if got := sum(t, ctx, d); got != 15 {
		t.Fatalf("sum %d", got)
	}
	if d.cache.stmt(insert) != stmt {
		t.Fatal("the statement was prepared again")
	}
}

func sumTo(n int) int { return n * (n + 1) / 2 }

// On a one-connection pool (an in-memory store), a transaction that sends a text never
// seen before does not wait for a connection to prepare it.
func TestANewTextInsideATransactionOnOneConnection(t *testing.T) {
	dsn, _ := sqliteDSN(":memory:", "FULL")
	d := prepared(t, dsn, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	tx, err := d.Tx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := tx.Exec(ctx, "INSERT INTO t (n) VALUES (?)", []any{i + 1}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if got := sum(t, ctx, tx); got != 6 {
		t.Fatalf("sum %d", got)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	waitPrepared(t, d, "INSERT INTO t (n) VALUES (?)")
}

// Past maxStatements texts run as text; a text that does not prepare reports its own
// error when run, every time.
func TestTextsTheCacheDoesNotHold(t *testing.T) {
	dsn, _ := sqliteDSN(filepath.Join(t.TempDir(), "p.db"), "FULL")
	d := prepared(t, dsn, 2)
	ctx := context.Background()
	for i := range 3 {
		err := d.Exec(ctx, "INSERT INTO missing (n) VALUES (1)", []any{}, nil)
		if err == nil || !strings.Contains(err.Error(), "no such table") {
			t.Fatalf("try %d: %v", i, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	d.cache.mu.Lock()
	for i := len(d.cache.m); i < maxStatements; i++ {
		d.cache.m[fmt.Sprint("-- filler ", i)] = nil
	}
	d.cache.mu.Unlock()
	for i := range 3 {
		if err := d.Exec(ctx, "INSERT INTO t (n) VALUES (?)", []any{i + 1}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if got := sum(t, ctx, d); got != 6 {
		t.Fatalf("sum %d", got)
	}
	d.cache.mu.RLock()
	defer d.cache.mu.RUnlock()
	if len(d.cache.m) != maxStatements {
		t.Fatalf("the cache grew to %d", len(d.cache.m))
	}
}
