// Package session is the session engine: sessions started at sign-in, EdDSA access
// tokens verified with a cache and a revocation check on every call, rotating refresh
// tokens with theft detection, the JWKS, and the session routes of seed 4.3. It supplies
// identity.Sessions to the account module and guard.SessionVerifier to the guard.
package session

import (
	"go.uber.org/fx"

	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/health"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/ratelimit"
)

// Module wires the engine and its routes.
var Module = fx.Module("session",
	fx.Provide(
		NewEngine,
		fx.Annotate(func(e *Engine) identity.Sessions { return e }),
		fx.Annotate(func(e *Engine) guard.SessionVerifier { return e }),
		fx.Annotate(func(e *Engine) identity.TokenSigner { return e }),
	),
	fx.Invoke(func(lc fx.Lifecycle, e *Engine) { lc.Append(fx.Hook{OnStart: e.Run, OnStop: e.Halt}) }),
	health.AsCheck(func(e *Engine) health.Check { return health.Check{Name: "engine", Check: e.readyErr} }),
	httpserver.AsRoutes(func(e *Engine, g *guard.Guard, cfg config.Config, l *ratelimit.Limiters) []httpserver.Route {
		return (&handler{engine: e, guard: g, cfg: cfg, limits: l}).routes()
	}),
)
