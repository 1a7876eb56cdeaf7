// Package chainer links committed audit events into their projects' hash chains (SPEC
// §28). It is apart from platform/audit because it needs the store's transactions and
// dialect, and the store's package already stands on audit (through httpserver). It must
// not decide what is audited or how a link is made (audit.Link).
package chainer

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql"
	"go.uber.org/fx"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/auditevent"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/database"
)

// The chainer links committed events after the fact, so the request path writes nothing
// beyond its record: a request that had to read its project's last link and write the
// next one would serialise every write of a project on one row. Chain order is the order the chainer sees events in, which is id
// order among what has committed; an event that commits late (its id older than events
// already chained) is chained when it appears, never skipped. Only one chainer links at a
// time across replicas: on PostgreSQL its transaction holds an advisory lock; SQLite has
// one writer anyway.

// chainBatch bounds one chaining transaction.
const chainBatch = 500

// chainLockID is the PostgreSQL advisory lock of the chaining transaction ("authchai");
// the migration lock is another.
const chainLockID int64 = 0x6175746863686169

// Timing is how often the chainer looks for unchained events when nothing nudges it.
// Under a stream of writes the passes batch by themselves (what commits during a pass is
// chained by the next); a fixed gap between passes was measured too, and only made each
// chaining transaction hold SQLite's writer longer (p99 of a badge mint 4 → 13 ms).
type Timing struct{ Every time.Duration }

// DefaultTiming is what the service runs with.
var DefaultTiming = Timing{Every: 200 * time.Millisecond}

// Chainer links events into their project's chain.
type Chainer struct {
	ent      *ent.Client
	postgres bool
	log      *slog.Logger
	timing   Timing
	wake     database.Wake

	mu        sync.Mutex
	followers []func()
}

// Module provides the chainer, and nudges it from the recorder as each record commits;
// only Run starts it.
var Module = fx.Module("chainer",
	fx.Supply(DefaultTiming),
	fx.Provide(fx.Annotate(newChainer, fx.As(fx.Self()), fx.As(new(audit.Committed)))),
)

var _ audit.Committed = (*Chainer)(nil)

func newChainer(c *ent.Client, db *database.DB, log *slog.Logger, t Timing) *Chainer {
	return &Chainer{ent: c, postgres: db.Storage == config.Postgres, log: log, timing: t, wake: database.NewWake()}
}

// Run runs the chainer. Only a serving process adds it (with the listeners): operator
// commands build the same graph and chain nothing.
var Run = fx.Invoke(func(lc fx.Lifecycle, c *Chainer) { database.RunWoken(lc, c.wake, c.timing.Every, c.pass) })

// Nudge wakes the chainer (non-blocking): this process just committed an event.
func (c *Chainer) Nudge() { c.wake.Ring() }

// Follow has f called after every pass that chained something: a stream's worker wakes
// as soon as there is more to send. f must not block.
func (c *Chainer) Follow(f func()) {
	c.mu.Lock()
	c.followers = append(c.followers, f)
	c.mu.Unlock()
}

// pass chains what is pending and tells the followers when it chained anything.
func (c *Chainer) pass(ctx context.Context) {
	n, err := c.ChainPending(ctx)
	if err != nil && ctx.Err() == nil {
		c.log.Error("chaining audit events", "err", err)
	}
	if n > 0 {
		c.mu.Lock()
		fs := append([]func(){}, c.followers...)
		c.mu.Unlock()
		for _, f := range fs {
			f()
		}
	}
}

// ChainPending chains every event committed and not yet chained, a batch per
// transaction, and says how many it chained.
func (c *Chainer) ChainPending(ctx context.Context) (int, error) {
	total := 0
	for ctx.Err() == nil {
		n, err := c.chainBatch(ctx)
		total += n
		if err != nil || n < chainBatch {
			return total, err
		}
	}
	return total, ctx.Err()
}

func (c *Chainer) chainBatch(ctx context.Context) (int, error) {
	// A read first: most looks find nothing, and a write transaction for nothing would take
	// SQLite's write slot (and a flush) five times a second.
	if pending, err := c.ent.AuditEvent.Query().Where(auditevent.ChainSeqIsNil()).Exist(ctx); err != nil || !pending {
		return 0, err
	}
	n := 0
	err := database.WithTx(ctx, c.ent, func(tx *ent.Tx) error {
		n = 0
		if c.postgres {
			// Held to the end of the transaction: a second replica's chainer waits here,
			// then reads the links this one wrote.
			if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", chainLockID); err != nil {
				return err
			}
		}
		events, err := tx.AuditEvent.Query().Where(auditevent.ChainSeqIsNil()).
			Order(auditevent.ByID()).Limit(chainBatch).All(ctx)
		if err != nil || len(events) == 0 {
			return err
		}
		last := map[string]link{}
		links := make([]linked, 0, len(events))
		for _, e := range events {
			prev, ok := last[e.ProjectID]
			if !ok {
				top, err := tx.AuditEvent.Query().
					Where(auditevent.ProjectID(e.ProjectID), auditevent.ChainSeqNotNil()).
					Order(auditevent.ByChainSeq(sql.OrderDesc())).First(ctx)
				switch {
				case ent.IsNotFound(err):
				case err != nil:
					return err
				default:
					prev = link{seq: *top.ChainSeq, hash: deref(top.Hash)}
				}
			}
			next := link{seq: prev.seq + 1}
			if next.hash, err = audit.Link(prev.hash, next.seq, e); err != nil {
				return err
			}
			links = append(links, linked{id: e.ID, link: next})
			last[e.ProjectID] = next
		}
		n = len(events)
		return c.write(ctx, tx, links)
	})
	return n, err
}

type link struct {
	seq  int64
	hash string
}

type linked struct {
	id string
	link
}

// write sets the links of a batch in one statement: a statement per event (and ent's
// UpdateOne reads each row back, two) made chaining cost about as much store time as the
// writes it follows, on both stores. CAST, not PostgreSQL's ::, so both dialects take it.
func (c *Chainer) write(ctx context.Context, tx *ent.Tx, links []linked) error {
	if len(links) == 0 {
		return nil
	}
	d := dialect.SQLite
	if c.postgres {
		d = dialect.Postgres
	}
	b := sql.Dialect(d).Update(auditevent.Table)
	ids := make([]any, len(links))
	for i, l := range links {
		ids[i] = l.id
	}
	// Rendered in place, so that the arguments are numbered where they stand ($n).
	b.Set(auditevent.FieldChainSeq, sql.ExprFunc(func(x *sql.Builder) {
		x.WriteString("CASE ").Ident(auditevent.FieldID)
		for _, l := range links {
			x.WriteString(" WHEN ").Arg(l.id).WriteString(" THEN CAST(").Arg(l.seq).WriteString(" AS BIGINT)")
		}
		x.WriteString(" END")
	}))
	b.Set(auditevent.FieldHash, sql.ExprFunc(func(x *sql.Builder) {
		x.WriteString("CASE ").Ident(auditevent.FieldID)
		for _, l := range links {
			x.WriteString(" WHEN ").Arg(l.id).WriteString(" THEN ").Arg(l.hash)
		}
		x.WriteString(" END")
	}))
	query, args := b.Where(sql.In(auditevent.FieldID, ids...)).Query()
	_, err := tx.ExecContext(ctx, query, args...)
	return err
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
