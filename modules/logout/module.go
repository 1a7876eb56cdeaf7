// Package logout tells a project's apps when a person's SSO session ends (SPEC §25): it
// remembers which apps each session signed in to (oauth.AppSessions, asked by the
// authorization endpoint), hears every session that ends in the transaction that ends
// it (identity.SessionEnding: a sign-out, RP-initiated logout, an admin's revoke, a
// blocked or deleted user), and delivers OpenID Connect Back-Channel Logout 1.0 tokens
// to each app that registered a back-channel URI — at least once, retried with backoff,
// one replica at a time — and lists front-channel logout pages (Front-Channel Logout 1.0)
// for the RP-initiated logout page to load.
package logout

import (
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/metrics"
	"github.com/authcore/authcore/platform/oauth"
	"github.com/authcore/authcore/platform/outbound"
)

// Module supplies oauth.AppSessions and an identity.SessionEnding and serves the
// deliveries route.
var Module = fx.Module("logout",
	fx.Supply(DefaultTiming),
	fx.Provide(newService, newResults),
	fx.Provide(func(s *Service) oauth.AppSessions { return s }),
	identity.AsSessionEnding(func(s *Service) *Service { return s }),
	metrics.AsCollector(func(r outcomes) prometheus.Collector { return r.CounterVec }),
	httpserver.AsModuleRoutes("logout", func(s *Service, g *guard.Guard) []httpserver.Route { return (&handler{svc: s, guard: g}).routes() }),
)

// Deliver runs the delivery worker; only a serving process adds it.
var Deliver = fx.Options(
	fx.Invoke(func(lc fx.Lifecycle, s *Service) { database.RunWoken(lc, s.wake, s.timing.PollEvery, s.run) }),
)

func newService(c *ent.Client, db *database.DB, clk clock.Clock, log *slog.Logger, cfg config.Config, signer oauth.Signer, t Timing, results outcomes) (*Service, error) {
	roots, err := outbound.Roots(cfg.OutboundCAFile)
	if err != nil {
		return nil, err
	}
	policy := outbound.Policy{AllowHTTP: cfg.WebhookAllowHTTP}
	return newServiceWith(c, clk, log, cfg, signer, t, results, policy.Transport(t.RequestTimeout, roots), db.Storage == config.Postgres), nil
}
