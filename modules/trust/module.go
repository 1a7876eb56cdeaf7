// Package trust is what a project trusts besides authcore itself (SPEC §22): issuers of
// JWTs it accepts as grants — workload platforms (workload identity federation) and
// enterprise identity providers (ID-JAGs) — and the other authorization servers it lets
// authcore, as its people's identity provider, issue ID-JAGs for. It contributes the
// jwt-bearer grant and the ID-JAG token exchange to the OAuth server; every assertion goes
// through platform/assertion, so what makes one valid is written once.
package trust

import (
	"cmp"
	"time"

	"go.uber.org/fx"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/platform/apidoc"
	"github.com/authcore/authcore/platform/assertion"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/bearer"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/invalidation"
	"github.com/authcore/authcore/platform/metrics"
	"github.com/authcore/authcore/platform/oauth"
	"github.com/authcore/authcore/platform/outbound"
	"github.com/authcore/authcore/platform/policy"
	"github.com/authcore/authcore/platform/resource"
	"github.com/authcore/authcore/platform/usage"
)

// Module serves the trust routes and contributes the grant, the exchange and metadata.
var Module = fx.Module("trust",
	fx.Provide(newService, fx.Private),
	httpserver.AsModuleRoutes("trust", func(s *service, g *guard.Guard, r resource.Registry) []httpserver.Route {
		return (&handler{s: s, guard: g, resources: r}).routes()
	}),
	oauth.AsGrant(newGrant),
	oauth.AsExchange(func(s *service, v oauth.Verifier, sg oauth.Signer, m identity.Memberships, clk clock.Clock) oauth.Exchange {
		return &idJAG{s: s, verifier: v, signer: sg, members: m, clock: clk}
	}),
	apidoc.AsFragment(func() (apidoc.Fragment, error) { return apidoc.YAML("trust", openapiYAML) }),
	oauth.AsMetadata(func() oauth.Metadata {
		return func(string) map[string]any {
			return map[string]any{"authorization_grant_profiles_supported": []string{ProfileIDJAG}}
		}
	}),
)

func newService(c *ent.Client, clk clock.Clock, rec *audit.Recorder, bus invalidation.Bus, cfg config.Config, l bearer.Limits) (*service, error) {
	roots, err := outbound.Roots(cfg.OutboundCAFile)
	if err != nil {
		return nil, err
	}
	s := &service{ent: c, clock: clk, audit: rec, bus: bus,
		fetcher: outbound.NewFetcher(outbound.Policy{AllowHTTP: cfg.WebhookAllowHTTP}, roots, clk, outbound.FetcherOptions{
			Limit: maxDocument, Timeout: fetchTimeout, MinAge: time.Minute, MaxAge: 24 * time.Hour, Entries: 1024}),
		issuers: bearer.NewCache[string, *ent.TrustedIssuer](l.Size, l.NegativeTTL)}
	bearer.Follow(bus, topic, s.issuers)
	return s, nil
}

type grantParams struct {
	fx.In
	Service   *service
	Resources resource.Registry
	Policies  policy.Source
	Signer    oauth.Signer
	Replay    assertion.Replay
	Users     identity.Users
	Linked    identity.Linked `optional:"true"`
	Clock     clock.Clock
	Metrics   *metrics.Credentials
	Usage     usage.Counter `optional:"true"`
}

func newGrant(p grantParams) oauth.Grant {
	return &jwtBearer{s: p.Service, resources: p.Resources, policies: p.Policies, signer: p.Signer, replay: p.Replay, users: p.Users, linked: p.Linked,
		clock: p.Clock, usage: cmp.Or[usage.Counter](p.Usage, usage.Discard), issued: p.Metrics.Issued.WithLabelValues("jwt_bearer", "")}
}
