// Package account owns users: sign-up, sign-in and the user lookups other modules need
// (through platform/identity). It must not issue or verify session credentials itself:
// it asks the session engine through identity.Sessions.
package account

import (
	"context"
	_ "embed"
	"log/slog"

	"go.uber.org/fx"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/platform/apidoc"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/credential"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/invalidation"
	"github.com/authcore/authcore/platform/mail"
	"github.com/authcore/authcore/platform/oauth"
	"github.com/authcore/authcore/platform/ratelimit"
	"github.com/authcore/authcore/platform/secret"
)

// peopleOpenAPI documents the routes of a project's people (SPEC §25).
//
//go:embed people.yaml
var peopleOpenAPI []byte

// Module wires the account service and its routes.
var Module = fx.Module("account",
	fx.Supply(OWASPParams),
	apidoc.AsFragment(func() (apidoc.Fragment, error) { return apidoc.YAML("account-people", peopleOpenAPI) }),
	fx.Provide(fx.Annotate(NewService,
		fx.As(fx.Self()), fx.As(new(identity.Users)), fx.As(new(identity.Directory)), fx.As(new(Accounts)), fx.As(new(identity.ProvenUsers)))),
	// SCIM directories create the people their org has not vouched for (SPEC §27).
	fx.Provide(func(s *Service) identity.ProvisionedUsers { return s }),
	// SCIM directories deactivate and reactivate people through it (SPEC §27).
	fx.Provide(fx.Annotate(newDeprovisioner, fx.As(new(identity.Deprovisioning)))),
	fx.Provide(fx.Annotate(newRecovery, fx.As(fx.Self()), fx.As(new(identity.EmailVerification)), fx.As(new(identity.AddressProofs)))),
	credential.AsClaim("password_reset_token", secret.Prefix(resetKind)),
	credential.AsClaim("email_verification_token", secret.Prefix(verifyKind)),
	httpserver.AsModuleRoutes("account", func(p handlerParams) []httpserver.Route {
		h := &handler{guard: p.Guard, svc: p.Svc, recovery: p.Recovery, tenants: p.Tenants, sessions: p.Sessions, cfg: p.Config, clock: p.Clock, limits: p.Limits,
			signins: p.SignIns, devices: p.Devices, second: p.Second, rules: p.Rules}
		return append(h.routes(), peopleRoutes(p)...)
	}),
)

type handlerParams struct {
	fx.In
	Guard    *guard.Guard
	Svc      *Service
	Recovery *Recovery
	Tenants  identity.Tenants `optional:"true"`
	Sessions identity.Sessions
	Config   config.Config
	Clock    clock.Clock
	Limits   *ratelimit.Limiters
	SignIns  *ratelimit.SignIns
	Devices  *ratelimit.Devices
	// Second is the MFA module; without it sign-in is one step.
	Second identity.SecondFactor `optional:"true"`
	// Rules is the federation module; without it password sign-in is always allowed.
	Rules identity.SignInRules `optional:"true"`
	Ent   *ent.Client
	// Grants and Prior end what a blocked or deleted person holds (SPEC §25).
	Grants oauth.GrantEnder            `optional:"true"`
	Prior  []identity.PriorCredentials `group:"prior_credentials"`
}

// Accounts is what operator commands (authcore users create) use.
type Accounts interface {
	Create(ctx context.Context, in SignUp) (User, error)
}

// NewSignUp validates an operator's input the way the HTTP route does.
func NewSignUp(email, password string, name *string) (SignUp, error) {
	body := map[string]any{"email": email, "password": password}
	if name != nil {
		body["name"] = *name
	}
	in, err := parseSignUpValue(body)
	in.operator = true
	return in, err
}

type recoveryParams struct {
	fx.In
	Users    *Service
	Ent      *ent.Client
	Clock    clock.Clock
	Sessions identity.Sessions
	Tenants  identity.Tenants `optional:"true"`
	Mail     mail.Sender
	Audit    *audit.Recorder
	Bus      invalidation.Bus
	Log      *slog.Logger
	Config   config.Config
	// Grants ends a user's OAuth grants when the password changes (SPEC §9b).
	Grants oauth.GrantEnder `optional:"true"`
	// Prior are the ways into an account other modules keep, dropped when a mailed proof
	// adopts an unverified account.
	Prior []identity.PriorCredentials `group:"prior_credentials"`
}

func newRecovery(p recoveryParams) *Recovery {
	return &Recovery{users: p.Users, ent: p.Ent, clock: p.Clock, sessions: p.Sessions, tenants: p.Tenants, mail: p.Mail,
		audit: p.Audit, bus: p.Bus, log: p.Log, self: p.Config.SelfURL(), grants: p.Grants, prior: p.Prior}
}
