// Package project owns projects (each owning a tenant whose id is the project id) and
// memberships with roles viewer < developer < admin. It supplies the guard's role lookup
// (identity.Memberships) and the account module's tenant check (identity.Tenants).
package project

import (
	"go.uber.org/fx"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/oauth"
	"github.com/authcore/authcore/platform/policy"
)

// Module wires the project service and its routes.
var Module = fx.Module("project",
	fx.Provide(fx.Annotate(NewService, fx.As(fx.Self()), fx.As(new(identity.Memberships)), fx.As(new(identity.Tenants)), fx.As(new(policy.Source)))),
	httpserver.AsModuleRoutes("project", func(s *Service, g *guard.Guard, rec *audit.Recorder) []httpserver.Route {
		return (&handler{svc: s, guard: g, audit: rec}).routes()
	}),
)

// Params are the project service's dependencies.
type Params struct {
	fx.In
	Ent   *ent.Client
	DB    *database.DB
	Dir   identity.Directory
	Audit *audit.Recorder
	// Grants ends the grants a removed member approved (SPEC §9b); absent without the
	// OAuth authorization module.
	Grants oauth.GrantEnder `optional:"true"`
}

// NewService returns the project service.
func NewService(p Params) *Service {
	return &Service{ent: p.Ent, storage: p.DB.Storage, dir: p.Dir, audit: p.Audit, grants: p.Grants}
}
