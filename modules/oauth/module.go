// Package oauth is the OAuth authorization server (SPEC §11, §15): metadata, the token
// endpoint, introspection, revocation and the key set its tokens are signed with. It
// knows no grant type and no kind of credential itself: grant types and client
// authenticators are contributed to it (platform/oauth), and introspection and revocation
// ask the credential registry. It owns one kind: the at+jwt access tokens grants issue.
package oauth

import (
	"errors"
	"sort"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"

	"github.com/authcore/authcore/platform/assertion"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/credential"
	"github.com/authcore/authcore/platform/dpop"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/metrics"
	"github.com/authcore/authcore/platform/oauth"
	"github.com/authcore/authcore/platform/ratelimit"
)

// Module serves the OAuth routes and contributes the access-token kind.
var Module = fx.Module("oauth",
	fx.Provide(newGrants, newExchanges, newDenylist, newResults, newServer, newClientAuth,
		func(a *clientAuth) oauth.ClientAuthenticator { return a },
		fx.Annotate(newReplay, fx.As(new(assertion.Replay)))),
	metrics.AsCollector(func(r *results) prometheus.Collector { return r.CounterVec }),
	credential.AsKinds(func(jwts oauth.Verifier, d *denylist, g *grants) []credential.Kind {
		return []credential.Kind{(&accessTokens{jwts: jwts, denied: d, grants: g}).kind()}
	}),
	httpserver.AsModuleRoutes("oauth", func(s *server) []httpserver.Route { return s.routes() }),
)

type grantParams struct {
	fx.In
	Grants    []oauth.Grant `group:"oauth_grants"`
	Exchanges *exchanges
}

func newGrants(p grantParams) (*grants, error) {
	gs := &grants{byType: map[string]oauth.Grant{}}
	all := p.Grants
	if len(p.Exchanges.types) > 0 {
		all = append(all, p.Exchanges)
	}
	for _, g := range all {
		if _, dup := gs.byType[g.Type()]; dup {
			return nil, errors.New("oauth: grant type " + g.Type() + " is contributed twice")
		}
		gs.byType[g.Type()] = g
		gs.types = append(gs.types, g.Type())
	}
	sort.Strings(gs.types)
	return gs, nil
}

type serverParams struct {
	fx.In
	Config  config.Config
	Limits  *ratelimit.Limiters
	Kinds   *credential.Registry
	Keys    oauth.Signer
	Grants  *grants
	Clients []oauth.Clients  `group:"oauth_clients"`
	Extra   []oauth.Metadata `group:"oauth_metadata"`
	Results *results
	DPoP    *dpop.Checker
	Auth    *clientAuth
}

func newServer(p serverParams) *server {
	return &server{cfg: p.Config, limits: p.Limits, kinds: p.Kinds, keys: p.Keys,
		grants: p.Grants, clients: p.Clients, extra: p.Extra, results: p.Results, auth: p.Auth, dpop: p.DPoP}
}

type clientAuthParams struct {
	fx.In
	Clients []oauth.Clients `group:"oauth_clients"`
	Replay  assertion.Replay
	Clock   clock.Clock
	Config  config.Config
}

func newClientAuth(p clientAuthParams) *clientAuth {
	return &clientAuth{clients: p.Clients, replay: p.Replay, clock: p.Clock, cfg: p.Config}
}
