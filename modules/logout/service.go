package logout

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/appsession"
	"github.com/authcore/authcore/ent/oauthclient"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/oauth"
)

// Service is the memory of which apps each SSO session signed in to, and the queue of
// logout tokens owed to them.
type Service struct {
	ent      *ent.Client
	clock    clock.Clock
	log      *slog.Logger
	cfg      config.Config
	signer   oauth.Signer
	timing   Timing
	results  outcomes
	client   *http.Client
	postgres bool
	wake     database.Wake
	pruned   time.Time
}

// outcomes is its own type so the graph never confuses it with another module's counter.
type outcomes struct{ *prometheus.CounterVec }

// newResults counts delivery attempts by outcome: authcore_logout_deliveries_total{result}.
func newResults() outcomes {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "authcore_logout_deliveries_total",
		Help: "Back-channel logout token deliveries, by outcome: delivered, retry (failed, will try again), failed (gave up).",
	}, []string{"result"})
	for _, r := range []string{"delivered", "retry", "failed"} {
		c.WithLabelValues(r)
	}
	return outcomes{c}
}

func newServiceWith(c *ent.Client, clk clock.Clock, log *slog.Logger, cfg config.Config, signer oauth.Signer, t Timing, results outcomes, transport http.RoundTripper, postgres bool) *Service {
	return &Service{ent: c, clock: clk, log: log, cfg: cfg, signer: signer, timing: t, results: results, postgres: postgres,
		wake: database.NewWake(),
		client: &http.Client{Transport: transport, Timeout: t.RequestTimeout,
			// A redirect is an answer, not an instruction: it is recorded as a failure.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

var _ oauth.AppSessions = (*Service)(nil)

// Joined records, in the code's transaction, that session sid signed userID in to the
// app; a second sign-in of the same session to the same app adds nothing. (Ignore, not
// DoNothing: ent reads the row back, and DO NOTHING returns none on a conflict.)
func (s *Service) Joined(ctx context.Context, tx *ent.Tx, sid, clientID, userID, projectID string) error {
	return tx.AppSession.Create().SetSid(sid).SetClientID(clientID).SetUserID(userID).SetProjectID(projectID).
		OnConflictColumns(appsession.FieldSid, appsession.FieldClientID).Ignore().Exec(ctx)
}

// FrontChannel is the front-channel logout URL, with iss and sid (Front-Channel Logout
// 1.0 §2), of each app sid signed in to that registered one. It is asked before the
// session ends: the records go with it.
func (s *Service) FrontChannel(ctx context.Context, sid string) ([]string, error) {
	apps, err := s.apps(ctx, s.ent, []string{sid})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, a := range apps {
		if a.client.FrontchannelLogoutURI == "" {
			continue
		}
		u, err := url.Parse(a.client.FrontchannelLogoutURI)
		if err != nil {
			continue // registered URIs parse; an unreadable one is skipped, not fatal to logout
		}
		q := u.Query()
		q.Set("iss", s.cfg.SelfURL())
		q.Set("sid", a.row.Sid)
		u.RawQuery = q.Encode()
		out = append(out, u.String())
	}
	return out, nil
}

// joined is an app a session signed in to, with the app's registration.
type joined struct {
	row    *ent.AppSession
	client *ent.OAuthClient
}

// apps reads what sids signed in to; apps deleted since are left out.
func (s *Service) apps(ctx context.Context, c *ent.Client, sids []string) ([]joined, error) {
	rows, err := c.AppSession.Query().Where(appsession.SidIn(sids...)).All(ctx)
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	ids := make([]string, 0, len(rows))
	for _, r := range rows {
		if !slices.Contains(ids, r.ClientID) {
			ids = append(ids, r.ClientID)
		}
	}
	clients, err := c.OAuthClient.Query().Where(oauthclient.IDIn(ids...)).All(ctx)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]*ent.OAuthClient, len(clients))
	for _, cl := range clients {
		byID[cl.ID] = cl
	}
	out := make([]joined, 0, len(rows))
	for _, r := range rows {
		if cl, ok := byID[r.ClientID]; ok {
			out = append(out, joined{row: r, client: cl})
		}
	}
	return out, nil
}

// SessionsEnded queues, in the transaction that ends the sessions, one logout token for
// each app with a back-channel URI that they signed in to, and forgets what they signed
// in to. Apps a session never signed in to hear nothing.
func (s *Service) SessionsEnded(ctx context.Context, tx *ent.Tx, sids []string) error {
	apps, err := s.apps(ctx, tx.Client(), sids)
	if err != nil || len(apps) == 0 {
		return err
	}
	now := s.clock.Now()
	queued := make([]*ent.LogoutDeliveryCreate, 0, len(apps))
	for _, a := range apps {
		if a.client.BackchannelLogoutURI == "" {
			continue
		}
		queued = append(queued, tx.LogoutDelivery.Create().SetSid(a.row.Sid).SetUserID(a.row.UserID).SetClientID(a.row.ClientID).
			SetProjectID(a.row.ProjectID).SetURL(a.client.BackchannelLogoutURI).SetNextAttemptAt(now))
	}
	if len(queued) > 0 {
		if err := tx.LogoutDelivery.CreateBulk(queued...).Exec(ctx); err != nil {
			return err
		}
	}
	if _, err := tx.AppSession.Delete().Where(appsession.SidIn(sids...)).Exec(ctx); err != nil {
		return err
	}
	// The worker looks now; what this transaction queued is there once it commits, and
	// at the next poll at the latest.
	s.wake.Ring()
	return nil
}
