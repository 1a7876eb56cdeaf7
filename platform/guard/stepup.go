package guard

import (
	"context"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/identity"
)

// Windows of SPEC §17: what mints credentials or widens access wants an authentication
// within StepUpWindow from a user with a second factor; adding or removing a factor wants
// one within FactorChangeWindow from anyone.
const (
	StepUpWindow       = 15 * time.Minute
	FactorChangeWindow = 5 * time.Minute
)

var (
	// ErrReauthenticate asks for a step-up (POST /v1/auth-core/mfa/step-up).
	ErrReauthenticate = apperr.New(apperr.KindForbidden, "reauthentication_required",
		"authenticate again to do this: a second factor is needed within the last 15 minutes")
	// ErrMFARequired refuses a member without a factor on a project that requires one.
	ErrMFARequired = apperr.New(apperr.KindForbidden, "mfa_required",
		"this project requires a second factor: enrol one first")
)

// Recently runs h for a caller, already admitted by a session guard, who has no second
// factor or whose session authenticated within StepUpWindow. It wraps a handler, not a
// route, so that a collection's create can want it while its list does not.
func (g *Guard) Recently(h fiber.Handler) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if err := g.CheckRecent(c); err != nil {
			return err
		}
		return h(c)
	}
}

// CheckRecent is Recently's test, for a handler that wants it on one branch only.
func (g *Guard) CheckRecent(c *fiber.Ctx) error {
	if _, ok := SetupOf(c); ok {
		return nil // a setup session is an hour old at most, and has no factor to ask for
	}
	p, ok := PrincipalOf(c)
	if !ok {
		return apperr.Unauthorized("sign in first")
	}
	if g.factors == nil || g.AuthenticatedWithin(p, StepUpWindow) {
		return nil
	}
	enrolled, err := g.factors.Enrolled(c.UserContext(), p.UserID)
	if err != nil {
		return err
	}
	if enrolled {
		return ErrReauthenticate
	}
	return nil
}

// AuthenticatedWithin reports whether p's session authenticated less than d ago.
func (g *Guard) AuthenticatedWithin(p identity.Principal, d time.Duration) bool {
	return !p.AuthTime.IsZero() && g.clock.Now().Sub(p.AuthTime) < d
}

// RequireFactor refuses a member without a second factor on a project whose policy
// requires one (403 mfa_required): ProjectRole's rule, for a handler that acts on a
// project its route does not name (approving an application's consent, SPEC §9b).
func (g *Guard) RequireFactor(ctx context.Context, projectID, userID string) error {
	if g.factors == nil || g.policies == nil {
		return nil
	}
	pol, err := g.policies.Policy(ctx, projectID)
	if err != nil || !pol.RequireMFA {
		return err
	}
	enrolled, err := g.factors.Enrolled(ctx, userID)
	if err != nil {
		return err
	}
	if !enrolled {
		return ErrMFARequired
	}
	return nil
}
