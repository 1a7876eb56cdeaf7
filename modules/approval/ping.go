package approval

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"entgo.io/ent/dialect/sql"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/backchannelclient"
	"github.com/authcore/authcore/ent/backchannelrequest"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/outbound"
	"github.com/authcore/authcore/platform/secret"
)

// Ping delivery (CIBA §10.2 under SPEC §12's webhook rules): at least once, while the
// request lives, retried after these waits; each attempt at most pingTimeout, held by its
// sender for pingLease so that no other replica sends it meanwhile.
var pingRetries = []time.Duration{2 * time.Second, 10 * time.Second, 30 * time.Second, 2 * time.Minute, 5 * time.Minute}

const (
	maxPingAttempts = 6
	pingTimeout     = 10 * time.Second
	pingLease       = 30 * time.Second
	pingEvery       = 500 * time.Millisecond
	pingBatch       = 16
)

// pinger sends the pings of decided requests to their clients' notification endpoints.
type pinger struct {
	ent    *ent.Client
	clock  clock.Clock
	keys   *secret.Keyring
	log    *slog.Logger
	client *http.Client
	wake   database.Wake // rung when a request was just decided
}

func newPinger(c *ent.Client, clk clock.Clock, keys *secret.Keyring, log *slog.Logger, policy outbound.Policy, roots *x509.CertPool) *pinger {
	return &pinger{ent: c, clock: clk, keys: keys, log: log, wake: database.NewWake(),
		client: &http.Client{Transport: policy.Transport(pingTimeout, roots), Timeout: pingTimeout,
			// A redirect is an answer, not an instruction: the ping failed.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// run sends what is due; failures are logged and the next round tries again.
func (p *pinger) run(ctx context.Context) {
	if err := p.drain(ctx); err != nil && ctx.Err() == nil {
		p.log.Error("backchannel pings", "error", err)
	}
}

// drain sends every ping that is due and that no other sender holds.
func (p *pinger) drain(ctx context.Context) error {
	now := p.clock.Now()
	free := backchannelrequest.Or(backchannelrequest.PingLockedUntilIsNil(), backchannelrequest.PingLockedUntilLT(now))
	due, err := p.ent.BackchannelRequest.Query().Where(backchannelrequest.PingNextAtLTE(now), backchannelrequest.PingDeliveredAtIsNil(), free).
		Order(backchannelrequest.ByPingNextAt(sql.OrderAsc())).Limit(pingBatch).All(ctx)
	if err != nil {
		return err
	}
	for _, r := range due {
		// Claim it: of two replicas reading the same row, one update finds it unchanged.
		n, err := p.ent.BackchannelRequest.Update().Where(backchannelrequest.ID(r.ID), backchannelrequest.PingAttempts(r.PingAttempts),
			backchannelrequest.Or(backchannelrequest.PingLockedUntilIsNil(), backchannelrequest.PingLockedUntilLT(now))).
			SetPingLockedUntil(now.Add(pingLease)).AddPingAttempts(1).Save(ctx)
		if err != nil {
			return err
		}
		if n == 1 {
			r.PingAttempts++
			if err := p.send(ctx, r); err != nil {
				return err
			}
		}
	}
	return nil
}

// send makes one attempt and records its outcome.
func (p *pinger) send(ctx context.Context, r *ent.BackchannelRequest) error {
	failure := p.attempt(ctx, r)
	now := p.clock.Now()
	up := p.ent.BackchannelRequest.UpdateOneID(r.ID).ClearPingLockedUntil()
	switch {
	case failure == "":
		up = up.SetPingDeliveredAt(now).ClearPingNextAt().SetPingLastError("")
	case r.PingAttempts < maxPingAttempts && now.Before(r.ExpiresAt):
		up = up.SetPingNextAt(now.Add(pingRetries[r.PingAttempts-1])).SetPingLastError(failure)
	default: // given up: the client may still poll until the request expires
		up = up.ClearPingNextAt().SetPingLastError(failure)
	}
	return up.Exec(ctx)
}

// attempt posts the ping: CIBA's body and bearer token, signed as Standard Webhooks say
// (webhook-id is the request's id, the same on every retry). It returns why it failed,
// or "".
func (p *pinger) attempt(ctx context.Context, r *ent.BackchannelRequest) string {
	reg, err := p.ent.BackchannelClient.Query().Where(backchannelclient.ProjectID(r.ProjectID), backchannelclient.ClientID(r.ClientID)).Only(ctx)
	if err != nil || reg.DeliveryMode != backchannelclient.DeliveryModePing {
		return "the client no longer takes pings"
	}
	opened, err := p.keys.Open(r.PingSealed, []byte(r.ID))
	if err != nil {
		return "the ping could not be opened"
	}
	var ps pingSealed
	if err := json.Unmarshal(opened, &ps); err != nil {
		return "the ping could not be read"
	}
	key, err := p.keys.Open(reg.SecretSealed, []byte(reg.ID))
	if err != nil {
		return "the client's signing secret could not be opened"
	}
	body, _ := json.Marshal(map[string]string{"auth_req_id": ps.AuthReqID})
	signer, err := standardwebhooks.NewWebhookRaw(key)
	if err != nil {
		return err.Error()
	}
	ts := p.clock.Now()
	sig, err := signer.Sign(r.ID, ts, body)
	if err != nil {
		return err.Error()
	}
	ctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, reg.NotificationEndpoint, bytes.NewReader(body))
	if err != nil {
		return err.Error()
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "authcore-ciba")
	req.Header.Set("Authorization", "Bearer "+ps.NotificationToken)
	req.Header.Set("webhook-id", r.ID)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(ts.Unix(), 10))
	req.Header.Set("webhook-signature", sig)
	res, err := p.client.Do(req)
	if err != nil {
		return outbound.Truncate(err.Error(), 300)
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 4<<10))
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return fmt.Sprintf("answered %d", res.StatusCode)
	}
	return ""
}
