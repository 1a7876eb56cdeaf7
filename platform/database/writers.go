package database

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"entgo.io/ent/dialect"
)

// SQLite writers queue here, not in SQLite. SQLite lets one connection write at a time and
// makes the others poll for the lock: its busy handler sleeps 1, 2, 5, 10 … 100 ms between
// tries, so under concurrent writes most of a write's latency is sleeping while the lock
// sits free (refresh-token rotations ran at 1.8k/s with p50 29 ms, CPU half idle). Taking
// a process-wide slot before BEGIN IMMEDIATE, and before a write outside a transaction,
// hands the lock on in the order writers asked, with no sleeps. Other processes on the same
// file (an operator command) still meet the busy timeout. No driver or library offers
// this for database/sql, hence this wrapper.
//
// The wait is bounded like busy_timeout: a writer that cannot get the slot in time gets
// ErrUnavailable (503), as it got SQLITE_BUSY before.
type serialWriters struct {
	dialect.Driver
	slot chan struct{}
	wait time.Duration
}

func newSerialWriters(d dialect.Driver, wait time.Duration) *serialWriters {
	return &serialWriters{Driver: d, slot: make(chan struct{}, 1), wait: wait}
}

// acquire takes the write slot; release gives it back.
func (w *serialWriters) acquire(ctx context.Context) error {
	select {
	case w.slot <- struct{}{}:
		return nil
	default:
	}
	t := time.NewTimer(w.wait)
	defer t.Stop()
	select {
	case w.slot <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return fmt.Errorf("%w: no SQLite write slot within %v", ErrUnavailable, w.wait)
	}
}

func (w *serialWriters) release() { <-w.slot }

// Exec outside a transaction is a write (ent sends SELECTs through Query).
func (w *serialWriters) Exec(ctx context.Context, query string, args, v any) error {
	if err := w.acquire(ctx); err != nil {
		return err
	}
	defer w.release()
	return w.Driver.Exec(ctx, query, args, v)
}

// Query takes the slot for anything but a SELECT (an INSERT … RETURNING writes).
func (w *serialWriters) Query(ctx context.Context, query string, args, v any) error {
	if isSelect(query) {
		return w.Driver.Query(ctx, query, args, v)
	}
	if err := w.acquire(ctx); err != nil {
		return err
	}
	defer w.release()
	return w.Driver.Query(ctx, query, args, v)
}

// ExecContext and QueryContext are Exec and Query for plain SQL (ent's ExecContext and
// QueryContext), under the same slot.
func (w *serialWriters) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if err := w.acquire(ctx); err != nil {
		return nil, err
	}
	defer w.release()
	return w.Driver.(execQuerier).ExecContext(ctx, query, args...)
}

func (w *serialWriters) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if !isSelect(query) {
		if err := w.acquire(ctx); err != nil {
			return nil, err
		}
		defer w.release()
	}
	return w.Driver.(execQuerier).QueryContext(ctx, query, args...)
}

// Tx holds the slot from BEGIN (IMMEDIATE: the transaction is a writer from its start)
// to its commit or rollback.
func (w *serialWriters) Tx(ctx context.Context) (dialect.Tx, error) {
	return w.BeginTx(ctx, nil)
}

func (w *serialWriters) BeginTx(ctx context.Context, opts *sql.TxOptions) (dialect.Tx, error) {
	if err := w.acquire(ctx); err != nil {
		return nil, err
	}
	var (
		tx  dialect.Tx
		err error
	)
	if b, ok := w.Driver.(interface {
		BeginTx(context.Context, *sql.TxOptions) (dialect.Tx, error)
	}); ok {
		tx, err = b.BeginTx(ctx, opts)
	} else {
		tx, err = w.Driver.Tx(ctx)
	}
	if err != nil {
		w.release()
		return nil, err
	}
	return &slotTx{Tx: tx, release: sync.OnceFunc(w.release)}, nil
}

// slotTx gives the write slot back when it ends, whichever way.
type slotTx struct {
	dialect.Tx
	release func()
}

func (t *slotTx) Commit() error {
	defer t.release()
	return t.Tx.Commit()
}

func (t *slotTx) Rollback() error {
	defer t.release()
	return t.Tx.Rollback()
}

// ExecContext and QueryContext reach database/sql's own (ent's Tx.ExecContext, for plain
// SQL inside a transaction, asks the dialect transaction for them).
func (t *slotTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	ex, ok := t.Tx.(interface {
		ExecContext(context.Context, string, ...any) (sql.Result, error)
	})
	if !ok {
		return nil, errors.New("Tx.ExecContext is not supported")
	}
	return ex.ExecContext(ctx, query, args...)
}

func (t *slotTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	q, ok := t.Tx.(interface {
		QueryContext(context.Context, string, ...any) (*sql.Rows, error)
	})
	if !ok {
		return nil, errors.New("Tx.QueryContext is not supported")
	}
	return q.QueryContext(ctx, query, args...)
}
