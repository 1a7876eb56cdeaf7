package auditstream

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"entgo.io/ent/dialect/sql"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/auditstream"
	"github.com/authcore/authcore/ent/predicate"
	"github.com/authcore/authcore/modules/auditstream/sink"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/outbound"
	"github.com/authcore/authcore/platform/secret"
)

const (
	// batchSize bounds one batch (SPEC §28: ≤ 500 events or 1 s). The worker sends what
	// is chained as soon as the chainer wakes it, so an event waits for no fuller batch.
	batchSize = 500
	// claimSize bounds the streams one replica sends at once.
	claimSize = 16
	// pauseAfter is how long a stream may fail before it is paused and its admins mailed.
	pauseAfter = 24 * time.Hour
	// maxBackoff caps the wait between two attempts.
	maxBackoff = time.Hour
)

// Timing is how the worker paces itself; tests shorten it.
type Timing struct {
	// RequestTimeout bounds one send. Lease is renewed while a send is out (every third of
	// it), so a stream becomes another replica's only when its sender died or stopped.
	RequestTimeout time.Duration
	Lease          time.Duration
	PollEvery      time.Duration
}

// DefaultTiming is what the service runs with.
var DefaultTiming = Timing{RequestTimeout: 10 * time.Second, Lease: 6 * time.Second, PollEvery: time.Second}

// opened is what a sink needs of a stream's sealed columns, opened.
type opened struct {
	SigningKey      []byte // https: the whsec_ key
	SecretAccessKey string // s3
}

// targets are the sinks and formats this build has: a type or a format without one is
// refused when a stream is created.
type targets struct {
	open   map[auditstream.Type]func(st *ent.AuditStream, o opened) (sink.Sink, error)
	render map[string]func(e *ent.AuditEvent) (json.RawMessage, error)
}

func (t *targets) has(typ string) bool        { _, ok := t.open[auditstream.Type(typ)]; return ok }
func (t *targets) renders(format string) bool { _, ok := t.render[format]; return ok }

// event is e as a sink sends it, its body in format.
func (t *targets) event(format string, e *ent.AuditEvent) (sink.Event, error) {
	r, ok := t.render[format]
	if !ok {
		return sink.Event{}, fmt.Errorf("no renderer for format %q", format)
	}
	body, err := r(e)
	if err != nil {
		return sink.Event{}, err
	}
	ev := sink.Event{ID: e.ID, Time: e.CreatedAt.UTC(), Action: e.Action, Body: body}
	if e.ChainSeq != nil {
		ev.Seq = *e.ChainSeq
	}
	if e.Hash != nil {
		ev.Hash = *e.Hash
	}
	return ev, nil
}

