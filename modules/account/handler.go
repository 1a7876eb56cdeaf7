package account

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/jsonbody"
	"github.com/authcore/authcore/platform/ratelimit"
)

type handler struct {
	guard    *guard.Guard
	svc      *Service
	recovery *Recovery
	tenants  identity.Tenants // nil when no module supplies tenants other than "public"
	sessions identity.Sessions
	cfg      config.Config
	clock    clock.Clock
	limits   *ratelimit.Limiters
	signins  *ratelimit.SignIns
	devices  *ratelimit.Devices
	second   identity.SecondFactor // nil: no MFA module
	rules    identity.SignInRules  // nil: no federation module
}

// passwordAllowed asks the tenant's sign-in rules (SPEC §20) before any hashing: a tenant
// may turn passwords off, or send an address of a domain its provider proved to it.
func (h *handler) passwordAllowed(ctx context.Context, tenant, email string) error {
	if h.rules == nil {
		return nil
	}
	return h.rules.PasswordAllowed(ctx, tenant, email)
}

func (h *handler) routes() []httpserver.Route {
	csrf, attempts := h.guard.LoginCSRF(), h.limits.Attempts.Middleware()
	routes := []httpserver.Route{
		{Method: http.MethodPost, Path: "/v1/auth-core/signup", Handlers: []fiber.Handler{csrf, attempts, h.signUp}},
		{Method: http.MethodPost, Path: "/v1/auth-core/signin", Handlers: []fiber.Handler{csrf, attempts, h.signIn}},
		{Method: http.MethodPost, Path: "/v1/auth-core/password/reset-request", Handlers: []fiber.Handler{attempts, h.resetRequest}},
		{Method: http.MethodPost, Path: "/v1/auth-core/password/reset", Handlers: []fiber.Handler{attempts, h.reset}},
		{Method: http.MethodPost, Path: "/v1/auth-core/password/change", Handlers: []fiber.Handler{h.guard.Session(), h.changePassword}},
		{Method: http.MethodPost, Path: "/v1/auth-core/email/verify-request", Handlers: []fiber.Handler{h.guard.Session(), h.verifyRequest}},
		{Method: http.MethodPost, Path: "/v1/auth-core/email/verify", Handlers: []fiber.Handler{attempts, h.verify}},
	}
	if h.second != nil {
		routes = append(routes,
			httpserver.Route{Method: http.MethodPost, Path: "/v1/auth-core/mfa/verify", Handlers: []fiber.Handler{csrf, attempts, h.verifySecond}},
			httpserver.Route{Method: http.MethodPost, Path: "/v1/auth-core/mfa/passkeys/signin/begin", Handlers: []fiber.Handler{csrf, attempts, h.beginPasskey}},
			httpserver.Route{Method: http.MethodPost, Path: "/v1/auth-core/mfa/passkeys/signin/finish", Handlers: []fiber.Handler{csrf, attempts, h.finishPasskey}},
		)
	}
	return routes
}

// signedIn is the body of a successful sign-up or sign-in (SPEC §2).
type signedIn struct {
	User    User        `json:"user"`
	Session sessionBody `json:"session"`
}

type sessionBody struct {
	SessionHandle        string    `json:"sessionHandle"`
	AccessToken          string    `json:"accessToken"`
	RefreshToken         string    `json:"refreshToken"`
	AccessTokenExpiresAt time.Time `json:"accessTokenExpiresAt"`
}

func (h *handler) signUp(c *fiber.Ctx) error {
	if h.cfg.Signup == "closed" {
		return errSignupClosed
	}
	in, err := parseSignUp(c.Body())
	if err != nil {
		return err
	}
	if err := h.checkTenant(c.UserContext(), in.TenantID); err != nil {
		return err
	}
	if err := h.passwordAllowed(c.UserContext(), in.TenantID, in.Email); err != nil {
		return err
	}
	in.Origin = httpserver.Origin(c)
	u, err := h.svc.Create(c.UserContext(), in)
	if err != nil {
		return err
	}
	return h.startSession(c, http.StatusCreated, u)
}

