package database

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
)

// Group commit for SQLite (SPEC §24). With synchronous=FULL every commit waits for the WAL
// to reach the disk, 1.6–2.3 ms on the build machine: one flush per write would cap durable
// writes near 500/s. So the writers of this process share transactions. SQLite lets one
// connection write at a time anyway; here every write through ent takes a process-wide
// slot (handed on in the order writers asked, instead of SQLite's busy handler, which
// sleeps 1, 2, 5 … 100 ms between tries while the lock sits free), and runs inside one
// open outer transaction, the group, as a member:
//
//   - a member is a SAVEPOINT: its statements run on the group's connection, it reads its
//     own writes and those of the members before it (which commit with it or not at all);
//     its rollback, or a statement that fails, undoes only its part;
//   - a member that ends well releases its savepoint and waits; the slot passes to the
//     next writer in line, who joins the same group;
//   - when nobody is waiting for the slot (or the group is full or old), the writer
//     releasing it commits the group, one COMMIT and one flush for all, and only then are
//     the members answered, each with the commit's outcome. Under concurrency the group
//     grows by itself: writers queue while a commit flushes.
//
// A member's statements see the effects of the earlier members of its group exactly as if
// those had committed before it: the schedule is serial, in slot order. What it cannot get
// is a commit of its own: a failure of the group's COMMIT (the disk, not a constraint) fails
// every member of that group with ErrUnavailable, and a member's own acknowledgement comes
// only after everything before it in the group is durable as well. Nothing is retried: a
// member's decisions depended on what it read, so replaying its statements elsewhere could
// change them. Nothing is acknowledged before its commit, so a crash or a kill loses only
// writes nobody was told about.
//
// Statements of a member run with the caller's context values but not its cancellation:
// SQLite's interrupt, which a cancelled context triggers, may roll back the whole
// transaction, and that transaction holds other callers' writes. A member whose context
// ends is stopped before its next statement instead, and at its commit (as database/sql
// does, the transaction is then undone).
//
// Other processes on the same file (an operator command) still meet SQLite's busy timeout.
// No driver or library offers this for database/sql, hence this driver.
type groupCommit struct {
	dialect.Driver // reads outside transactions: the pool, statements prepared once
	db             *sql.DB
	stmts          *stmtCache
	// wait bounds a writer's wait for the slot, like busy_timeout: past it, ErrUnavailable.
	wait time.Duration
	// maxMembers and maxAge bound a group while writers keep arriving, so its first
	// members are not held for ever.
	maxMembers int
	maxAge     time.Duration

	mu     sync.Mutex
	busy   bool      // someone holds the slot
	queue  []*waiter // writers waiting for the slot, in order
	open   *group    // the group under way; only the slot's holder uses it
	closed bool

	commits atomic.Int64 // groups committed: one WAL flush each under synchronous=FULL
	writes  atomic.Int64 // member transactions those groups committed
}

const (
	groupMaxMembers = 128
	groupMaxAge     = 10 * time.Millisecond
	// savepoint names every member's savepoint: one member runs at a time.
	sqlSavepoint = "SAVEPOINT m"
	sqlRelease   = "RELEASE m"
	sqlUndo      = "ROLLBACK TO m"
)

// errStoreClosed is what a writer that comes after the store closed gets.
var errStoreClosed = fmt.Errorf("%w: the store is closed", ErrUnavailable)

func newGroupCommit(p *preparedDriver, wait time.Duration) *groupCommit {
	return &groupCommit{Driver: p, db: p.cache.db, stmts: p.cache, wait: wait,
		maxMembers: groupMaxMembers, maxAge: groupMaxAge}
}

type waiter struct {
	ready   chan struct{}
	granted bool  // under groupCommit.mu
	err     error // set before ready closes when the store closed instead
}

// group is one outer transaction and what its members wait for.
type group struct {
	conn  *sql.Conn
	tx    *sql.Tx
	cache *stmtCache
	bound map[*sql.Stmt]*sql.Stmt // the cache's statements bound to tx
	began time.Time
	// members counts those released into the group, waiting for its commit; broken is why
	// it can no longer commit (a member's undo failed: SQLite may have rolled it all back).
	members int
	broken  error
	done    chan struct{}
	err     error // the commit's outcome, set before done closes
}

