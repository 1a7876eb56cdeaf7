// Package agenttoken owns AI agent tokens (seed 4.1, 4.2; SPEC §5): a project admin mints,
// lists and revokes them; an agent asks ai/me who it is. Verification is cached (known and
// unknown digests) and exact under revocation.
package agenttoken

import (
	"log/slog"

	"go.uber.org/fx"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/bearer"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/invalidation"
	"github.com/authcore/authcore/platform/lastused"
	"github.com/authcore/authcore/platform/metrics"
	"github.com/authcore/authcore/platform/ratelimit"
)

// Module wires the service and its routes.
var Module = fx.Module("agenttoken",
	fx.Decorate(func(l *slog.Logger) *slog.Logger { return l.With("module", "agenttoken") }),
	fx.Provide(NewService),
	httpserver.AsRoutes(func(s *Service, g *guard.Guard, l *ratelimit.Limiters, log *slog.Logger, m *metrics.Credentials) []httpserver.Route {
		h := &handler{svc: s, guard: g, log: log, me: bearer.NewWhoAmI("ai_agent", l, m, s.Verify)}
		return h.routes()
	}),
)

// Params are the service's dependencies.
type Params struct {
	fx.In
	LC      fx.Lifecycle
	Ent     *ent.Client
	Clock   clock.Clock
	Audit   *audit.Recorder
	Bus     invalidation.Bus
	Metrics *metrics.Credentials
	Log     *slog.Logger
	Limits  bearer.Limits
	DB      *database.DB
}

// NewService returns the service, subscribed to revocations from other replicas.
func NewService(p Params) *Service {
	s := &Service{
		ent: p.Ent, pool: p.DB.Pool, clock: p.Clock, audit: p.Audit, bus: p.Bus, metrics: p.Metrics, log: p.Log,
	}
	s.verifier = bearer.New(p.Clock, p.Bus, topic, p.Limits, lastused.New(p.LC, p.Log, "ai_agent", s.writeLastUsed), s.lookup)
	return s
}
