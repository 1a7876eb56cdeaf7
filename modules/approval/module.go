// Package approval is people in the loop of agents (SPEC §23): an agent's client asks one
// of its project's people, out of band, to approve an action described by RFC 9396
// authorization details of a type the project registered with a JSON Schema (OpenID CIBA,
// poll and ping); the person sees it in the console's Approvals inbox (and a mail),
// approves with a fresh authentication or denies, and the client's token carries exactly
// what was approved. It contributes the backchannel grant and its metadata to the OAuth
// server and the auth_req_id's prefix and events to the credential registry; it must not
// issue a token for anything the person did not see.
package approval

import (
	"log/slog"
	"time"

	"go.uber.org/fx"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/backchannelclient"
	"github.com/authcore/authcore/ent/backchannelrequest"
	"github.com/authcore/authcore/platform/apidoc"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/credential"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/dpop"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/mail"
	"github.com/authcore/authcore/platform/oauth"
	"github.com/authcore/authcore/platform/outbound"
	"github.com/authcore/authcore/platform/ratelimit"
	"github.com/authcore/authcore/platform/resource"
	"github.com/authcore/authcore/platform/secret"
)

// The ping clients' signing secrets, and what a pending ping carries, each sealed to its
// row's id.
var (
	sealedPingSecret = secret.Declare(secret.Declaration{Name: "backchannel ping secrets", Table: backchannelclient.Table, Column: backchannelclient.FieldSecretSealed})
	sealedPing       = secret.Declare(secret.Declaration{Name: "backchannel ping secrets", Table: backchannelrequest.Table, Column: backchannelrequest.FieldPingSealed})
)

// Module serves SPEC §23's approvals and contributes their grant, metadata and kind.
var Module = fx.Module("approval",
	fx.Decorate(func(l *slog.Logger) *slog.Logger { return l.With("module", "approval") }),
	fx.Provide(newService),
	fx.Invoke(run),
	// A deprovisioned person's open requests are denied (SPEC §27).
	identity.AsPersonEnding(func(s *service) personApprovals { return personApprovals{s} }),
	oauth.AsGrant(func(s *service) oauth.Grant { return grant{s} }),
	oauth.AsMetadata(func() oauth.Metadata { return metadata }),
	credential.AsKinds(func(s *service) []credential.Kind { return []credential.Kind{s.kind()} }),
	secret.AsSealed(sealedPingSecret, sealedPing),
	httpserver.AsModuleRoutes("approval", func(s *service, g *guard.Guard, l *ratelimit.Limiters, cfg config.Config, d *dpop.Checker) []httpserver.Route {
		return (&handler{svc: s, guard: g, limits: l, cfg: cfg, dpop: d}).routes()
	}),
	apidoc.AsFragment(func() (apidoc.Fragment, error) { return apidoc.YAML("approval", openapiYAML) }),
)

type params struct {
	fx.In
	Ent       *ent.Client
	Clock     clock.Clock
	Audit     *audit.Recorder
	Keys      *secret.Keyring
	Users     identity.ProvenUsers
	Tenants   identity.Tenants `optional:"true"`
	Mail      mail.Sender
	Log       *slog.Logger
	Auth      oauth.ClientAuthenticator
	Agents    oauth.Agents `optional:"true"`
	Signer    oauth.Signer
	Resources resource.Registry
	Config    config.Config
}

func newService(p params) (*service, error) {
	roots, err := outbound.Roots(p.Config.OutboundCAFile)
	if err != nil {
		return nil, err
	}
	policy := outbound.Policy{AllowHTTP: p.Config.WebhookAllowHTTP}
	return &service{ent: p.Ent, clock: p.Clock, audit: p.Audit, keys: p.Keys, users: p.Users, tenants: p.Tenants, mail: p.Mail,
		log: p.Log, auth: p.Auth, agents: p.Agents, signer: p.Signer, resources: p.Resources, policy: policy, cfg: p.Config,
		pings: newPinger(p.Ent, p.Clock, p.Keys, p.Log, policy, roots), self: p.Config.SelfURL(),
		types: detailTypes{ent: p.Ent, clock: p.Clock, audit: p.Audit}}, nil
}

// run starts the pinger with the process and prunes old requests.
func run(lc fx.Lifecycle, s *service, log *slog.Logger) {
	database.RunWoken(lc, s.pings.wake, pingEvery, s.pings.run)
	database.PruneEvery(lc, log, "expired backchannel requests", 10*time.Minute, s.prune)
}