// acquire takes the slot, waiting in line at most g.wait.
func (g *groupCommit) acquire(ctx context.Context) error {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return errStoreClosed
	}
	if !g.busy && len(g.queue) == 0 {
		g.busy = true
		g.mu.Unlock()
		return nil
	}
	w := &waiter{ready: make(chan struct{})}
	g.queue = append(g.queue, w)
	g.mu.Unlock()
	t := time.NewTimer(g.wait)
	defer t.Stop()
	var err error
	select {
	case <-w.ready:
		return w.err
	case <-ctx.Done():
		err = ctx.Err()
	case <-t.C:
		err = fmt.Errorf("%w: no SQLite write slot within %v", ErrUnavailable, g.wait)
	}
	g.mu.Lock()
	if w.granted { // handed the slot as it gave up: pass it on
		g.mu.Unlock()
		g.release()
		return err
	}
	if w.err != nil {
		g.mu.Unlock()
		return w.err
	}
	for i, q := range g.queue {
		if q == w {
			g.queue = append(g.queue[:i], g.queue[i+1:]...)
			break
		}
	}
	g.mu.Unlock()
	return err
}

// release gives the slot up. The group under way commits first when nobody else waits for
// the slot (or the group is full, old, or broken); otherwise the next writer joins it.
func (g *groupCommit) release() {
	g.mu.Lock()
	if grp := g.open; grp != nil && (len(g.queue) == 0 || g.closed || grp.members >= g.maxMembers ||
		grp.broken != nil || time.Since(grp.began) >= g.maxAge) {
		g.open = nil
		g.mu.Unlock()
		g.finish(grp)
		g.mu.Lock()
	}
	if len(g.queue) > 0 && !g.closed {
		w := g.queue[0]
		g.queue = g.queue[1:]
		w.granted = true
		close(w.ready)
	} else {
		g.busy = false
	}
	g.mu.Unlock()
}

// begin makes the caller a member: the slot, the group (a new one when none is under
// way), its savepoint.
func (g *groupCommit) begin(ctx context.Context) (*memberTx, error) {
	if err := g.acquire(ctx); err != nil {
		return nil, err
	}
	g.mu.Lock()
	grp := g.open
	g.mu.Unlock()
	if grp == nil {
		var err error
		if grp, err = g.newGroup(ctx); err != nil {
			g.release()
			return nil, err
		}
		g.mu.Lock()
		g.open = grp
		g.mu.Unlock()
	}
	if _, err := grp.exec(context.WithoutCancel(ctx), sqlSavepoint); err != nil {
		grp.broken = err
		g.release()
		return nil, err
	}
	m := &memberTx{g: g, grp: grp, ctx: ctx}
	m.Conn = entsql.Conn{ExecQuerier: memberStatements{m}}
	return m, nil
}

// newGroup begins the outer transaction (BEGIN IMMEDIATE, from the DSN) on a connection
// of its own. Its context is not the caller's: the group outlives the caller's part in it.
func (g *groupCommit) newGroup(ctx context.Context) (*group, error) {
	conn, err := g.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	tx, err := conn.BeginTx(context.WithoutCancel(ctx), nil)
	if err != nil {
		conn.Close()
		return nil, err
	}
	return &group{conn: conn, tx: tx, cache: g.stmts, bound: map[*sql.Stmt]*sql.Stmt{}, began: time.Now(), done: make(chan struct{})}, nil
}

// finish commits the group, or rolls it back when it is broken or holds no member, and
// answers its members.
func (g *groupCommit) finish(grp *group) {
	var err error
	switch {
	case grp.broken != nil:
		err = fmt.Errorf("%w: the group of writes this one joined failed: %v", ErrUnavailable, grp.broken)
		_ = grp.tx.Rollback()
	case grp.members == 0:
		_ = grp.tx.Rollback()
	default:
		if cerr := grp.tx.Commit(); cerr != nil {
			err = fmt.Errorf("%w: committing a group of %d writes: %v", ErrUnavailable, grp.members, cerr)
			// A COMMIT that failed may leave SQLite inside the transaction: end it before the
			// connection goes back to the pool.
			_, _ = grp.conn.ExecContext(context.Background(), "ROLLBACK")
		} else {
			g.commits.Add(1)
			g.writes.Add(int64(grp.members))
		}
	}
	grp.conn.Close()
	grp.err = err
	close(grp.done)
}

