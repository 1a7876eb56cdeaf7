// Package badge owns service badges (seed 4.4, 6; SPEC §6): per-project machine
// credentials, one product each. Products are plugins it knows only through
// platform/product; every mint and revoke commits with its audit record.
package badge

import (
	"log/slog"

	"go.uber.org/fx"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/bearer"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/invalidation"
	"github.com/authcore/authcore/platform/lastused"
	"github.com/authcore/authcore/platform/metrics"
	"github.com/authcore/authcore/platform/product"
	"github.com/authcore/authcore/platform/ratelimit"
)

// Module wires the service and its routes.
var Module = fx.Module("badge",
	fx.Decorate(func(l *slog.Logger) *slog.Logger { return l.With("module", "badge") }),
	fx.Provide(NewService),
	httpserver.AsRoutes(func(s *Service, g *guard.Guard, r *product.Registry, l *ratelimit.Limiters, m *metrics.Credentials) []httpserver.Route {
		h := &handler{svc: s, guard: g, products: r, me: bearer.NewWhoAmI("service_badge", l, m, s.Verify)}
		return h.routes()
	}),
)

// Params are the service's dependencies.
type Params struct {
	fx.In
	LC       fx.Lifecycle
	Ent      *ent.Client
	Products *product.Registry
	Audit    *audit.Recorder
	Clock    clock.Clock
	Bus      invalidation.Bus
	Metrics  *metrics.Credentials
	Log      *slog.Logger
	Limits   bearer.Limits
}

// NewService returns the service, subscribed to revocations from other replicas.
func NewService(p Params) *Service {
	s := &Service{ent: p.Ent, products: p.Products, audit: p.Audit, clock: p.Clock, metrics: p.Metrics, log: p.Log}
	s.verifier = bearer.New(p.Clock, p.Bus, topic, p.Limits, lastused.New(p.LC, p.Log, "service_badge", s.writeLastUsed), s.lookup)
	return s
}
