// Package resource keeps the resource servers each project registered (SPEC §11) and
// answers the platform's resource.Registry, so grants issue tokens only for a project's
// own resources.
package resource

import (
	"context"
	"log/slog"
	"time"

	"go.uber.org/fx"

	"github.com/authcore/authcore/platform/database"
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
	// Rows from before canonical forms get theirs at start and, should the store not
	// answer then, every minute until a pass completes; lookups find them meanwhile.
	fx.Invoke(func(lc fx.Lifecycle, s *Service, log *slog.Logger) {
		lc.Append(fx.Hook{OnStart: func(ctx context.Context) error {
			if err := s.Backfill(ctx, log); err != nil {
				log.Warn("giving resources their canonical form failed; will retry", "error", err)
			}
			return nil
		}})
		database.PruneEvery(lc, log, "resources without a canonical form", time.Minute, func(ctx context.Context) error { return s.Backfill(ctx, log) })
	}),
	httpserver.AsModuleRoutes("resource", func(s *Service, g *guard.Guard) []httpserver.Route { return (&handler{svc: s, guard: g}).routes() }),
)
