// Package authorize is OAuth 2.1 authorization for agents in standard hosts (SPEC §16):
// an MCP host that meets a server protected by authcore gets a token with no code of
// authcore's. It serves the authorization endpoint and dynamic client registration,
// resolves client metadata documents, keeps the grants people approve on the console,
// and contributes to the OAuth server (modules/oauth) the authorization_code and
// refresh_token grant types, the grant refresh-token kind and its metadata fields.
package authorize

import (
	"cmp"
	_ "embed"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/grantrefreshtoken"
	"github.com/authcore/authcore/platform/apidoc"
	"github.com/authcore/authcore/platform/bearer"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/credential"
	"github.com/authcore/authcore/platform/dpop"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/invalidation"
	"github.com/authcore/authcore/platform/metrics"
	"github.com/authcore/authcore/platform/oauth"
	"github.com/authcore/authcore/platform/outbound"
	"github.com/authcore/authcore/platform/policy"
	"github.com/authcore/authcore/platform/ratelimit"
	"github.com/authcore/authcore/platform/resource"
	"github.com/authcore/authcore/platform/secret"
	"github.com/authcore/authcore/platform/usage"
)

// sealedGraceAnswer is a rotated refresh token's answer, kept for its twin during the
// grace (the pruner clears it), sealed to the rotated token's row id.
var sealedGraceAnswer = secret.Declare(secret.Declaration{Name: "refresh-token grace answers", Table: grantrefreshtoken.Table, Column: grantrefreshtoken.FieldSuccessor})

// appsOpenAPI documents the routes of apps and initial access tokens (SPEC §25).
//
//go:embed apps.yaml
var appsOpenAPI []byte

// Module serves the routes of SPEC §16 and contributes its grants, kind and metadata.
var Module = fx.Module("authorize",
	fx.Provide(newGrants, newService, newHandler, newClientsFrom, startPruner,
		func(g *grants) oauth.GrantEnder { return g }),
	fx.Invoke(func(*Pruner) {}), // it runs whether or not anything asks for it
	secret.AsSealed(sealedGraceAnswer),
	metrics.AsCollector(func(s *service) prometheus.Collector { return s.reuse }),
	oauth.AsGrant(func(s *service) oauth.Grant { return &codeGrant{s} }),
	oauth.AsGrant(func(s *service) oauth.Grant { return &refreshGrant{s} }),
	oauth.AsGrant(func(s *service) oauth.Grant { return &deviceGrant{s} }),
	oauth.AsMetadata(func(h *handler) oauth.Metadata { return h.metadata }),
	oauth.AsMetadata(func() oauth.Metadata { return deviceMetadata }),
	oauth.AsClients(func(cs *clients) oauth.Clients { return cs }),
	credential.AsKinds(func(s *service) []credential.Kind { return s.kinds() }),
	credential.AsKinds(registrationTokenKinds),
	apidoc.AsFragment(func() (apidoc.Fragment, error) { return apidoc.YAML("authorize-apps", appsOpenAPI) }),
	credential.AsClaim("oauth_authorization_code", secret.Prefix(codeKind)),
	httpserver.AsModuleRoutes("authorize", func(h *handler) []httpserver.Route { return h.routes() }),
)

// service issues and judges what grants hand out.
type service struct {
	ent     *ent.Client
	clock   clock.Clock
	grants  *grants
	signer  oauth.Signer
	keys    *secret.Keyring
	users   identity.Users
	clients *clients
	issued  prometheus.Counter
	// idTokens counts id_tokens signed (authcore_credentials_issued_total{kind="id_token"}).
	idTokens prometheus.Counter
	reuse    *prometheus.CounterVec
	usage    usage.Counter
	// What a grant stands on, re-checked whenever it issues (SPEC §9b).
	members   identity.Memberships
	policies  policy.Source
	resources resource.Registry
	// orgs puts the organisation a person signed in for into tokens (SPEC §26).
	orgs identity.OrgMemberships
}

type serviceParams struct {
	fx.In
	Ent       *ent.Client
	Clock     clock.Clock
	Grants    *grants
	Signer    oauth.Signer
	Keys      *secret.Keyring
	Users     identity.Users
	Clients   *clients
	Metrics   *metrics.Credentials
	Usage     usage.Counter `optional:"true"`
	Members   identity.Memberships
	Policies  policy.Source
	Resources resource.Registry
	Orgs      identity.OrgMemberships `optional:"true"`
}