func newTargets(client *http.Client, policy outbound.Policy, roots *x509.CertPool, clk clock.Clock) *targets {
	// Syslog dials as the HTTP sinks do: only what the outbound policy allows, checked on
	// the address actually dialled.
	dialer := &net.Dialer{Timeout: 5 * time.Second, Control: policy.Control}
	return &targets{
		open: map[auditstream.Type]func(*ent.AuditStream, opened) (sink.Sink, error){
			auditstream.TypeHTTPS: func(st *ent.AuditStream, o opened) (sink.Sink, error) {
				return sink.NewHTTPS(*st.URL, o.SigningKey, client, clk.Now)
			},
			auditstream.TypeOtlp: func(st *ent.AuditStream, _ opened) (sink.Sink, error) {
				return sink.NewOTLP(sink.OTLPConfig{URL: *st.URL, HTTPClient: client}), nil
			},
			auditstream.TypeS3: func(st *ent.AuditStream, o opened) (sink.Sink, error) {
				return sink.NewS3(sink.S3Config{Endpoint: deref(st.Endpoint), Region: deref(st.Region), Bucket: deref(st.Bucket),
					Prefix: deref(st.Prefix), AccessKeyID: deref(st.AccessKeyID), SecretAccessKey: o.SecretAccessKey,
					PathStyle: st.PathStyle, HTTPClient: client})
			},
			auditstream.TypeSyslog: func(st *ent.AuditStream, _ opened) (sink.Sink, error) {
				c := sink.SyslogConfig{Address: net.JoinHostPort(deref(st.Host), strconv.Itoa(derefInt(st.Port))), Dial: dialer.DialContext}
				if st.TLS {
					c.TLS = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
				}
				return sink.NewSyslog(c), nil
			},
		},
		render: map[string]func(*ent.AuditEvent) (json.RawMessage, error){
			sink.Native: renderNative,
			sink.OCSF:   sink.RenderOCSF,
		},
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func derefInt(i *int) int {
	if i == nil {
		return 0
	}
	return *i
}

// worker sends every stream's events on this replica. Each stream is sent by one
// replica at a time: on PostgreSQL it is claimed by SELECT … FOR UPDATE SKIP LOCKED, then
// a lease; SQLite has one writer at a time anyway. The cursor moves only after the
// receiver took a batch, in the same write as the last delivered id, so a crash between
// the two sends the batch again (at least once, same event ids).
type worker struct {
	ent      *ent.Client
	chain    *audit.Recorder
	clock    clock.Clock
	keys     *secret.Keyring
	log      *slog.Logger
	postgres bool
	timing   Timing
	targets  *targets
	metrics  *streamMetrics
	paused   *pauseMail
	wake     database.Wake
}

// nudge wakes the worker (non-blocking).
func (w *worker) nudge() { w.wake.Ring() }

// pass sends what is due.
func (w *worker) pass(ctx context.Context) {
	if err := w.drain(ctx); err != nil && ctx.Err() == nil {
		w.log.Error("audit stream deliveries", "err", err)
	}
}

// drain sends every due stream's events, a claim at a time.
func (w *worker) drain(ctx context.Context) error {
	return database.Drain(ctx, w.claim, w.deliver, func(st *ent.AuditStream, err error) {
		w.log.Error("audit stream delivery", "stream", st.ID, "err", err)
	})
}

// claim leases up to claimSize streams that are due and have events beyond their cursor.
func (w *worker) claim(ctx context.Context) ([]*ent.AuditStream, error) {
	now := w.clock.Now()
	due := []predicate.AuditStream{
		auditstream.PausedAtIsNil(),
		auditstream.Or(auditstream.NextAttemptAtIsNil(), auditstream.NextAttemptAtLTE(now)),
		auditstream.Or(auditstream.LockedUntilIsNil(), auditstream.LockedUntilLT(now)),
		audit.ChainedBeyond(auditstream.FieldProjectID, auditstream.FieldCursor),
	}
	// A read first: most polls find nothing due, and need no write transaction.
	if found, err := w.ent.AuditStream.Query().Where(due...).Exist(ctx); err != nil || !found {
		return nil, err
	}
	var out []*ent.AuditStream
	err := database.WithTx(ctx, w.ent, func(tx *ent.Tx) error {
		q := tx.AuditStream.Query().Where(due...).Order(auditstream.ByID()).Limit(claimSize)
		if w.postgres {
			q = q.ForUpdate(sql.WithLockAction(sql.SkipLocked))
		}
		sts, err := q.All(ctx)
		if err != nil || len(sts) == 0 {
			return err
		}
		ids := make([]string, len(sts))
		for i, st := range sts {
			ids[i] = st.ID
		}
		if err := tx.AuditStream.Update().Where(auditstream.IDIn(ids...)).SetLockedUntil(now.Add(w.timing.Lease)).Exec(ctx); err != nil {
			return err
		}
		out = sts
		return nil
	})
	return out, err
}

// deliver sends st's events after its cursor, a batch at a time while it holds the lease.
func (w *worker) deliver(ctx context.Context, st *ent.AuditStream) error {
	for {
		events, err := w.chain.ChainedAfter(ctx, st.ProjectID, st.Cursor, batchSize)
		if err != nil {
			return errors.Join(err, w.release(ctx, st))
		}
		if len(events) == 0 {
			return w.release(ctx, st)
		}
		last := *events[len(events)-1].ChainSeq
		batch := make([]sink.Event, 0, len(events))
		for _, e := range events {
			// What the filter leaves out still moves the cursor.
			if !matches(st.Actions, e.Action) {
				continue
			}
			ev, err := w.targets.event(st.Format.String(), e)
			if err != nil {
				return errors.Join(err, w.release(ctx, st))
			}
			batch = append(batch, ev)
		}
		if len(batch) > 0 {
			stop := w.hold(ctx, st)
			err := w.sendBatch(ctx, st, batch)
			stop()
			if err != nil {
				if ctx.Err() != nil {
					// Stopping, not failing: give the lease back so the next start (or another
					// replica) sends this batch again at once. A killed process leaves the lease
					// to run out instead.
					return w.release(context.WithoutCancel(ctx), st)
				}
				w.metrics.deliveries.WithLabelValues(st.Type.String(), "failed").Inc()
				return w.fail(ctx, st, err)
			}
			w.metrics.deliveries.WithLabelValues(st.Type.String(), "succeeded").Inc()
			w.metrics.events.WithLabelValues(st.Type.String()).Add(float64(len(batch)))
		}
		more := len(events) == batchSize
		now := w.clock.Now()
		u := w.ent.AuditStream.Update().Where(auditstream.ID(st.ID), auditstream.Generation(st.Generation)).
			SetCursor(last).ClearFailingSince().SetFailures(0).ClearNextAttemptAt().ClearLastError()
		if len(batch) > 0 {
			u = u.SetLastDeliveredID(batch[len(batch)-1].ID)
		}
		if more {
			u = u.SetLockedUntil(now.Add(w.timing.Lease))
		} else {
			u = u.ClearLockedUntil()
		}
		n, err := u.Save(ctx)
		if err != nil {
			return err
		}
		if n == 0 {
			// Replayed (or deleted) while the batch was out: the replay's cursor stands.
			return w.release(ctx, st)
		}
		if !more {
			return nil
		}
		st.Cursor = last
	}
}

// hold renews st's lease while a batch is out, so that the lease can be short: a sender
// that dies stops renewing, and another replica takes the stream over within one lease
// (seconds) instead of after the longest a send may take.
func (w *worker) hold(ctx context.Context, st *ent.AuditStream) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(w.timing.Lease / 3)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := w.ent.AuditStream.UpdateOneID(st.ID).SetLockedUntil(w.clock.Now().Add(w.timing.Lease)).Exec(ctx); err != nil && ctx.Err() == nil {
					w.log.Warn("renewing an audit stream's lease", "stream", st.ID, "err", err)
				}
			}
		}
	}()
	return func() { cancel(); <-done }
}

