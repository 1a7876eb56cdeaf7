// Package resource keeps the resource servers each project registered (SPEC §11) and
// answers the platform's resource.Registry, so grants issue tokens only for a project's
// own resources.
package resource

import (
	"go.uber.org/fx"

	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/resource"
)

// Module serves the resource routes and provides the Registry.
var Module = fx.Module("resource",
	fx.Provide(
		newService,
		fx.Annotate(func(s *Service) *Service { return s }, fx.As(new(resource.Registry))),
	),
	httpserver.AsModuleRoutes("resource", func(s *Service, g *guard.Guard) []httpserver.Route { return (&handler{svc: s, guard: g}).routes() }),
)
