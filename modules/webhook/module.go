// Package webhook tells projects what happened to their credentials (SPEC §12): every
// event is written to an outbox in the transaction of the change (through the audit
// recorder, which hands it every record), and delivered to the project's webhooks as the
// Standard Webhooks spec says — signed, at least once, in order per webhook, retried with
// backoff across restarts, each delivery sent by one replica.
package webhook

import (
	"log/slog"

	"go.uber.org/fx"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/authcore/authcore/ent"
	entwebhook "github.com/authcore/authcore/ent/webhook"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/credential"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/metrics"
	"github.com/authcore/authcore/platform/outbound"
	"github.com/authcore/authcore/platform/secret"
)

// sealedSecret is each webhook's signing secret, sealed to the webhook's id.
var sealedSecret = secret.Declare(secret.Declaration{Name: "webhook secrets", Table: entwebhook.Table, Column: entwebhook.FieldSecretSealed})

// Module supplies the outbox to the audit recorder and serves the webhook routes.
var Module = fx.Module("webhook",
	fx.Supply(DefaultTiming),
	fx.Provide(newResults),
	metrics.AsCollector(func(r outcomes) prometheus.Collector { return r.CounterVec }),
	fx.Provide(
		newParts,
		fx.Annotate(func(o *outbox) *outbox { return o }, fx.As(new(audit.Outbox))),
	),
	fx.Invoke(func(t *types, r *credential.Registry) { t.learn(r) }),
	secret.AsSealed(sealedSecret),
	httpserver.AsModuleRoutes("webhook", func(s *Service, g *guard.Guard) []httpserver.Route { return (&handler{svc: s, guard: g}).routes() }),
)

// Deliver runs the delivery worker. Only a serving process adds it (with the listeners):
// operator commands build the same graph and send nothing.
var Deliver = fx.Options(
	fx.Invoke(func(lc fx.Lifecycle, w *worker) { database.RunWoken(lc, w.wake, w.timing.PollEvery, w.run) }),
)

type parts struct {
	fx.Out
	Service *Service
	Outbox  *outbox
	Worker  *worker
	Types   *types
}

func newParts(c *ent.Client, db *database.DB, clk clock.Clock, keys *secret.Keyring, log *slog.Logger, cfg config.Config, t Timing, results outcomes) (parts, error) {
	policy := outbound.Policy{AllowHTTP: cfg.WebhookAllowHTTP}
	roots, err := outbound.Roots(cfg.OutboundCAFile)
	if err != nil {
		return parts{}, err
	}
	w := newWorker(c, clk, keys, log, policy, roots, db.Storage == config.Postgres, t, results)
	ts := &types{}
	return parts{
		Service: &Service{ent: c, keys: keys, policy: policy, types: ts},
		Outbox:  &outbox{clock: clk, nudge: w.wake.Ring, types: ts},
		Worker:  w,
		Types:   ts,
	}, nil
}
