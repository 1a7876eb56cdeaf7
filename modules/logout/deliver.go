package logout

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"entgo.io/ent/dialect/sql"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/appsession"
	"github.com/authcore/authcore/ent/logoutdelivery"
	"github.com/authcore/authcore/ent/schema"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/oauth"
	"github.com/authcore/authcore/platform/outbound"
)

// Delivery timing: a logout matters soon or not at all, so retries come quickly — the
// first within 5 s, then backoff to 10 minutes; eight attempts over about 30 minutes,
// then the delivery is given up (and stays listed, failed, with its last error). Waits
// are jittered by ±20 %.
var retryAfter = []time.Duration{5 * time.Second, 15 * time.Second, 30 * time.Second, time.Minute, 3 * time.Minute, 5 * time.Minute, 10 * time.Minute}

const (
	maxAttempts = 8
	batchSize   = 16
	maxResponse = 4 << 10
	// tokenTTL is how long a logout token is valid: it is read once, on arrival.
	tokenTTL = 2 * time.Minute
	// Retention is how long finished deliveries stay listed; sign-in records of sessions
	// that never ended as far as this server saw (they expired) go after as long.
	Retention  = 30 * 24 * time.Hour
	pruneEvery = time.Hour
)

// backChannelEvent is the event a logout token carries (Back-Channel Logout 1.0 §2.4).
const backChannelEvent = "http://schemas.openid.net/event/backchannel-logout"

// Timing is how the worker paces itself; tests shorten it.
type Timing struct {
	RequestTimeout time.Duration
	Lease          time.Duration
	PollEvery      time.Duration
}

// DefaultTiming is what the service runs with.
var DefaultTiming = Timing{RequestTimeout: 10 * time.Second, Lease: 30 * time.Second, PollEvery: 500 * time.Millisecond}

// run delivers what is due and prunes, hourly, what is past Retention.
func (s *Service) run(ctx context.Context) {
	ctx = identity.WithIssuer(ctx, s.cfg.SelfURL()) // the iss of every logout token
	if err := database.Drain(ctx, s.claim, s.send, func(d *ent.LogoutDelivery, err error) {
		s.log.Error("back-channel logout", "delivery", d.ID, "err", err)
	}); err != nil && ctx.Err() == nil {
		s.log.Error("back-channel logout deliveries", "err", err)
	}
	if now := s.clock.Now(); now.Sub(s.pruned) >= pruneEvery {
		if err := s.prune(ctx, now.Add(-Retention)); err != nil && ctx.Err() == nil {
			s.log.Error("pruning logout deliveries", "err", err)
		} else {
			s.pruned = now
		}
	}
}

// claim leases up to batchSize due deliveries: on PostgreSQL by FOR UPDATE SKIP LOCKED,
// so that of several replicas one sends each.
func (s *Service) claim(ctx context.Context) ([]*ent.LogoutDelivery, error) {
	now := s.clock.Now()
	var out []*ent.LogoutDelivery
	err := database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		q := tx.LogoutDelivery.Query().Where(logoutdelivery.StatusEQ(logoutdelivery.StatusPending), logoutdelivery.NextAttemptAtLTE(now),
			logoutdelivery.Or(logoutdelivery.LockedUntilIsNil(), logoutdelivery.LockedUntilLT(now))).
			Order(logoutdelivery.ByNextAttemptAt(), logoutdelivery.ByID()).Limit(batchSize)
		if s.postgres {
			q = q.ForUpdate(sql.WithLockAction(sql.SkipLocked))
		}
		ds, err := q.All(ctx)
		if err != nil || len(ds) == 0 {
			return err
		}
		ids := make([]string, len(ds))
		for i, d := range ds {
			ids[i] = d.ID
			d.Attempts++
		}
		out = ds
		return tx.LogoutDelivery.Update().Where(logoutdelivery.IDIn(ids...)).
			SetLockedUntil(now.Add(s.timing.Lease)).AddAttempts(1).SetLastAttemptAt(now).Exec(ctx)
	})
	return out, err
}

// send makes one attempt and records its outcome.
func (s *Service) send(ctx context.Context, d *ent.LogoutDelivery) error {
	alg := ""
	if cl, err := s.ent.OAuthClient.Get(ctx, d.ClientID); err == nil && slices.Contains(oauth.IDTokenAlgorithms, cl.IDTokenSignedResponseAlg) {
		alg = cl.IDTokenSignedResponseAlg // signed as the app's id_tokens are, for its verifier
	} else if err != nil && !ent.IsNotFound(err) {
		return err
	}
	now := s.clock.Now()
	token, err := s.signer.SignTyped(ctx, map[string]any{
		"aud": d.ClientID, "iat": now.Unix(), "exp": now.Add(tokenTTL).Unix(), "jti": schema.NewID("lgt_"),
		"sub": d.UserID, "sid": d.Sid, "events": map[string]any{backChannelEvent: map[string]any{}},
	}, alg, "logout+jwt")
	if err != nil {
		return err
	}
	// A worker stopped from here on leaves the lease to run out and the token to be sent
	// again: at least once (a receiver ignores a second logout of an ended session).
	code, sendErr := s.post(ctx, d.URL, token)
	u := s.ent.LogoutDelivery.UpdateOneID(d.ID).ClearLockedUntil()
	if code != 0 {
		u = u.SetLastStatusCode(code)
	}
	result := "delivered"
	switch {
	case sendErr == nil && (code == http.StatusOK || code == http.StatusNoContent):
		u = u.SetStatus(logoutdelivery.StatusDelivered).SetDeliveredAt(s.clock.Now()).ClearLastError()
	default:
		reason := fmt.Sprintf("answered %d", code)
		if sendErr != nil {
			reason = sendErr.Error()
		}
		u = u.SetLastError(outbound.Truncate(reason, 500))
		if d.Attempts >= maxAttempts {
			result = "failed"
			u = u.SetStatus(logoutdelivery.StatusFailed)
		} else {
			result = "retry"
			u = u.SetNextAttemptAt(s.clock.Now().Add(outbound.Jittered(retryAfter[d.Attempts-1])))
		}
	}
	s.results.WithLabelValues(result).Inc()
	return u.Exec(ctx)
}

// post sends the logout token as Back-Channel Logout 1.0 §2.5 says: a form POST.
func (s *Service) post(ctx context.Context, target, token string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timing.RequestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, strings.NewReader(url.Values{"logout_token": {token}}.Encode()))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("User-Agent", "authcore-logout")
	res, err := s.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, maxResponse))
	return res.StatusCode, nil
}

// prune deletes finished deliveries, and sign-in records, older than before.
func (s *Service) prune(ctx context.Context, before time.Time) error {
	if _, err := s.ent.LogoutDelivery.Delete().Where(logoutdelivery.StatusIn(logoutdelivery.StatusDelivered, logoutdelivery.StatusFailed),
		logoutdelivery.CreatedAtLT(before)).Exec(ctx); err != nil {
		return err
	}
	_, err := s.ent.AppSession.Delete().Where(appsession.CreatedAtLT(before.Add(-s.cfg.RefreshTTL))).Exec(ctx)
	return err
}
