// Package badge owns service badges (seed 4.4, 6; SPEC §6): per-project machine
// credentials, one product each. Products are plugins it knows only through
// platform/product; the lifecycle is the one every kind shares (platform/lifecycle), with
// one prefix per registered product, so a product added as a plugin is minted, verified,
// introspected and revoked by leak reports and RFC 7009 with nothing else to change.
package badge

import (
	"log/slog"

	"go.uber.org/fx"

	"github.com/authcore/authcore/platform/apidoc"
	"github.com/authcore/authcore/platform/bearer"
	"github.com/authcore/authcore/platform/credential"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/lifecycle"
	"github.com/authcore/authcore/platform/policy"
	"github.com/authcore/authcore/platform/product"
)

// Module wires the service and its routes.
var Module = fx.Module("badge",
	fx.Decorate(func(l *slog.Logger) *slog.Logger { return l.With("module", "badge") }),
	fx.Provide(fx.Annotate(NewService, fx.As(fx.Self()), fx.As(new(credential.Badges)))),
	fx.Provide(fx.Annotate(func(db *database.DB) names { return names{db} }, fx.As(new(credential.BadgeNames)))),
	httpserver.AsModuleRoutes("badge", func(s *Service, g *guard.Guard, k bearer.Kit) []httpserver.Route {
		return s.routes(g, k)
	}),
	credential.AsKinds(func(s *Service) []credential.Kind { return s.life.Kinds() }),
	// The badges a deprovisioned person minted are listed to the org's admins, and revoked
	// when its policy says so (SPEC §27). Today only project admins mint badges, who are
	// dashboard users, not a tenant's people: the list is empty until a tenant's person can.
	identity.AsPersonEnding(func(s *Service) lifecycle.Minted {
		return s.life.PersonEnding(func(r *lifecycle.Row) string { return r.String(fieldName) })
	}),
	apidoc.AsFragment(fragment),
)

// Params are the service's dependencies.
type Params struct {
	fx.In
	Lifecycle lifecycle.Deps
	Products  *product.Registry
	Policies  policy.Source
	// Orgs are the org module's (SPEC §26): absent without it.
	Orgs identity.Orgs `optional:"true"`
}
