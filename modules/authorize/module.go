// Package authorize is OAuth 2.1 authorization for agents in standard hosts (SPEC §16):
// an MCP host that meets a server protected by authcore gets a token with no code of
// authcore's. It serves the authorization endpoint and dynamic client registration,
// resolves client metadata documents, keeps the grants people approve on the console,
// and contributes to the OAuth server (modules/oauth) the authorization_code and
// refresh_token grant types, the grant refresh-token kind and its metadata fields.
package authorize

import (
	"cmp"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/credential"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/metrics"
	"github.com/authcore/authcore/platform/oauth"
	"github.com/authcore/authcore/platform/outbound"
	"github.com/authcore/authcore/platform/policy"
	"github.com/authcore/authcore/platform/ratelimit"
	"github.com/authcore/authcore/platform/resource"
	"github.com/authcore/authcore/platform/secret"
	"github.com/authcore/authcore/platform/usage"
)

// Module serves the routes of SPEC §16 and contributes its grants, kind and metadata.
var Module = fx.Module("authorize",
	fx.Provide(newGrants, newService, newHandler, newClientsFrom, startPruner),
	fx.Invoke(func(*Pruner) {}), // it runs whether or not anything asks for it
	metrics.AsCollector(func(s *service) prometheus.Collector { return s.reuse }),
	oauth.AsGrant(func(s *service) oauth.Grant { return &codeGrant{s} }),
	oauth.AsGrant(func(s *service) oauth.Grant { return &refreshGrant{s} }),
	oauth.AsMetadata(func(h *handler) oauth.Metadata { return h.metadata }),
	credential.AsKinds(func(s *service) []credential.Kind { return s.kinds() }),
	credential.AsClaim("oauth_authorization_code", secret.Prefix(codeKind)),
	httpserver.AsModuleRoutes("authorize", func(h *handler) []httpserver.Route { return h.routes() }),
)

// service issues and judges what grants hand out.
type service struct {
	ent    *ent.Client
	clock  clock.Clock
	grants *grants
	signer oauth.Signer
	issued prometheus.Counter
	reuse  *prometheus.CounterVec
	usage  usage.Counter
}

type serviceParams struct {
	fx.In
	Ent     *ent.Client
	Clock   clock.Clock
	Grants  *grants
	Signer  oauth.Signer
	Metrics *metrics.Credentials
	Usage   usage.Counter `optional:"true"`
}

func newService(p serviceParams) *service {
	return &service{ent: p.Ent, clock: p.Clock, grants: p.Grants, signer: p.Signer,
		issued: p.Metrics.Issued.WithLabelValues("oauth_grant", ""), reuse: newReuseCounter(), usage: cmp.Or[usage.Counter](p.Usage, usage.Discard)}
}

func newClientsFrom(c *ent.Client, clk clock.Clock, cfg config.Config) (*clients, error) {
	roots, err := outbound.Roots(cfg.OutboundCAFile)
	if err != nil {
		return nil, err
	}
	return newClients(c, clk, outbound.Policy{AllowHTTP: cfg.WebhookAllowHTTP}, roots), nil
}

type handlerParams struct {
	fx.In
	Ent       *ent.Client
	Config    config.Config
	Clock     clock.Clock
	Clients   *clients
	Grants    *grants
	Resources resource.Registry
	Members   identity.Memberships
	Policies  policy.Source
	Keys      *secret.Keyring
	Limits    *ratelimit.Limiters
	Guard     *guard.Guard
}

func newHandler(p handlerParams) *handler {
	return &handler{ent: p.Ent, cfg: p.Config, clock: p.Clock, clients: p.Clients, grants: p.Grants, resources: p.Resources,
		members: p.Members, policies: p.Policies, keys: p.Keys, limits: p.Limits, guard: p.Guard}
}

// metadata is what SPEC §16 adds to the RFC 8414 document.
func (h *handler) metadata(issuer string) map[string]any {
	m := map[string]any{
		"authorization_endpoint":                         issuer + oauth.AuthorizePath,
		"response_types_supported":                       []string{"code"},
		"response_modes_supported":                       []string{"query"},
		"code_challenge_methods_supported":               []string{"S256"},
		"client_id_metadata_document_supported":          true,
		"authorization_response_iss_parameter_supported": true,
	}
	if h.registrationOpen() {
		m["registration_endpoint"] = issuer + oauth.RegisterPath
	}
	return m
}
