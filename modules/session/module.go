// Package session is the session engine: sessions started at sign-in, EdDSA access
// tokens verified with a cache and a revocation check on every call, rotating refresh
// tokens with theft detection, and the session routes of seed 4.3; and the token issuer:
// the signing keys, every token signed with them, and the JWKS. The engine supplies
// identity.Sessions to the account module and guard.SessionVerifier to the guard; the
// issuer supplies oauth.Signer and oauth.Verifier to the OAuth surface.
package session

import (
	"log/slog"

	"go.uber.org/fx"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/signingkey"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/credential"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/health"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/invalidation"
	"github.com/authcore/authcore/platform/metrics"
	"github.com/authcore/authcore/platform/oauth"
	"github.com/authcore/authcore/platform/ratelimit"
	"github.com/authcore/authcore/platform/secret"
)

// The interfaces the engine and the issuer are bound to below.
var (
	_ identity.Sessions     = (*Engine)(nil)
	_ guard.SessionVerifier = (*Engine)(nil)
	_ oauth.Signer          = (*Issuer)(nil)
	_ oauth.Verifier        = (*Issuer)(nil)
)

// sealedPrivateKey is each signing key's private half, sealed to the key's id.
var sealedPrivateKey = secret.Declare(secret.Declaration{Name: "signing keys", Table: signingkey.Table, Column: signingkey.FieldPrivateSealed})

// Module wires the issuer, the engine and its routes.
var Module = fx.Module("session",
	fx.Provide(fx.Annotate(NewIssuer, fx.As(fx.Self()), fx.As(new(oauth.Signer)), fx.As(new(oauth.Verifier)))),
	fx.Provide(fx.Annotate(NewEngine, fx.As(fx.Self()), fx.As(new(identity.Sessions)), fx.As(new(guard.SessionVerifier)))),
	fx.Invoke(func(lc fx.Lifecycle, i *Issuer) { lc.Append(fx.Hook{OnStart: i.Run, OnStop: i.Halt}) }),
	secret.AsSealed(sealedPrivateKey),
	health.AsCheck(func(i *Issuer) health.Check { return health.Check{Name: "engine", Check: i.readyErr} }),
	credential.AsKinds(func(e *Engine) []credential.Kind { return e.kinds() }),
	// A deprovisioned person's sessions end with the rest of what they hold (SPEC §27).
	identity.AsPersonEnding(func(e *Engine) personSessions { return personSessions{e} }),
	httpserver.AsModuleRoutes("session", func(e *Engine, g *guard.Guard, cfg config.Config, l *ratelimit.Limiters) []httpserver.Route {
		return (&handler{engine: e, admin: admin{e}, guard: g, cfg: cfg, limits: l}).routes()
	}),
)

// Params are the engine's dependencies.
type Params struct {
	fx.In
	Ent     *ent.Client
	DB      *database.DB
	Reads   *database.Reads
	Issuer  *Issuer
	Ring    *secret.Keyring
	Clock   clock.Clock
	Config  config.Config
	Bus     invalidation.Bus
	Users   identity.Users
	Audit   *audit.Recorder
	Log     *slog.Logger
	Metrics *metrics.Credentials
	// Endings hear of every session revoked, in its transaction (SPEC §25 back-channel logout).
	Endings []identity.SessionEnding `group:"session_endings"`
	// Orgs puts a session's active organisation into its tokens (SPEC §26); absent in an
	// app built without the org module.
	Orgs identity.OrgMemberships `optional:"true"`
	// Domains caps the sessions of addresses in an org's verified domains by its policy's
	// sessionMaxHours (SPEC §26); absent without the org module.
	Domains identity.OrgDomains `optional:"true"`
}

// IssuerParams are the issuer's dependencies.
type IssuerParams struct {
	fx.In
	Ent    *ent.Client
	DB     *database.DB
	Ring   *secret.Keyring
	Clock  clock.Clock
	Config config.Config
	Bus    invalidation.Bus
	Log    *slog.Logger
}
