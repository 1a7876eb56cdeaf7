// Package vault is SPEC §23's token vault: a person connects their account with an
// upstream provider of their project (a §20 provider with offline access) for some of
// the project's agents, and those agents exchange their own credential for the
// upstream's access token (RFC 8693), which the vault refreshes once per expiry however
// many agents ask at once, on any replica. Upstream tokens are sealed at rest, re-sealed
// by keys reseal, never returned to the person and never logged. It reaches the provider
// only through identity.Upstreams (the federation module).
package vault

import (
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/vaultconnection"
	"github.com/authcore/authcore/platform/apidoc"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/bearer"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/credential"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/invalidation"
	"github.com/authcore/authcore/platform/metrics"
	"github.com/authcore/authcore/platform/oauth"
	"github.com/authcore/authcore/platform/secret"
)

// SealedTokens is each connection's upstream tokens, sealed to the connection's id
// (exported for the bench, which writes connections straight to the store).
var SealedTokens = secret.Declare(secret.Declaration{Name: "vault connections' upstream tokens", Table: vaultconnection.Table, Column: vaultconnection.FieldTokensSealed})

// Module serves the person's connection routes and contributes the upstream-token exchange.
var Module = fx.Module("vault",
	fx.Decorate(func(l *slog.Logger) *slog.Logger { return l.With("module", "vault") }),
	fx.Provide(newService, fx.Private),
	oauth.AsExchange(func(s *service, k *kinds) oauth.Exchange { return exchange{s: s, kinds: k} }),
	fx.Provide(fx.Private, func() *kinds { return &kinds{} }),
	// The registry is built from every kind, access tokens among them, whose kind depends
	// on the OAuth server's grants and so on this exchange: it is handed over once the
	// graph is built, before anything is served.
	fx.Invoke(func(k *kinds, r *credential.Registry) { k.Registry = r }),
	metrics.AsCollector(func(s *service) prometheus.Collector { return s.refreshes }),
	secret.AsSealed(SealedTokens),
	// A deprovisioned person's connections end, upstream too (SPEC §27).
	identity.AsPersonEnding(func(s *service) personConnections { return personConnections{s} }),
	httpserver.AsModuleRoutes("vault", func(s *service, g *guard.Guard) []httpserver.Route { return (&handler{svc: s, guard: g}).routes() }),
	apidoc.AsFragment(func() (apidoc.Fragment, error) { return apidoc.YAML("vault", openapiYAML) }),
)

type params struct {
	fx.In
	Ent       *ent.Client
	Clock     clock.Clock
	Audit     *audit.Recorder
	Keys      *secret.Keyring
	Bus       invalidation.Bus
	Upstreams identity.Upstreams
	Users     identity.ProvenUsers
	Agents    oauth.Agents    `optional:"true"`
	Clients   []oauth.Clients `group:"oauth_clients"`
	Log       *slog.Logger
	Limits    bearer.Limits
}

func newService(p params) *service {
	s := &service{ent: p.Ent, clock: p.Clock, audit: p.Audit, keys: p.Keys, bus: p.Bus, up: p.Upstreams, users: p.Users, agents: p.Agents,
		clients: p.Clients, log: p.Log, owner: newOwner(), cache: bearer.NewCache[string, *live](p.Limits.Size, cacheTTL),
		refreshes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "authcore_vault_exchanges_total",
			Help: "Token vault exchanges and refreshes, by result: served, refreshed (one upstream refresh), refused (the upstream refused the refresh token), unavailable (it could not be reached).",
		}, []string{"result"})}
	bearer.Follow(p.Bus, topic, s.cache)
	return s
}
