// Package oauth is the OAuth authorization server (SPEC §11, §15): metadata, the token
// endpoint, introspection, revocation and the key set its tokens are signed with. It
// knows no grant type and no kind of credential itself: grant types and client
// authenticators are contributed to it (platform/oauth), and introspection and revocation
// ask the credential registry. It owns one kind: the at+jwt access tokens grants issue.
package oauth

import (
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"

	"github.com/authcore/authcore/platform/credential"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/metrics"
)

// Module serves the OAuth routes and contributes the access-token kind.
var Module = fx.Module("oauth",
	fx.Provide(newGrants, newDenylist, newResults, newServer),
	metrics.AsCollector(func(r *results) prometheus.Collector { return r.CounterVec }),
	credential.AsKinds(func(jwts identity.JWTVerifier, d *denylist, g *grants) []credential.Kind {
		return []credential.Kind{(&accessTokens{jwts: jwts, denied: d, grants: g}).kind()}
	}),
	httpserver.AsRoutes(func(s *server) []httpserver.Route { return s.routes() }),
)
