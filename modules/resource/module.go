// Package resource keeps the resource servers each project registered (SPEC §11) and
// answers the platform's resource.Registry, so grants issue tokens only for a project's
// own resources.
package resource

import (
	"context"
	"log/slog"

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
	// Before the listener serves: lookups compare canonical forms only.
	fx.Invoke(func(lc fx.Lifecycle, s *Service, log *slog.Logger) {
		lc.Append(fx.Hook{OnStart: func(ctx context.Context) error { return s.Backfill(ctx, log) }})
	}),
	httpserver.AsModuleRoutes("resource", func(s *Service, g *guard.Guard) []httpserver.Route { return (&handler{svc: s, guard: g}).routes() }),
)
