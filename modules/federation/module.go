// Package federation is sign-in with identities people already have (SPEC §20): upstream
// OpenID Connect and OAuth 2.0 providers per tenant, the identities that link their
// subjects to users, sign-in by a mailed link or code, and providers that claim email
// domains. It starts sessions through identity.Sessions and the second step through
// identity.SecondFactor, and finds or creates users through identity.ProvenUsers; it
// never reads or writes the account module's entities itself.
package federation

import (
	"context"
	"log/slog"
	"time"

	"go.uber.org/fx"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/federationflow"
	entidentity "github.com/authcore/authcore/ent/identity"
	"github.com/authcore/authcore/ent/samlconnection"
	"github.com/authcore/authcore/ent/signinprovider"
	"github.com/authcore/authcore/platform/assertion"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/credential"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/mail"
	"github.com/authcore/authcore/platform/outbound"
	"github.com/authcore/authcore/platform/ratelimit"
	"github.com/authcore/authcore/platform/secret"
)

// Providers' client secrets, identities' upstream tokens and sign-in flows' PKCE
// verifiers, each sealed to its row's id.
var (
	sealedClientSecret   = secret.Declare(secret.Declaration{Name: "sign-in provider secrets and upstream tokens", Table: signinprovider.Table, Column: signinprovider.FieldClientSecretSealed})
	sealedUpstreamTokens = secret.Declare(secret.Declaration{Name: "sign-in provider secrets and upstream tokens", Table: entidentity.Table, Column: entidentity.FieldTokensSealed})
	sealedVerifier       = secret.Declare(secret.Declaration{Name: "sign-in flows' PKCE verifiers", Table: federationflow.Table, Column: federationflow.FieldVerifierSealed})
	sealedSAMLKey        = secret.Declare(secret.Declaration{Name: "SAML connections' SP keys", Table: samlconnection.Table, Column: samlconnection.FieldSpKeySealed})
)

// Module serves SPEC §20's routes and supplies the account module its sign-in rules.
var Module = fx.Module("federation",
	fx.Provide(newService, fx.Private),
	fx.Provide(func(s *service) identity.SignInRules { return s }),
	fx.Provide(func(s *service) identity.Linked { return s.linked }),
	// Its identities are dropped with the rest when a mailed proof adopts an unverified
	// account; a type of their own, so the account module needs nothing of the service.
	identity.AsPriorCredentials(func() priorIdentities { return priorIdentities{} }),
	fx.Provide(func(s *service) identity.Upstreams { return upstreamsFor{s} }),
	identity.AsOrgEnding(func() orgConnections { return orgConnections{} }),
	fx.Provide(func(s *service) *Operator { return &Operator{svc: s} }),
	secret.AsSealed(sealedClientSecret, sealedUpstreamTokens, sealedVerifier, sealedSAMLKey),
	// The secrets it mails claim their prefixes (SPEC §9b): no kind or product may take them.
	credential.AsClaim("email_signin_link", secret.Prefix(mailKind)),
	credential.AsClaim("domain_proof_link", secret.Prefix(domainKind)),
	fx.Invoke(func(lc fx.Lifecycle, log *slog.Logger, s *service) {
		database.PruneEvery(lc, log, "expired upstream sign-ins and mail sign-ins", 10*time.Minute, s.prune)
		// SAML connections' IdP metadata by URL is read again when due (SPEC §27).
		database.PruneEvery(lc, log, "SAML metadata due for a refresh", 10*time.Minute, s.saml.admin.refreshDue)
	}),
	httpserver.AsModuleRoutes("federation", func(p handlerParams) []httpserver.Route {
		return (&handler{svc: p.Svc, guard: p.Guard, cfg: p.Config, limits: p.Limits, signins: p.SignIns, devices: p.Devices, tenants: p.Tenants}).routes()
	}),
)

type serviceParams struct {
	fx.In
	Ent      *ent.Client
	Keys     *secret.Keyring
	Clock    clock.Clock
	Config   config.Config
	Users    identity.ProvenUsers
	Proofs   identity.AddressProofs
	Sessions identity.Sessions
	Second   identity.SecondFactor `optional:"true"`
	Tenants  identity.Tenants      `optional:"true"`
	Orgs     identity.OrgDomains   `optional:"true"`
	OrgList  identity.Orgs         `optional:"true"`
	Roster   identity.OrgRoster    `optional:"true"`
	Replay   assertion.Replay      `optional:"true"`
	Audit    *audit.Recorder
	Mail     mail.Sender
	Log      *slog.Logger
}

