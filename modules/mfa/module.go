// Package mfa owns users' second factors (SPEC §17): TOTP apps, passkeys and recovery
// codes, and the step-up that refreshes a session's authentication time. It supplies
// identity.Factors to the guard, which asks for a recent authentication before what mints
// credentials, and identity.SecondFactor to the account module, which owns sign-in.
package mfa

import (
	"context"
	"log/slog"
	"time"

	"go.uber.org/fx"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/mfachallenge"
	"github.com/authcore/authcore/ent/mfafactor"
	"github.com/authcore/authcore/ent/mfarecoverycode"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/bearer"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/credential"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/invalidation"
	"github.com/authcore/authcore/platform/ratelimit"
	"github.com/authcore/authcore/platform/secret"
)

// sealedTOTP is each TOTP factor's shared secret, sealed to the factor's id.
var sealedTOTP = secret.Declare(secret.Declaration{Name: "TOTP secrets", Table: mfafactor.Table, Column: mfafactor.FieldSecretSealed})

// Module wires the service, its routes, the pruning of expired challenges and the
// re-sealing of TOTP secrets.
var Module = fx.Module("mfa",
	fx.Provide(fx.Annotate(newService, fx.As(fx.Self()), fx.As(new(identity.Factors)), fx.As(new(identity.SecondFactor)))),
	secret.AsSealed(sealedTOTP),
	credential.AsClaim("mfa_token", secret.Prefix(mfaTokenKind)),
	// Second factors are dropped with the rest when a mailed proof adopts an unverified
	// account: a passkey signs in alone, and a TOTP the maker set would lock the owner out.
	identity.AsPriorCredentials(func(b invalidation.Bus) priorFactors { return priorFactors{bus: b} }),
	fx.Invoke(func(lc fx.Lifecycle, s *Service, log *slog.Logger) {
		database.PruneEvery(lc, log, "expired MFA challenges", 10*time.Minute, s.Prune)
	}),
	httpserver.AsModuleRoutes("mfa", func(p handlerParams) []httpserver.Route {
		return (&handler{svc: p.Svc, guard: p.Guard, sessions: p.Sessions, users: p.Users, signins: p.SignIns, devices: p.Devices, cfg: p.Config, clock: p.Clock}).routes()
	}),
)

type serviceParams struct {
	fx.In
	Ent     *ent.Client
	Ring    *secret.Keyring
	Clock   clock.Clock
	Bus     invalidation.Bus
	Audit   *audit.Recorder
	Users   identity.Users
	Tenants identity.Tenants `optional:"true"`
	Config  config.Config
	Log     *slog.Logger
}

func newService(p serviceParams) (*Service, error) {
	wa, err := newWebAuthn(p.Config.SelfOrigin())
	if err != nil {
		return nil, err
	}
	if wa == nil {
		p.Log.Warn("passkeys are off: AUTHCORE_PUBLIC_URL names an IP address, which browsers refuse as a WebAuthn relying party id", "publicUrl", p.Config.SelfURL())
	}
	s := &Service{ent: p.Ent, ring: p.Ring, clock: p.Clock, audit: p.Audit,
		webauthn: wa, log: p.Log, enrolled: bearer.NewCache[string, bool](100_000, enrolledTTL)}
	s.ceremonies = ceremonies{ent: p.Ent, clock: p.Clock, users: p.Users}
	s.enrol = enrolment{ent: p.Ent, ring: p.Ring, clock: p.Clock, bus: p.Bus, audit: p.Audit, users: p.Users, tenants: p.Tenants,
		webauthn: wa, ceremonies: s.ceremonies}
	bearer.Follow(p.Bus, identity.FactorsTopic, s.enrolled)
	return s, nil
}

type handlerParams struct {
	fx.In
	Svc      *Service
	Guard    *guard.Guard
	Sessions identity.Sessions
	Users    identity.Users
	SignIns  *ratelimit.SignIns
	Devices  *ratelimit.Devices
	Config   config.Config
	Clock    clock.Clock
}

// priorFactors drops an account's second factors, recovery codes and second steps in
// flight (identity.PriorCredentials).
type priorFactors struct{ bus invalidation.Bus }

func (p priorFactors) DropPrior(ctx context.Context, tx *ent.Tx, userID string) (string, int, error) {
	n, err := tx.MFAFactor.Delete().Where(mfafactor.UserID(userID)).Exec(ctx)
	if err != nil {
		return "", 0, err
	}
	if _, err := tx.MFARecoveryCode.Delete().Where(mfarecoverycode.UserID(userID)).Exec(ctx); err != nil {
		return "", 0, err
	}
	if _, err := tx.MFAChallenge.Delete().Where(mfachallenge.UserID(userID)).Exec(ctx); err != nil {
		return "", 0, err
	}
	return "factors", n, p.bus.Publish(ctx, tx, identity.FactorsTopic, userID)
}