func (h *handler) signIn(c *fiber.Ctx) error {
	f := jsonbody.Read(c.Body())
	email := f.RequiredString("email")
	password := f.RequiredString("password")
	tenant := tenantOf(f)
	if err := f.Err(); err != nil {
		return err
	}
	if err := h.passwordAllowed(c.UserContext(), tenant, email); err != nil {
		return err
	}
	// The account's budget of failed sign-ins (SPEC §9a) holds whatever address asks, and
	// alike for accounts that exist and that do not; a browser where the account signed in
	// before spends its device's budget instead. The attempt is spent before the hash and
	// given back unless the password was wrong.
	account := ratelimit.Account(tenant, email)
	refund, err := h.signins.Spend(c.UserContext(), h.devices.Budget(c, account))
	if err != nil {
		return err
	}
	u, known, err := h.svc.Authenticate(c.UserContext(), tenant, email, password)
	if !errors.Is(err, errInvalidCredentials) {
		refund(c.UserContext())
	}
	if errors.Is(err, errInvalidCredentials) && known {
		// Bounded: the attempt was spent from the account's budget (or its owner's
		// device's) above, so each account records at most its budget of failures;
		// addresses that name no account record nothing (docs/api.md, Audit).
		if rerr := h.signInFailed(c, u, audit.MethodPassword, "invalid_credentials"); rerr != nil {
			return rerr
		}
	}
	if err != nil {
		return err
	}
	if err := h.signedIn(c, audit.ActionSignIn, u, audit.MethodPassword); err != nil {
		return err
	}
	if h.second != nil {
		methods, err := h.second.Methods(c.UserContext(), u.ID)
		if err != nil {
			return err
		}
		if len(methods) > 0 {
			// SPEC §17: the password was right, but no session until a second factor, and
			// no device cookie either (SPEC §9b): the password alone must not buy a budget of
			// its own for guessing codes.
			token, err := h.second.Challenge(c.UserContext(), u.ID, u.TenantID)
			if err != nil {
				return err
			}
			return c.JSON(fiber.Map{"mfaRequired": true, "mfaToken": token, "methods": methods})
		}
	}
	if err := h.devices.Issue(c, account, h.clock.Now()); err != nil {
		return err
	}
	return h.startSession(c, http.StatusOK, u)
}

// verifySecond is the second step of a sign-in (SPEC §17): the mfaToken and one factor. A
// wrong factor spends the budget the password step spends (SPEC §9b): the device's when
// the browser holds a device cookie of the account, else the account's, so whoever fails
// codes from elsewhere cannot lock the owner out of their own browser.
func (h *handler) verifySecond(c *fiber.Ctx) error {
	f := jsonbody.Read(c.Body())
	token := f.RequiredString("mfaToken")
	proof := identity.ReadProof(f)
	if err := f.Err(); err != nil {
		return err
	}
	ctx := c.UserContext()
	userID, tenant, err := h.second.Peek(ctx, token)
	if err != nil {
		return err
	}
	u, err := h.svc.Get(ctx, userID)
	if err != nil {
		return err
	}
	account := ratelimit.Account(tenant, u.Email)
	refund, err := h.signins.Spend(ctx, h.devices.Budget(c, account))
	if err != nil {
		return err
	}
	_, amr, err := h.second.Complete(ctx, token, proof)
	if !errors.Is(err, identity.ErrSecondFactor) {
		refund(ctx)
	}
	if errors.Is(err, identity.ErrSecondFactor) {
		// Bounded as a wrong password is: the account's (or device's) budget was spent.
		if rerr := h.signInFailed(c, u, factorOf(proof), "invalid_second_factor"); rerr != nil {
			return rerr
		}
	}
	if err != nil {
		return err
	}
	if err := h.signedIn(c, audit.ActionSignInSecondFactor, u, factorOf(proof)); err != nil {
		return err
	}
	if err := h.devices.Issue(c, account, h.clock.Now()); err != nil {
		return err
	}
	return h.startSession(c, http.StatusOK, u, amr...)
}

// beginPasskey starts a WebAuthn ceremony: a sign-in by passkey alone (it needs no
// password) or a step-up, or with { mfaToken } a sign-in's second step.
func (h *handler) beginPasskey(c *fiber.Ctx) error {
	body := c.Body()
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}") // { email? }: no body at all is no email
	}
	f := jsonbody.Read(body)
	// email is read for older pages and otherwise ignored: the options never depend on
	// who is named (SPEC §9b).
	if _, st := f.String("email"); st == jsonbody.WrongType {
		f.Fail("email", "must be a string")
	}
	mfaToken, st := f.String("mfaToken")
	if st == jsonbody.WrongType || (st == jsonbody.OK && mfaToken == "") {
		f.Fail("mfaToken", "must be the mfaToken of a sign-in's first step")
	}
	tenant := tenantOf(f)
	if err := f.Err(); err != nil {
		return err
	}
	opts, id, err := h.second.BeginPasskey(c.UserContext(), tenant, mfaToken)
	if err != nil {
		return err
	}
	var answer map[string]any
	if err := json.Unmarshal(opts, &answer); err != nil {
		return err
	}
	answer["challengeId"] = id
	return c.JSON(answer)
}

