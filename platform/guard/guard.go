// Package guard holds the access guards every module attaches to its routes: the
// dashboard guard (a verified session of tenant "public") and the session guard (any
// tenant). It declares the interface it needs to verify a session; the session module
// supplies it. It must not know how sessions are stored.
package guard

import (
	"context"
	"errors"
	"strings"

	"github.com/gofiber/fiber/v2"
	"go.uber.org/fx"

	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/policy"
)

// AccessCookie carries the access token when no Authorization header does (SPEC §3).
const AccessCookie = "sAccessToken"

// SessionVerifier checks an access token: signature, expiry and revocation.
type SessionVerifier interface {
	Authenticate(ctx context.Context, accessToken string) (identity.Principal, error)
}

// Module provides the guard.
var Module = fx.Module("guard", fx.Provide(New))

// Guard builds the guard handlers.
type Guard struct {
	verifier SessionVerifier
	members  identity.Memberships
	// verified, when set (AUTHCORE_REQUIRE_VERIFIED_EMAIL), refuses unverified dashboard users.
	verified identity.EmailVerification
	// origins are the server's own (config.OwnOrigins) and AUTHCORE_ALLOWED_ORIGINS.
	origins map[string]struct{}
	// factors and policies, when supplied, ask users with a second factor for a recent
	// authentication and refuse projects that require one to members without (SPEC §17).
	factors  identity.Factors
	policies policy.Source
	clock    clock.Clock
	// orgs and setups admit org admins and setup sessions (SPEC §26, OrgAdmin).
	orgs   identity.OrgMemberships
	setups identity.OrgSetup
}

// Params are the guard's dependencies; memberships come from the project module.
type Params struct {
	fx.In
	Verifier SessionVerifier
	Members  identity.Memberships       `optional:"true"`
	Verified identity.EmailVerification `optional:"true"`
	Factors  identity.Factors           `optional:"true"`
	Policies policy.Source              `optional:"true"`
	Clock    clock.Clock
	Config   config.Config
	Orgs     identity.OrgMemberships `optional:"true"`
	Setups   identity.OrgSetup       `optional:"true"`
}

// New returns the guard.
func New(p Params) *Guard {
	v, cfg := p.Verifier, p.Config
	g := &Guard{verifier: v, members: p.Members, origins: map[string]struct{}{}, factors: p.Factors, policies: p.Policies, clock: p.Clock,
		orgs: p.Orgs, setups: p.Setups}
	if cfg.RequireVerifiedEmail {
		g.verified = p.Verified
	}
	for _, o := range append(cfg.OwnOrigins(), cfg.AllowedOrigins...) {
		g.origins[strings.TrimRight(o, "/")] = struct{}{}
	}
	return g
}

// Credential is where a request's access token came from.
type Credential struct {
	Token      string
	FromCookie bool
}

// CredentialOf reads the access token: an `Authorization: Bearer` header wins over the
// sAccessToken cookie. The token is copied out of Fiber's buffers.
func CredentialOf(c *fiber.Ctx) (Credential, bool) {
	if h := c.Get(fiber.HeaderAuthorization); h != "" {
		tok := httpserver.BearerToken(h)
		if tok == "" {
			return Credential{}, false
		}
		return Credential{Token: strings.Clone(tok)}, true
	}
	if v := c.Cookies(AccessCookie); v != "" {
		return Credential{Token: strings.Clone(v), FromCookie: true}, true
	}
	return Credential{}, false
}

type principalKey struct{}

// PrincipalOf returns the session a guard verified for this request.
func PrincipalOf(c *fiber.Ctx) (identity.Principal, bool) {
	p, ok := c.Locals(principalKey{}).(identity.Principal)
	return p, ok
}

// ActorOf is the acting user's id, for the records a change leaves (createdBy, the audit
// actor), or nil when the request has no principal.
func ActorOf(c *fiber.Ctx) *string {
	if s, ok := SetupOf(c); ok {
		id := "setup_link:" + s.LinkID
		return &id
	}
	p, _ := PrincipalOf(c)
	if p.UserID == "" {
		return nil
	}
	id := p.UserID
	return &id
}

// Dashboard admits a verified session of a dashboard user (tenant "public").
func (g *Guard) Dashboard() fiber.Handler { return g.handler(true, nil) }

// Session admits a verified session of any tenant.
func (g *Guard) Session() fiber.Handler { return g.handler(false, nil) }

// DashboardWith is Dashboard with extra body fields on its rejections (AI-token routes add
// "engine", SPEC §4).
func (g *Guard) DashboardWith(fields map[string]any) fiber.Handler { return g.handler(true, fields) }