func newService(p serviceParams) (*service, error) {
	cfg := p.Config
	policy := outbound.Policy{AllowHTTP: cfg.WebhookAllowHTTP}
	roots, err := outbound.Roots(cfg.OutboundCAFile)
	if err != nil {
		return nil, err
	}
	// The file is read once, at construction: a bad entry stops the process with one line.
	file, err := loadFile(context.Background(), cfg.ProvidersFile, policy)
	if err != nil {
		return nil, err
	}
	st := &store{ent: p.Ent, keys: p.Keys, policy: policy, file: file}
	svc := &service{ent: p.Ent, keys: p.Keys, clock: p.Clock, cfg: cfg, store: st, up: newUpstreams(policy, roots, p.Clock),
		users: p.Users, proofs: p.Proofs, sessions: p.Sessions, second: p.Second, tenants: p.Tenants, orgs: p.Orgs, orgList: p.OrgList, audit: p.Audit, mail: p.Mail,
		log: p.Log, self: cfg.SelfURL(),
		org:    orgRules{orgs: p.Orgs, store: st},
		admin:  providerAdmin{ent: p.Ent, store: st, policy: policy, audit: p.Audit, self: cfg.SelfURL()},
		linked: linkedIdentities{ent: p.Ent, store: st, users: p.Users, second: p.Second, audit: p.Audit}}
	admin := samlAdmin{ent: p.Ent, keys: p.Keys, clock: p.Clock, policy: policy, audit: p.Audit, roster: p.Roster, self: cfg.SelfURL(),
		fetch: outbound.NewFetcher(policy, roots, p.Clock, outbound.FetcherOptions{Limit: maxMetadataXML, Timeout: 10 * time.Second,
			MinAge: 30 * time.Second, MaxAge: 5 * time.Minute, Entries: 256})}
	svc.org.saml = admin
	svc.saml = samlSignIn{svc: svc, admin: admin, sps: newSAMLSPs(p.Keys, p.Clock, cfg.SelfURL()), replay: p.Replay, roster: p.Roster}
	return svc, nil
}

type handlerParams struct {
	fx.In
	Svc     *service
	Guard   *guard.Guard
	Config  config.Config
	Limits  *ratelimit.Limiters
	SignIns *ratelimit.SignIns
	Devices *ratelimit.Devices
	Tenants identity.Tenants `optional:"true"`
	Log     *slog.Logger
}

// Operator is what `authcore providers …` uses: the dashboard tenant's providers and
// methods, under the rules of the admin API, without an actor.
type Operator struct{ svc *service }

// Create adds a provider to tenant "public" from a JSON body of the admin API's shape.
func (o *Operator) Create(ctx context.Context, body []byte) (ProviderView, error) {
	return o.svc.admin.CreateProvider(ctx, identity.PublicTenant, body, Change{})
}

// Update changes a provider of tenant "public".
func (o *Operator) Update(ctx context.Context, id string, body []byte) (ProviderView, error) {
	return o.svc.admin.UpdateProvider(ctx, identity.PublicTenant, id, body, Change{})
}

// Delete removes a provider of tenant "public", with its identities.
func (o *Operator) Delete(ctx context.Context, id string) error {
	return o.svc.admin.DeleteProvider(ctx, identity.PublicTenant, id, Change{})
}

// List is the dashboard tenant's providers, the file's among them.
func (o *Operator) List(ctx context.Context) ([]ProviderView, error) {
	return o.svc.admin.views(ctx, identity.PublicTenant)
}

// Methods is the dashboard tenant's methods.
func (o *Operator) Methods(ctx context.Context) (Methods, error) {
	return o.svc.store.methods(ctx, identity.PublicTenant)
}

// SetMethods sets them (unless the file names them: it wins).
func (o *Operator) SetMethods(ctx context.Context, body []byte) (Methods, error) {
	if o.svc.store.file.Methods != nil {
		return Methods{}, errFileManaged
	}
	return o.svc.admin.SetMethods(ctx, identity.PublicTenant, body, Change{})
}