// stmt is query bound to the group's transaction, or nil: run it as text.
func (grp *group) stmt(ctx context.Context, query string) *sql.Stmt {
	s := grp.cache.stmt(query)
	if s == nil {
		return nil
	}
	b, ok := grp.bound[s]
	if !ok {
		b = grp.tx.StmtContext(ctx, s)
		grp.bound[s] = b
	}
	return b
}

func (grp *group) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if s := grp.stmt(ctx, query); s != nil {
		return s.ExecContext(ctx, args...)
	}
	return grp.tx.ExecContext(ctx, query, args...)
}

func (grp *group) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if s := grp.stmt(ctx, query); s != nil {
		return s.QueryContext(ctx, args...)
	}
	return grp.tx.QueryContext(ctx, query, args...)
}

// Exec outside a transaction is a write (ent sends SELECTs through Query): a member of
// one statement.
func (g *groupCommit) Exec(ctx context.Context, query string, args, v any) error {
	m, err := g.begin(ctx)
	if err != nil {
		return err
	}
	if err := m.Exec(ctx, query, args, v); err != nil {
		_ = m.Rollback()
		return err
	}
	return m.Commit()
}

// Query outside a transaction reads the pool, unless it writes (INSERT … RETURNING): then
// it is a member that ends when its rows do.
func (g *groupCommit) Query(ctx context.Context, query string, args, v any) error {
	if isSelect(query) {
		return g.Driver.Query(ctx, query, args, v)
	}
	m, err := g.begin(ctx)
	if err != nil {
		return err
	}
	if err := m.Query(ctx, query, args, v); err != nil {
		_ = m.Rollback()
		return err
	}
	rows := v.(*entsql.Rows) // m.Query checked its type
	rows.ColumnScanner = &memberRows{ColumnScanner: rows.ColumnScanner, m: m}
	return nil
}

func (g *groupCommit) Tx(ctx context.Context) (dialect.Tx, error) { return g.begin(ctx) }

// BeginTx ignores opts: SQLite's transactions are serializable whatever they ask for.
func (g *groupCommit) BeginTx(ctx context.Context, _ *sql.TxOptions) (dialect.Tx, error) {
	return g.begin(ctx)
}

// Close waits for the slot, so that every group under way commits and its members are
// answered, then refuses writers and closes the store.
func (g *groupCommit) Close() error {
	g.mu.Lock()
	closed := g.closed
	g.mu.Unlock()
	if closed {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), g.wait)
	defer cancel()
	err := g.acquire(ctx)
	g.mu.Lock()
	g.closed = true
	grp := g.open
	if err == nil {
		g.open = nil
	}
	queue := g.queue
	g.queue = nil
	g.mu.Unlock()
	for _, w := range queue {
		w.err = errStoreClosed
		close(w.ready)
	}
	if grp != nil && err == nil {
		g.finish(grp)
	}
	if err != nil {
		err = fmt.Errorf("closing the store while a writer held it: %w", err)
	}
	return errors.Join(err, g.Driver.Close())
}

// Stats are the writes committed and the groups (commits, each one WAL flush) they took.
func (g *groupCommit) Stats() (writes, commits int64) { return g.writes.Load(), g.commits.Load() }

// memberTx is one caller's transaction inside a group.
type memberTx struct {
	entsql.Conn // Exec and Query, through memberStatements
	g           *groupCommit
	grp         *group
	ctx         context.Context // the caller's: once it ends, so does the member
	done        bool
}

// memberStatements runs a member's statements on the group's transaction.
type memberStatements struct{ m *memberTx }