func (g *Guard) handler(dashboardOnly bool, fields map[string]any) fiber.Handler {
	reject := func(e *apperr.Error) error {
		for k, v := range fields {
			e = e.With(k, v)
		}
		return e
	}
	return func(c *fiber.Ctx) error {
		p, err := g.principal(c)
		var ae *apperr.Error
		if errors.As(err, &ae) {
			return reject(ae)
		} else if err != nil {
			return err
		}
		if dashboardOnly && p.TenantID != identity.PublicTenant {
			return reject(apperr.Unauthorized("a dashboard session is required"))
		}
		if dashboardOnly && g.verified != nil {
			ok, err := g.verified.EmailVerified(c.UserContext(), p.UserID)
			if err != nil {
				return err
			}
			if !ok {
				return reject(errEmailNotVerified)
			}
		}
		c.Locals(principalKey{}, p)
		return c.Next()
	}
}

// principal verifies the request's session: its access token from the Authorization
// header or the cookie (a cookie only with an allowed Origin on a change).
func (g *Guard) principal(c *fiber.Ctx) (identity.Principal, error) {
	cred, ok := CredentialOf(c)
	if !ok {
		return identity.Principal{}, apperr.Unauthorized("sign in first")
	}
	if cred.FromCookie && !safeMethod(c.Method()) && !g.OriginAllowed(c) {
		return identity.Principal{}, apperr.CSRFRejected
	}
	p, err := g.verifier.Authenticate(c.UserContext(), cred.Token)
	if err != nil {
		var ve *identity.VerifyError
		switch {
		case errors.As(err, &ve):
			return identity.Principal{}, apperr.Unauthorized("session not valid: " + ve.Reason)
		case errors.Is(err, identity.ErrEngineNotReady):
			return identity.Principal{}, apperr.New(apperr.KindUnavailable, "auth_core_sdk_not_ready", "the auth engine is starting")
		}
	}
	return p, err
}

// OptionalSession is the request's session when it carries one that verifies (a cookie
// only with an allowed Origin on a change, as Session requires), for routes open to
// anyone that answer a signed-in caller differently. ok is false when there is none.
func (g *Guard) OptionalSession(c *fiber.Ctx) (p identity.Principal, ok bool, err error) {
	cred, found := CredentialOf(c)
	if !found || (cred.FromCookie && !safeMethod(c.Method()) && !g.OriginAllowed(c)) {
		return identity.Principal{}, false, nil
	}
	return g.authenticateIfValid(c, cred.Token)
}

// authenticateIfValid verifies tok; a token that does not verify is no session (ok
// false), not an error, for the routes that answer an anonymous caller too.
func (g *Guard) authenticateIfValid(c *fiber.Ctx, tok string) (identity.Principal, bool, error) {
	p, err := g.verifier.Authenticate(c.UserContext(), tok)
	var ve *identity.VerifyError
	switch {
	case errors.As(err, &ve):
		return identity.Principal{}, false, nil
	case err != nil:
		return identity.Principal{}, false, err
	}
	return p, true, nil
}

// BrowserSession is the dashboard session the browser's cookie carries, verified: for the
// browser-facing OAuth endpoints (SPEC §21: prompt=none, RP-initiated logout) that answer
// by redirect rather than by a 401. ok is false when there is none or it does not verify.
func (g *Guard) BrowserSession(c *fiber.Ctx) (p identity.Principal, ok bool, err error) {
	tok := c.Cookies(AccessCookie)
	if tok == "" {
		return identity.Principal{}, false, nil
	}
	if p, ok, err = g.authenticateIfValid(c, strings.Clone(tok)); !ok || err != nil || p.TenantID != identity.PublicTenant {
		return identity.Principal{}, false, err
	}
	if g.verified != nil {
		if ok, err := g.verified.EmailVerified(c.UserContext(), p.UserID); err != nil || !ok {
			return identity.Principal{}, false, err
		}
	}
	return p, true, nil
}

// OriginAllowed reports whether the request's Origin may make cookie-authenticated changes:
// it must be present, and the server's own origin or one of AUTHCORE_ALLOWED_ORIGINS.
func (g *Guard) OriginAllowed(c *fiber.Ctx) bool {
	origin := c.Get(fiber.HeaderOrigin)
	return origin != "" && g.trusted(origin)
}

func (g *Guard) trusted(origin string) bool {
	origin = strings.TrimRight(origin, "/")
	_, ok := g.origins[origin]
	return ok
}

// LoginCSRF guards the routes that set session cookies without one (sign-up, sign-in)
// against login CSRF (SPEC §9): a request whose Origin is present and neither the
// server's own nor allowed is refused before anything happens, so no cookie is set. A
// request without Origin (curl, SDKs, servers) passes: browsers always send one on a
// cross-origin POST.
func (g *Guard) LoginCSRF() fiber.Handler {
	return func(c *fiber.Ctx) error {
		if origin := c.Get(fiber.HeaderOrigin); origin != "" && !g.trusted(origin) {
			return apperr.CSRFRejected
		}
		return c.Next()
	}
}

func safeMethod(m string) bool {
	return m == fiber.MethodGet || m == fiber.MethodHead || m == fiber.MethodOptions
}

var errEmailNotVerified = apperr.New(apperr.KindForbidden, "email_not_verified", "verify your email address first")