// finishPasskey ends a sign-in by passkey: { challengeId?, credential } or the credential
// itself. The assertion names its user.
func (h *handler) finishPasskey(c *fiber.Ctx) error {
	obj, ok := jsonbody.Parse(c.Body())
	if !ok {
		return apperr.Validation(apperr.NotAnObject)
	}
	assertion := []byte(c.Body())
	if raw, st := obj.RawObject("credential"); st == jsonbody.OK {
		assertion = raw
	}
	challengeID, _ := obj.String("challengeId")
	userID, amr, err := h.second.FinishPasskey(c.UserContext(), challengeID, assertion)
	if err != nil {
		return err
	}
	u, err := h.svc.Get(c.UserContext(), userID)
	if err != nil {
		return err
	}
	if h.rules != nil {
		if err := h.rules.SignInAllowed(c.UserContext(), u.TenantID, u.Email, identity.Via{Method: "passkey"}); err != nil {
			return err
		}
	}
	// A failed assertion names nobody it proved, so only a sign-in is audited.
	if err := h.signedIn(c, audit.ActionSignIn, u, audit.MethodPasskey); err != nil {
		return err
	}
	// A passkey that verified its user is a completed sign-in: this browser is the owner's.
	if err := h.devices.Issue(c, ratelimit.Account(u.TenantID, u.Email), h.clock.Now()); err != nil {
		return err
	}
	return h.startSession(c, http.StatusOK, u, amr...)
}

func (h *handler) startSession(c *fiber.Ctx, status int, u User, amr ...string) error {
	t, err := h.sessions.Start(httpserver.WithIssuer(c, h.cfg), identity.NewSession{
		UserID: u.ID, TenantID: u.TenantID,
		UserAgent: string(c.Request().Header.UserAgent()),
		IP:        httpserver.ClientIP(c),
		AMR:       amr,
	})
	if err != nil {
		return err
	}
	guard.SetSessionCookies(c, h.cfg, t, h.clock.Now())
	return c.Status(status).JSON(signedIn{User: u, Session: sessionBody{
		SessionHandle: t.SessionHandle, AccessToken: t.AccessToken, RefreshToken: t.RefreshToken,
		AccessTokenExpiresAt: t.AccessTokenExpiresAt.UTC(),
	}})
}

// signedIn audits a factor that proved u, in u's tenant's trail.
func (h *handler) signedIn(c *fiber.Ctx, action string, u User, method string) error {
	id := u.ID
	return h.svc.Recorded(c.UserContext(), audit.Event{ActorID: &id, ProjectID: u.TenantID, Action: action, Origin: httpserver.Origin(c),
		Metadata: map[string]any{"userId": u.ID, "method": method}})
}

// signInFailed audits a wrong factor for u's account. The actor is whoever tried, not u:
// no actor id, type user (a person at a sign-in form).
func (h *handler) signInFailed(c *fiber.Ctx, u User, method, reason string) error {
	return h.svc.Recorded(c.UserContext(), audit.Event{ActorType: audit.ActorUser, ProjectID: u.TenantID, Action: audit.ActionSignInFailed,
		Origin: httpserver.Origin(c), Metadata: map[string]any{"userId": u.ID, "method": method, "reason": reason}})
}

// factorOf names the second factor a proof presents.
func factorOf(p identity.Proof) string {
	switch {
	case p.RecoveryCode != "":
		return audit.MethodRecoveryCode
	case len(p.Assertion) > 0:
		return audit.MethodPasskey
	}
	return audit.MethodTOTP
}

// tenantOf reads the optional tenantId: the dashboard's tenant when absent.
func tenantOf(f *jsonbody.Fields) string {
	s, st := f.String("tenantId")
	switch st {
	case jsonbody.Absent, jsonbody.Null:
		return identity.PublicTenant
	case jsonbody.OK:
		if s = strings.TrimSpace(s); s != "" {
			return s
		}
	}
	f.Fail("tenantId", "must be a non-empty string")
	return ""
}

