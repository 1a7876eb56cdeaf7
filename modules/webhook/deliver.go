package webhook

import (
	"bytes"
	"context"
	"crypto/x509"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"entgo.io/ent/dialect/sql"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/event"
	"github.com/authcore/authcore/ent/webhookdelivery"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/outbound"
	"github.com/authcore/authcore/platform/secret"
)

// Delivery timing (SPEC §12): the first retry within 10 s, then backoff to an hour; seven
// attempts in all over about 1 h 45 min. Each wait is jittered by ±20 % so a receiver that
// comes back is not hit by every retry at once.
var retryAfter = []time.Duration{5 * time.Second, 30 * time.Second, 2 * time.Minute, 10 * time.Minute, 30 * time.Minute, time.Hour}

// Retention: delivered and given-up deliveries, and events nothing still waits for, are
// kept this long (the deliveries list and the event log), then pruned hourly.
const (
	Retention  = 30 * 24 * time.Hour
	pruneEvery = time.Hour
)

const (
	maxAttempts = 7
	batchSize   = 16
	// maxResponse is how much of an answer is read (and then discarded).
	maxResponse = 4 << 10
)

// Timing is how the worker paces itself; tests shorten it.
type Timing struct {
	// RequestTimeout bounds one attempt, connect to last byte. Lease outlasts it, so a
	// delivery becomes another worker's only when its sender surely gave up or died.
	RequestTimeout time.Duration
	Lease          time.Duration
	PollEvery      time.Duration
}

// DefaultTiming is what the service runs with.
var DefaultTiming = Timing{RequestTimeout: 10 * time.Second, Lease: 30 * time.Second, PollEvery: 500 * time.Millisecond}

// worker drains the delivery queue on this replica. With several replicas, each delivery
// is claimed by one of them: on PostgreSQL by SELECT … FOR UPDATE SKIP LOCKED, then a
// lease; SQLite has one writer at a time anyway.
type worker struct {
	ent      *ent.Client
	clock    clock.Clock
	keys     *secret.Keyring
	log      *slog.Logger
	client   *http.Client
	postgres bool
	wake     database.Wake // rung when an event is committed
	timing   Timing
	pruned   time.Time // the last prune, for the loop alone
	results  outcomes
}

// outcomes is its own type so the graph never confuses it with another module's counter.
type outcomes struct{ *prometheus.CounterVec }

// newResults counts attempts by outcome: authcore_webhook_deliveries_total{result}
// (succeeded; retry: failed, will try again; failed: failed for the last time).
func newResults() outcomes {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "authcore_webhook_deliveries_total",
		Help: "Webhook delivery attempts, by outcome: succeeded, retry (failed, will try again), failed (gave up).",
	}, []string{"result"})
	// Every outcome is there from the start, at 0, so rates and alerts see a series.
	for _, r := range []string{"succeeded", "retry", "failed"} {
		c.WithLabelValues(r)
	}
	return outcomes{c}
}

