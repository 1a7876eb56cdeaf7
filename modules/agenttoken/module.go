// Package agenttoken owns AI agent tokens (seed 4.1, 4.2; SPEC §5): a project admin mints,
// lists and revokes them; an agent asks ai/me who it is. Verification is cached (known and
// unknown digests) and exact under revocation, through platform/bearer.
package agenttoken

import (
	"log/slog"

	"go.uber.org/fx"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/bearer"
	"github.com/authcore/authcore/platform/credential"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/oauth"
	"github.com/authcore/authcore/platform/policy"
	"github.com/authcore/authcore/platform/secret"
)

// Module wires the service and its routes.
var Module = fx.Module("agenttoken",
	fx.Decorate(func(l *slog.Logger) *slog.Logger { return l.With("module", "agenttoken") }),
	fx.Provide(NewService),
	httpserver.AsModuleRoutes("agenttoken", func(s *Service, g *guard.Guard, k bearer.Kit) []httpserver.Route {
		return (&handler{svc: s, guard: g, me: bearer.NewEndpoint(k, Kind).CountingLimited(s.verifier.Limited)}).routes()
	}),
	oauth.AsGrant(newExchange),
	credential.AsKinds(func(s *Service) []credential.Kind {
		return []credential.Kind{{
			Name: Kind, Prefix: secret.Prefix(tokenKind), Pattern: secret.Pattern(tokenKind),
			Revoke:     s.RevokePresented,
			Introspect: s.introspect,
			Events:     []string{"ai_token.create", "ai_token.roll", "ai_token.revoke"},
		}}
	}),
)

// Params are the service's dependencies.
type Params struct {
	fx.In
	Ent      *ent.Client
	DB       *database.DB
	Audit    *audit.Recorder
	Policies policy.Source
	Kit      bearer.Kit
}

// NewService returns the service, subscribed to revocations from other replicas.
func NewService(p Params) *Service {
	s := &Service{ent: p.Ent, reads: p.Kit.Reads, clock: p.Kit.Clock, audit: p.Audit, metrics: p.Kit.Metrics, bus: p.Kit.Bus, policies: p.Policies, usage: p.Kit.UsageReader,
		byID: bearer.NewCache[string, *liveness](p.Kit.Limits.Size, p.Kit.Limits.PositiveTTL)}
	s.verifier = bearer.NewVerifier[answer](p.Kit, Kind, store{})
	bearer.Follow(p.Kit.Bus, idTopic, s.byID)
	return s
}
