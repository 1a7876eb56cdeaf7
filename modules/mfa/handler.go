package mfa

import (
	"errors"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/jsonbody"
	"github.com/authcore/authcore/platform/ratelimit"
)

type handler struct {
	svc      *Service
	guard    *guard.Guard
	sessions identity.Sessions
	users    identity.Users
	signins  *ratelimit.SignIns
	devices  *ratelimit.Devices
	cfg      config.Config
	clock    clock.Clock
}

func (h *handler) routes() []httpserver.Route {
	signedIn := h.guard.Session()
	r := func(method, path string, hs ...fiber.Handler) httpserver.Route {
		return httpserver.Route{Method: method, Path: "/v1/auth-core/mfa" + path, Handlers: append([]fiber.Handler{signedIn}, hs...)}
	}
	return []httpserver.Route{
		r(http.MethodGet, "", h.overview),
		r(http.MethodPost, "/totp", h.beginTOTP),
		r(http.MethodPost, "/totp/:id/confirm", h.confirmTOTP),
		r(http.MethodDelete, "/:id", h.guard.Recently(h.remove)),
		r(http.MethodPost, "/passkeys/register/begin", h.beginRegistration),
		r(http.MethodPost, "/passkeys/register/finish", h.finishRegistration),
		r(http.MethodPost, "/recovery-codes", h.guard.Recently(h.recoveryCodes)),
		r(http.MethodPost, "/step-up", h.stepUp),
	}
}

func (h *handler) overview(c *fiber.Ctx) error {
	p, _ := guard.PrincipalOf(c)
	o, err := h.svc.Overview(c.UserContext(), p.UserID)
	if err != nil {
		return err
	}
	return c.JSON(o)
}

// adding reads { name? } of a request that starts a new factor, which wants an
// authentication within 5 minutes (SPEC §17).
func (h *handler) adding(c *fiber.Ctx) (identity.Principal, string, error) {
	name, err := optionalName(c)
	if err != nil {
		return identity.Principal{}, "", err
	}
	p, _ := guard.PrincipalOf(c)
	if !h.guard.AuthenticatedWithin(p, guard.FactorChangeWindow) {
		return p, "", errRecentForFactors
	}
	return p, name, nil
}

// optionalName reads { name? }: a missing or unparsable body is no name.
func optionalName(c *fiber.Ctx) (string, error) {
	if len(c.Body()) == 0 {
		return "", nil
	}
	f := jsonbody.Read(c.Body())
	name, st := f.String("name")
	switch {
	case st == jsonbody.WrongType:
		f.Fail("name", "must be a string")
	case st == jsonbody.OK && (len(name) > 80 || !printable(name)):
		f.Fail("name", "must be at most 80 printable characters")
	}
	return name, f.Err()
}

func printable(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

func (h *handler) beginTOTP(c *fiber.Ctx) error {
	p, name, err := h.adding(c)
	if err != nil {
		return err
	}
	pending, err := h.svc.enrol.BeginTOTP(c.UserContext(), p.UserID, p.TenantID, name)
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(pending)
}

func (h *handler) confirmTOTP(c *fiber.Ctx) error {
	f := jsonbody.Read(c.Body())
	code := f.RequiredString("code")
	if err := f.Err(); err != nil {
		return err
	}
	p, _ := guard.PrincipalOf(c)
	var out Confirmed
	err := h.spending(c, p, func() error {
		var err error
		out, err = h.svc.enrol.ConfirmTOTP(c.UserContext(), p.UserID, c.Params("id"), code, httpserver.Origin(c))
		return err
	})
	if err != nil {
		return err
	}
	return c.JSON(out)
}

// remove: a factor that is not the last wants the 15-minute step-up (Recently, on the
// route); the last one an authentication within 5 minutes.
func (h *handler) remove(c *fiber.Ctx) error {
	p, _ := guard.PrincipalOf(c)
	recent := h.guard.AuthenticatedWithin(p, guard.FactorChangeWindow)
	if err := h.svc.enrol.Remove(c.UserContext(), p.UserID, c.Params("id"), recent, httpserver.Origin(c)); err != nil {
		return err
	}
	return c.JSON(fiber.Map{"ok": true})
}

func (h *handler) beginRegistration(c *fiber.Ctx) error {
	p, name, err := h.adding(c)
	if err != nil {
		return err
	}
	opts, err := h.svc.enrol.BeginRegistration(c.UserContext(), p.UserID, p.TenantID, name)
	if err != nil {
		return err
	}
	return c.JSON(opts)
}

func (h *handler) finishRegistration(c *fiber.Ctx) error {
	if _, ok := jsonbody.Parse(c.Body()); !ok {
		return errBadCredential
	}
	p, _ := guard.PrincipalOf(c)
	out, err := h.svc.enrol.FinishRegistration(c.UserContext(), p.UserID, c.Body(), httpserver.Origin(c))
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(out)
}

func (h *handler) recoveryCodes(c *fiber.Ctx) error {
	p, _ := guard.PrincipalOf(c)
	codes, err := h.svc.enrol.NewRecoveryCodes(c.UserContext(), p.UserID)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"recoveryCodes": codes})
}

// steppedUp is the answer of a step-up: an access token whose authTime is now.
type steppedUp struct {
	AccessToken          string    `json:"accessToken"`
	AccessTokenExpiresAt time.Time `json:"accessTokenExpiresAt"`
	AuthTime             time.Time `json:"authTime"`
}

func (h *handler) stepUp(c *fiber.Ctx) error {
	f := jsonbody.Read(c.Body())
	proof := identity.ReadProof(f)
	if err := f.Err(); err != nil {
		return err
	}
	p, _ := guard.PrincipalOf(c)
	ctx := c.UserContext()
	var method string
	err := h.spending(c, p, func() error {
		var err error
		method, err = h.svc.Verify(ctx, p.UserID, p.TenantID, proof, httpserver.Origin(c))
		return err
	})
	if err != nil {
		return err
	}
	t, err := h.sessions.StepUp(httpserver.WithIssuer(c, h.cfg), p.SessionHandle, method)
	var ve *identity.VerifyError
	if errors.As(err, &ve) { // the session ended since the guard checked it
		return apperr.Unauthorized("session not valid: " + ve.Reason)
	}
	if err != nil {
		return err
	}
	now := h.clock.Now()
	if cred, _ := guard.CredentialOf(c); cred.FromCookie {
		guard.SetSessionCookies(c, h.cfg, t, now)
	}
	return c.JSON(steppedUp{AccessToken: t.AccessToken, AccessTokenExpiresAt: t.AccessTokenExpiresAt.UTC(), AuthTime: now.UTC().Truncate(time.Second)})
}

// spending runs check under the budget of failed attempts the password step spends (SPEC
// §9a, §9b, §17): the device's when the browser holds a device cookie of the account,
// else the account's. A wrong factor spends it, anything else gives the attempt back.
func (h *handler) spending(c *fiber.Ctx, p identity.Principal, check func() error) error {
	ctx := c.UserContext()
	prof, err := h.users.Profile(ctx, p.UserID)
	if err != nil {
		return err
	}
	email := ""
	if prof.Email != nil {
		email = *prof.Email
	}
	refund, err := h.signins.Spend(ctx, h.devices.Budget(c, ratelimit.Account(p.TenantID, email)))
	if err != nil {
		return err
	}
	err = check()
	if !errors.Is(err, identity.ErrSecondFactor) {
		refund(ctx)
	}
	return err
}
