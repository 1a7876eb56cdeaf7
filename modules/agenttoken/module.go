// Package agenttoken owns AI agent tokens (seed 4.1, 4.2; SPEC §5): a project admin mints,
// lists and revokes them; an agent asks ai/me who it is. The lifecycle is the one every
// kind shares (platform/lifecycle): this package says what is the agent tokens' own — their
// fields and defaults, the project's policy, the seed's answers, and token exchange.
package agenttoken

import (
	"log/slog"

	"go.uber.org/fx"

	"github.com/authcore/authcore/platform/apidoc"
	"github.com/authcore/authcore/platform/bearer"
	"github.com/authcore/authcore/platform/credential"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/lifecycle"
	"github.com/authcore/authcore/platform/oauth"
	"github.com/authcore/authcore/platform/policy"
)

// Module wires the service and its routes.
var Module = fx.Module("agenttoken",
	fx.Decorate(func(l *slog.Logger) *slog.Logger { return l.With("module", "agenttoken") }),
	fx.Provide(NewService),
	httpserver.AsModuleRoutes("agenttoken", func(s *Service, g *guard.Guard, k bearer.Kit) []httpserver.Route {
		return append(s.routes(g, k), s.orgRoutes(g)...)
	}),
	oauth.AsExchange(newExchange),
	fx.Provide(func(s *Service) oauth.Agents { return agents{s} }),
	credential.AsKinds(func(s *Service) []credential.Kind { return s.life.Kinds() }),
	// The tokens a deprovisioned person minted (an org admin's) are listed to the org's
	// admins, and revoked when its policy says so (SPEC §27).
	identity.AsPersonEnding(func(s *Service) lifecycle.Minted {
		return s.life.PersonEnding(func(r *lifecycle.Row) string { return r.String(fieldAgentName) })
	}),
	apidoc.AsFragment(func() (apidoc.Fragment, error) { return apidoc.YAML("agenttoken", openapiYAML) }),
)

// Params are the service's dependencies.
type Params struct {
	fx.In
	Lifecycle lifecycle.Deps
	Policies  policy.Source
	// Orgs are the org module's (SPEC §26): absent without it.
	Orgs identity.Orgs `optional:"true"`
}