func newWorker(c *ent.Client, clk clock.Clock, keys *secret.Keyring, log *slog.Logger, policy outbound.Policy, roots *x509.CertPool, postgres bool, t Timing, results outcomes) *worker {
	transport := policy.Transport(t.RequestTimeout, roots)
	return &worker{
		ent: c, clock: clk, keys: keys, log: log, postgres: postgres, timing: t, results: results,
		wake: database.NewWake(),
		client: &http.Client{Transport: transport, Timeout: t.RequestTimeout,
			// A redirect is an answer, not an instruction: it is recorded as a failure.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
	}
}

// run delivers what is due and, every pruneEvery, prunes what is past Retention;
// failures are logged and the next round tries again.
func (w *worker) run(ctx context.Context) {
	if err := w.drain(ctx); err != nil && ctx.Err() == nil {
		w.log.Error("webhook deliveries", "err", err)
	}
	if now := w.clock.Now(); now.Sub(w.pruned) >= pruneEvery {
		if err := w.prune(ctx, now.Add(-Retention)); err != nil && ctx.Err() == nil {
			w.log.Error("pruning webhook deliveries", "err", err)
		} else {
			w.pruned = now
		}
	}
}

// drain sends every due delivery, a batch at a time.
func (w *worker) drain(ctx context.Context) error {
	return database.Drain(ctx, w.claim, w.send, func(d *ent.WebhookDelivery, err error) { w.log.Error("webhook delivery", "delivery", d.ID, "err", err) })
}

// claim takes up to batchSize due deliveries, each the oldest pending one of its webhook
// (one in flight per webhook, in order), and leases them.
func (w *worker) claim(ctx context.Context) ([]*ent.WebhookDelivery, error) {
	now := w.clock.Now()
	var out []*ent.WebhookDelivery
	err := database.WithTx(ctx, w.ent, func(tx *ent.Tx) error {
		q := tx.WebhookDelivery.Query().
			Where(
				webhookdelivery.StatusEQ(webhookdelivery.StatusPending),
				webhookdelivery.NextAttemptAtLTE(now),
				webhookdelivery.Or(webhookdelivery.LockedUntilIsNil(), webhookdelivery.LockedUntilLT(now)),
				headOfQueue,
			).
			Order(webhookdelivery.ByNextAttemptAt(), webhookdelivery.ByID()).
			Limit(batchSize)
		if w.postgres {
			q = q.ForUpdate(sql.WithLockAction(sql.SkipLocked))
		}
		ds, err := q.All(ctx)
		if err != nil || len(ds) == 0 {
			return err
		}
		ids := make([]string, len(ds))
		for i, d := range ds {
			ids[i] = d.ID
		}
		if err := tx.WebhookDelivery.Update().Where(webhookdelivery.IDIn(ids...)).
			SetLockedUntil(now.Add(w.timing.Lease)).AddAttempts(1).SetLastAttemptAt(now).Exec(ctx); err != nil {
			return err
		}
		for _, d := range ds {
			d.Attempts++
		}
		out = ds
		return nil
	})
	return out, err
}

// prune deletes finished deliveries and events older than before, keeping any event a
// pending delivery still needs. Replicas may prune at once: deletes are idempotent.
func (w *worker) prune(ctx context.Context, before time.Time) error {
	if _, err := w.ent.WebhookDelivery.Delete().Where(
		webhookdelivery.StatusIn(webhookdelivery.StatusSucceeded, webhookdelivery.StatusFailed),
		webhookdelivery.CreatedAtLT(before),
	).Exec(ctx); err != nil {
		return err
	}
	_, err := w.ent.Event.Delete().Where(event.CreatedAtLT(before), func(s *sql.Selector) {
		d := sql.Table(webhookdelivery.Table)
		s.Where(sql.Not(sql.Exists(sql.Select(d.C(webhookdelivery.FieldID)).From(d).Where(sql.And(
			sql.ColumnsEQ(d.C(webhookdelivery.FieldEventID), s.C(event.FieldID)),
			sql.EQ(d.C(webhookdelivery.FieldStatus), webhookdelivery.StatusPending.String()),
		)))))
	}).Exec(ctx)
	return err
}

// headOfQueue keeps a delivery only when no older delivery of its webhook is pending.
func headOfQueue(s *sql.Selector) {
	older := sql.Table(webhookdelivery.Table).As("older")
	s.Where(sql.Not(sql.Exists(
		sql.Select(older.C(webhookdelivery.FieldID)).From(older).Where(sql.And(
			sql.ColumnsEQ(older.C(webhookdelivery.FieldWebhookID), s.C(webhookdelivery.FieldWebhookID)),
			sql.EQ(older.C(webhookdelivery.FieldStatus), webhookdelivery.StatusPending.String()),
			sql.ColumnsLT(older.C(webhookdelivery.FieldID), s.C(webhookdelivery.FieldID)),
		)),
	)))
}

// send makes one attempt and records its outcome.
func (w *worker) send(ctx context.Context, d *ent.WebhookDelivery) error {
	hook, err := w.ent.Webhook.Get(ctx, d.WebhookID)
	if ent.IsNotFound(err) {
		return nil // deleted meanwhile, with its deliveries
	}
	if err != nil {
		return err
	}
	ev, err := w.ent.Event.Get(ctx, d.EventID)
	if err != nil {
		return err
	}
	key, err := w.keys.Open(hook.SecretSealed, []byte(hook.ID))
	if err != nil {
		return err
	}
	// A worker stopped or killed from here on leaves the lease to run out and the
	// delivery to be sent again: at least once.
	code, sendErr := w.post(ctx, hook.URL, key, ev)
	now := w.clock.Now()
	u := w.ent.WebhookDelivery.UpdateOneID(d.ID).ClearLockedUntil()
	if code != 0 {
		u = u.SetLastStatusCode(code)
	} else {
		u = u.ClearLastStatusCode()
	}
	result := "succeeded"
	switch {
	case sendErr == nil && code >= 200 && code < 300:
		u = u.SetStatus(webhookdelivery.StatusSucceeded).SetDeliveredAt(now).ClearLastError()
	default:
		reason := fmt.Sprintf("answered %d", code)
		if sendErr != nil {
			reason = sendErr.Error()
		}
		u = u.SetLastError(outbound.Truncate(reason, 500))
		if d.Attempts >= maxAttempts {
			result = "failed"
			u = u.SetStatus(webhookdelivery.StatusFailed)
		} else {
			result = "retry"
			u = u.SetNextAttemptAt(now.Add(outbound.Jittered(retryAfter[d.Attempts-1])))
		}
	}
	w.results.WithLabelValues(result).Inc()
	err = u.Exec(ctx)
	if ent.IsNotFound(err) {
		return nil
	}
	return err
}

// post sends the event to url signed as Standard Webhooks says: webhook-id (the event's
// id, the same on every retry, for the receiver to deduplicate), webhook-timestamp and
// webhook-signature "v1,<base64 HMAC-SHA256 of id.timestamp.body>".
func (w *worker) post(ctx context.Context, url string, key []byte, ev *ent.Event) (int, error) {
	signer, err := standardwebhooks.NewWebhookRaw(key)
	if err != nil {
		return 0, err
	}
	ts := w.clock.Now()
	sig, err := signer.Sign(ev.ID, ts, ev.Body)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, w.timing.RequestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(ev.Body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "authcore-webhooks")
	req.Header.Set("webhook-id", ev.ID)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(ts.Unix(), 10))
	req.Header.Set("webhook-signature", sig)
	res, err := w.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, maxResponse))
	return res.StatusCode, nil
}