func parseSignUp(body []byte) (SignUp, error) {
	f := jsonbody.Read(body)
	var in SignUp
	if s, st := f.String("email"); st != jsonbody.OK {
		f.Fail("email", "required string")
	} else if addr, ok := identity.NormalizeEmail(s); !ok {
		f.Fail("email", "not a valid email address")
	} else {
		in.Email = addr
	}
	if s, st := f.String("password"); st != jsonbody.OK {
		f.Fail("password", "required string")
	} else if reason := checkPassword(s); reason != "" {
		f.Fail("password", reason)
	} else {
		in.Password = s
	}
	switch s, st := f.String("name"); st {
	case jsonbody.OK:
		if utf8.RuneCountInString(s) > maxName {
			f.Fail("name", "must be at most 200 characters")
		} else if strings.IndexFunc(s, unicode.IsControl) >= 0 {
			// A name is mailed (SPEC §9a): a line break in it could write lines of its own.
			f.Fail("name", "must not contain control characters")
		} else {
			in.Name = &s
		}
	case jsonbody.WrongType:
		f.Fail("name", "must be a string")
	}
	in.TenantID = tenantOf(f)
	if err := f.Err(); err != nil {
		return SignUp{}, err
	}
	return in, nil
}

func parseSignUpValue(v map[string]any) (SignUp, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return SignUp{}, err
	}
	return parseSignUp(b)
}

func (h *handler) checkTenant(ctx context.Context, tenantID string) error {
	if tenantID == identity.PublicTenant {
		return nil
	}
	if h.tenants != nil {
		ok, err := h.tenants.TenantExists(ctx, tenantID)
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
	}
	return apperr.Validation(apperr.Issue{Field: "tenantId", Reason: "no such tenant"})
}

var accepted = fiber.Map{"ok": true}

// resetRequest answers 202 alike for accounts that exist and that do not (SPEC §14).
func (h *handler) resetRequest(c *fiber.Ctx) error {
	if !h.recovery.Configured() {
		return errMailNotConfigured
	}
	f := jsonbody.Read(c.Body())
	email := f.RequiredString("email")
	tenant := tenantOf(f)
	if err := f.Err(); err != nil {
		return err
	}
	if err := h.recovery.RequestReset(c.UserContext(), tenant, email); err != nil {
		return err
	}
	return c.Status(http.StatusAccepted).JSON(accepted)
}

func (h *handler) reset(c *fiber.Ctx) error {
	f := jsonbody.Read(c.Body())
	token, password := f.RequiredString("token"), f.RequiredString("password")
	if err := f.Err(); err != nil {
		return err
	}
	if err := h.recovery.Reset(c.UserContext(), token, password, httpserver.Origin(c)); err != nil {
		return err
	}
	return c.JSON(accepted)
}

// changePassword: a wrong current password counts toward the account's failed sign-ins.
func (h *handler) changePassword(c *fiber.Ctx) error {
	f := jsonbody.Read(c.Body())
	current, password := f.RequiredString("currentPassword"), f.RequiredString("password")
	if err := f.Err(); err != nil {
		return err
	}
	p, _ := guard.PrincipalOf(c)
	prof, err := h.svc.Profile(c.UserContext(), p.UserID)
	if err != nil {
		return err
	}
	refund, err := h.signins.Spend(c.UserContext(), h.devices.Budget(c, ratelimit.Account(p.TenantID, *prof.Email)))
	if err != nil {
		return err
	}
	err = h.recovery.ChangePassword(c.UserContext(), p.UserID, p.SessionHandle, current, password, httpserver.Origin(c))
	if !errors.Is(err, errInvalidCredentials) {
		refund(c.UserContext())
	}
	if err != nil {
		return err
	}
	return c.JSON(accepted)
}

func (h *handler) verifyRequest(c *fiber.Ctx) error {
	p, _ := guard.PrincipalOf(c)
	if err := h.recovery.RequestVerification(c.UserContext(), p.UserID); err != nil {
		return err
	}
	return c.Status(http.StatusAccepted).JSON(accepted)
}

func (h *handler) verify(c *fiber.Ctx) error {
	f := jsonbody.Read(c.Body())
	token := f.RequiredString("token")
	if err := f.Err(); err != nil {
		return err
	}
	// Proof with the account's own session keeps its password; without, the mailbox's
	// holder becomes the only owner (docs/security.md, pre-account takeover).
	sessionOf := ""
	if p, ok, err := h.guard.OptionalSession(c); err != nil {
		return err
	} else if ok {
		sessionOf = p.UserID
	}
	dropped, err := h.recovery.Verify(c.UserContext(), token, sessionOf, httpserver.Origin(c))
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"ok": true, "emailVerified": true, "credentialsRemoved": dropped})
}