// sendBatch opens st's sink, sends batch through it and closes it.
func (w *worker) sendBatch(ctx context.Context, st *ent.AuditStream, batch []sink.Event) error {
	open, ok := w.targets.open[st.Type]
	if !ok {
		return fmt.Errorf("%s streams are not available in this build", st.Type)
	}
	var o opened
	var err error
	if st.SecretSealed != nil {
		if o.SigningKey, err = w.keys.Open(*st.SecretSealed, []byte(st.ID)); err != nil {
			return err
		}
	}
	if st.SecretAccessKeySealed != nil {
		k, err := w.keys.Open(*st.SecretAccessKeySealed, []byte(st.ID))
		if err != nil {
			return err
		}
		o.SecretAccessKey = string(k)
	}
	s, err := open(st, o)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, w.timing.RequestTimeout)
	defer cancel()
	err = s.Send(ctx, batch)
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	return err
}

// fail records a failed batch: backoff, the error, and after 24 h of failure the pause
// and the admins' mail (once: only the write that pauses the stream mails).
func (w *worker) fail(ctx context.Context, st *ent.AuditStream, sendErr error) error {
	now := w.clock.Now()
	failures := st.Failures + 1
	since := now
	if st.FailingSince != nil {
		since = *st.FailingSince
	}
	u := w.ent.AuditStream.Update().Where(auditstream.ID(st.ID), auditstream.Generation(st.Generation), auditstream.PausedAtIsNil()).
		SetFailures(failures).SetLastError(clip(sendErr.Error(), 500)).SetFailingSince(since).
		SetNextAttemptAt(now.Add(backoff(failures))).ClearLockedUntil()
	pause := now.Sub(since) >= pauseAfter
	if pause {
		u = u.SetPausedAt(now)
	}
	n, err := u.Save(ctx)
	if err != nil {
		return err
	}
	if n == 0 {
		return w.release(ctx, st)
	}
	if pause {
		st.LastError = new(string)
		*st.LastError = clip(sendErr.Error(), 500)
		if err := w.paused.send(ctx, st); err != nil {
			w.log.Error("mailing the admins of a paused audit stream", "stream", st.ID, "err", err)
		}
	}
	return nil
}

// release gives st's lease back.
func (w *worker) release(ctx context.Context, st *ent.AuditStream) error {
	_, err := w.ent.AuditStream.Update().Where(auditstream.ID(st.ID)).ClearLockedUntil().Save(ctx)
	return err
}

// backoff is the wait after the n-th failure in a row: 2 s doubling up to an hour, each
// jittered by ±20 % so that streams failing together do not retry together.
func backoff(n int) time.Duration {
	d := maxBackoff
	if n < 12 {
		d = min(maxBackoff, 2*time.Second<<(n-1))
	}
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
}

// matches says whether the filter's globs take action (no globs: every action).
func matches(globs []string, action string) bool {
	if len(globs) == 0 {
		return true
	}
	for _, g := range globs {
		if ok, _ := path.Match(g, action); ok {
			return true
		}
	}
	return false
}

// clip cuts s to at most n bytes, on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}