func newService(p serviceParams) *service {
	return &service{ent: p.Ent, clock: p.Clock, grants: p.Grants, signer: p.Signer, keys: p.Keys, users: p.Users, clients: p.Clients,
		issued: p.Metrics.Issued.WithLabelValues("oauth_grant", ""), idTokens: p.Metrics.Issued.WithLabelValues("id_token", ""), reuse: newReuseCounter(), usage: cmp.Or[usage.Counter](p.Usage, usage.Discard),
		members: p.Members, policies: p.Policies, resources: p.Resources, orgs: p.Orgs}
}

func newClientsFrom(c *ent.Client, clk clock.Clock, cfg config.Config, bus invalidation.Bus) (*clients, error) {
	roots, err := outbound.Roots(cfg.OutboundCAFile)
	if err != nil {
		return nil, err
	}
	cs := newClients(c, clk, outbound.Policy{AllowHTTP: cfg.WebhookAllowHTTP}, roots)
	bearer.Follow(bus, clientTopic, cs.registered)
	return cs, nil
}

type handlerParams struct {
	fx.In
	Ent         *ent.Client
	Config      config.Config
	Clock       clock.Clock
	Clients     *clients
	Grants      *grants
	Resources   resource.Registry
	Members     identity.Memberships
	Policies    policy.Source
	Keys        *secret.Keyring
	Limits      *ratelimit.Limiters
	Guard       *guard.Guard
	Verifier    oauth.Verifier
	Kinds       *credential.Registry
	Users       identity.Users
	Sessions    identity.Sessions
	DPoP        *dpop.Checker
	AppSessions oauth.AppSessions
	// The device flow's endpoint authenticates clients as the token endpoint does and
	// resolves them as its grants do.
	ClientAuth oauth.ClientAuthenticator
	Service    *service
}

func newHandler(p handlerParams) *handler {
	return &handler{ent: p.Ent, cfg: p.Config, clock: p.Clock, clients: p.Clients, grants: p.Grants, resources: p.Resources,
		members: p.Members, policies: p.Policies, keys: p.Keys, limits: p.Limits, guard: p.Guard,
		verifier: p.Verifier, kinds: p.Kinds, users: p.Users, sessions: p.Sessions, dpop: p.DPoP, appSessions: p.AppSessions,
		clientAuth: p.ClientAuth, svc: p.Service, wrong: newWrongTries()}
}

// metadata is what SPEC §16 and §21 add to the RFC 8414 document: the authorization
// endpoint, and OpenID Connect Discovery's fields (the same document is served at
// /.well-known/openid-configuration).
func (h *handler) metadata(issuer string) map[string]any {
	m := map[string]any{
		"authorization_endpoint":                         issuer + oauth.AuthorizePath,
		"response_types_supported":                       []string{"code"},
		"response_modes_supported":                       []string{"query"},
		"code_challenge_methods_supported":               []string{"S256"},
		"client_id_metadata_document_supported":          true,
		"authorization_response_iss_parameter_supported": true,
		"scopes_supported":                               identityScopes,
		"userinfo_endpoint":                              issuer + oauth.UserinfoPath,
		"end_session_endpoint":                           issuer + oauth.EndSessionPath,
		"subject_types_supported":                        []string{"public"},
		"id_token_signing_alg_values_supported":          oauth.IDTokenAlgorithms,
		"acr_values_supported":                           []string{acrPassword, acrMFA},
		"prompt_values_supported":                        promptValues,
		"claims_supported": []string{"sub", "iss", "aud", "exp", "iat", "auth_time", "nonce", "acr", "amr", "azp", "sid",
			"at_hash", "name", "email", "email_verified", "org_id", "org_role", "org_permissions"},
		"claims_parameter_supported":            false,
		"request_parameter_supported":           false,
		"request_uri_parameter_supported":       false,
		"frontchannel_logout_supported":         true,
		"frontchannel_logout_session_supported": true,
		"backchannel_logout_supported":          true,
		"backchannel_logout_session_supported":  true,
		"claim_types_supported":                 []string{"normal"},
	}
	if h.registrationOpen() {
		m["registration_endpoint"] = issuer + oauth.RegisterPath
	}
	return m
}