func (m *memberTx) check(ctx context.Context) error {
	if m.done {
		return sql.ErrTxDone
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return m.ctx.Err()
}

func (s memberStatements) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if err := s.m.check(ctx); err != nil {
		return nil, err
	}
	return s.m.grp.exec(context.WithoutCancel(ctx), query, args...)
}

func (s memberStatements) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if err := s.m.check(ctx); err != nil {
		return nil, err
	}
	return s.m.grp.query(context.WithoutCancel(ctx), query, args...)
}

// Commit releases the member's savepoint, hands the slot on (committing the group when
// nobody waits), and returns once the group committed, with its outcome. A member whose
// context ended is undone instead.
func (m *memberTx) Commit() error {
	if m.done {
		return sql.ErrTxDone
	}
	if err := m.ctx.Err(); err != nil {
		return errors.Join(err, m.Rollback())
	}
	m.done = true
	grp := m.grp
	if _, err := grp.exec(context.WithoutCancel(m.ctx), sqlRelease); err != nil {
		m.undo()
		m.g.release()
		return err
	}
	m.g.mu.Lock()
	grp.members++
	m.g.mu.Unlock()
	m.g.release()
	<-grp.done
	return grp.err
}

// Rollback undoes the member's part only.
func (m *memberTx) Rollback() error {
	if m.done {
		return sql.ErrTxDone
	}
	m.done = true
	err := m.undo()
	m.g.release()
	return err
}

// undo rolls back to the member's savepoint and releases it. When that fails the group
// cannot commit (SQLite rolls back a whole transaction on some errors): it is broken.
func (m *memberTx) undo() error {
	ctx := context.WithoutCancel(m.ctx)
	_, err := m.grp.exec(ctx, sqlUndo)
	if err == nil {
		_, err = m.grp.exec(ctx, sqlRelease)
	}
	if err != nil {
		m.grp.broken = err
	}
	return err
}

// memberRows are the rows of a write sent with Query outside a transaction (INSERT …
// RETURNING). The member commits when they end without an error — after the last row, or
// at Close, since SQLite makes every change of such a statement at its first step — and
// Err (or Close) reports the commit's outcome; an error undoes it.
type memberRows struct {
	entsql.ColumnScanner
	m     *memberTx
	ended bool
	err   error
}

func (r *memberRows) Next() bool {
	if r.ended {
		return false
	}
	if r.ColumnScanner.Next() {
		return true
	}
	r.end()
	return false
}

func (r *memberRows) Err() error {
	if r.ended {
		return r.err
	}
	return r.ColumnScanner.Err()
}

func (r *memberRows) Close() error {
	r.end()
	return r.err
}

func (r *memberRows) end() {
	if r.ended {
		return
	}
	r.ended = true
	if err := errors.Join(r.ColumnScanner.Err(), r.ColumnScanner.Close()); err != nil {
		_ = r.m.Rollback()
		r.err = err
		return
	}
	r.err = r.m.Commit()
}

// waiting is how many writers wait for the slot (tests wait for a queue to form).
func (g *groupCommit) waiting() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.queue)
}

// ExecContext is Exec for plain SQL (ent's ExecContext: what platform/lifecycle writes
// kinds' tables with): a member of one statement.
func (g *groupCommit) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	m, err := g.begin(ctx)
	if err != nil {
		return nil, err
	}
	res, err := m.ExecContext(ctx, query, args...)
	if err != nil {
		_ = m.Rollback()
		return nil, err
	}
	return res, m.Commit()
}

// QueryContext is Query for plain SQL: reads go to the pool. A write returning rows would
// need its member kept open as long as the rows, which *sql.Rows cannot tell, so plain SQL
// writes go through ExecContext or a transaction.
func (g *groupCommit) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if !isSelect(query) {
		return nil, errors.New("database: a write through QueryContext outside a transaction: use ExecContext or a transaction")
	}
	return g.Driver.(execQuerier).QueryContext(ctx, query, args...)
}

// ExecContext and QueryContext run plain SQL in the member (ent's Tx.ExecContext and
// Tx.QueryContext reach them).
func (m *memberTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return memberStatements{m}.ExecContext(ctx, query, args...)
}

func (m *memberTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return memberStatements{m}.QueryContext(ctx, query, args...)
}
