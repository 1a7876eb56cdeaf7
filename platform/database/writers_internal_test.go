package database

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
)

// writers is a SQLite file behind serialWriters with the given wait. busy_timeout is 0:
// a writer that met the lock taken inside SQLite would fail at once with SQLITE_BUSY, so
// every success below was queued by the wrapper.
func writers(t *testing.T, wait time.Duration) *serialWriters {
	t.Helper()
	dsn, _ := sqliteDSN(filepath.Join(t.TempDir(), "w.db"))
	dsn = strings.Replace(dsn, "busy_timeout%2810000%29", "busy_timeout%280%29", 1)
	if !strings.Contains(dsn, "busy_timeout%280%29") {
		t.Fatalf("the DSN changed shape: %s", dsn)
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(8)
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec("CREATE TABLE t (n INTEGER)"); err != nil {
		t.Fatal(err)
	}
	return newSerialWriters(entsql.OpenDB(dialect.SQLite, db), wait)
}

// scalar is the one integer query answers, read through q (a driver or a transaction).
func scalar(t *testing.T, ctx context.Context, q interface {
	Query(context.Context, string, any, any) error
}, query string) int {
	t.Helper()
	var rows entsql.Rows
	if err := q.Query(ctx, query, []any{}, &rows); err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var n int
	rows.Next()
	if err := rows.Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func count(t *testing.T, w *serialWriters) int {
	t.Helper()
	return scalar(t, context.Background(), w, "SELECT count(*) FROM t")
}

// Many goroutines writing at once, in transactions and outside them, all succeed.
func TestSerialWritersQueueConcurrentWriters(t *testing.T) {
	w := writers(t, 10*time.Second)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 16*25)
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				if g%2 == 0 {
					errs <- w.Exec(ctx, "INSERT INTO t (n) VALUES (?)", []any{i}, nil)
					continue
				}
				tx, err := w.Tx(ctx)
				if err != nil {
					errs <- err
					continue
				}
				if err := tx.Exec(ctx, "INSERT INTO t (n) VALUES (?)", []any{i}, nil); err != nil {
					_ = tx.Rollback()
					errs <- err
					continue
				}
				errs <- tx.Commit()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := count(t, w); n != 16*25 {
		t.Fatalf("%d rows, want %d", n, 16*25)
	}
}

// A transaction holds the slot until it ends, whichever way; readers never wait for it;
// a writer that cannot get the slot in time is told the store is unavailable, and one
// whose context ends stops waiting.
func TestSerialWritersSlot(t *testing.T) {
	w := writers(t, 200*time.Millisecond)
	ctx := context.Background()
	insert := func(ctx context.Context) error { return w.Exec(ctx, "INSERT INTO t (n) VALUES (1)", []any{}, nil) }

	tx, err := w.Tx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Exec(ctx, "INSERT INTO t (n) VALUES (1)", []any{}, nil); err != nil {
		t.Fatal(err)
	}
	if n := count(t, w); n != 0 {
		t.Fatalf("a reader saw %d uncommitted rows", n)
	}
	start := time.Now()
	if err := insert(ctx); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("a writer past the wait got %v", err)
	}
	if waited := time.Since(start); waited < 200*time.Millisecond {
		t.Fatalf("gave up after %v", waited)
	}
	cctx, cancel := context.WithCancel(ctx)
	time.AfterFunc(20*time.Millisecond, cancel)
	if err := insert(cctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("a writer whose context ended got %v", err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := insert(ctx); err != nil {
		t.Fatalf("after a commit: %v", err)
	}

	tx, err = w.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := insert(ctx); err != nil {
		t.Fatalf("after a rollback: %v", err)
	}
	if n := count(t, w); n != 3 {
		t.Fatalf("%d rows, want 3", n)
	}
}

// BenchmarkSQLiteWriteTx is a small write transaction from many goroutines at once, queued
// by SQLite's busy handler (its sleeps) or by serialWriters.
func BenchmarkSQLiteWriteTx(b *testing.B) {
	for _, queued := range []bool{false, true} {
		name := "busy-handler"
		if queued {
			name = "serial-writers"
		}
		b.Run(name, func(b *testing.B) {
			dsn, _ := sqliteDSN(filepath.Join(b.TempDir(), "w.db"))
			db, err := sql.Open("sqlite", dsn)
			if err != nil {
				b.Fatal(err)
			}
			db.SetMaxOpenConns(8)
			defer db.Close()
			if _, err := db.Exec("CREATE TABLE t (n INTEGER)"); err != nil {
				b.Fatal(err)
			}
			var d dialect.Driver = entsql.OpenDB(dialect.SQLite, db)
			if queued {
				d = newSerialWriters(d, sqliteBusyTimeout)
			}
			ctx := context.Background()
			b.SetParallelism(8) // 8 goroutines per core, like concurrent requests
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					tx, err := d.Tx(ctx)
					if err != nil {
						b.Error(err)
						return
					}
					if err := tx.Exec(ctx, "INSERT INTO t (n) VALUES (1)", []any{}, nil); err != nil {
						b.Error(err)
					}
					if err := tx.Commit(); err != nil {
						b.Error(err)
					}
				}
			})
		})
	}
}

// Plain SQL inside a transaction (ent's Tx.ExecContext and QueryContext) still works.
func TestSerialWritersKeepPlainSQLInTransactions(t *testing.T) {
	w := writers(t, time.Second)
	ctx := context.Background()
	tx, err := w.Tx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ex, ok := tx.(interface {
		ExecContext(context.Context, string, ...any) (sql.Result, error)
		QueryContext(context.Context, string, ...any) (*sql.Rows, error)
	})
	if !ok {
		t.Fatal("the transaction hides ExecContext or QueryContext")
	}
	if _, err := ex.ExecContext(ctx, "INSERT INTO t (n) VALUES (7)"); err != nil {
		t.Fatal(err)
	}
	rows, err := ex.QueryContext(ctx, "SELECT n FROM t")
	if err != nil {
		t.Fatal(err)
	}
	var n int
	for rows.Next() {
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
	}
	rows.Close()
	if n != 7 {
		t.Fatalf("read %d", n)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}
