package session

import (
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/jsonbody"
	"github.com/authcore/authcore/platform/ratelimit"
)

type handler struct {
	engine *Engine
	admin  admin
	guard  *guard.Guard
	cfg    config.Config
	limits *ratelimit.Limiters
}

func (h *handler) routes() []httpserver.Route {
	one := func(f ...fiber.Handler) []fiber.Handler { return f }
	routes := []httpserver.Route{
		{Method: http.MethodGet, Path: "/v1/auth-core/session/me", Handlers: one(h.requireReady, h.underBudget, h.me)},
		{Method: http.MethodPost, Path: "/v1/auth-core/session/refresh", Handlers: one(h.requireReady, h.underBudget, h.refresh)},
		{Method: http.MethodPost, Path: "/v1/auth-core/signout", Handlers: one(h.requireReady, h.guard.Session(), h.signOut)},
	}
	routes = append(routes, h.orgRoutes()...)
	return append(routes, h.adminRoutes()...)
}

func (h *handler) requireReady(c *fiber.Ctx) error {
	if !h.engine.Ready() {
		return errNotReady
	}
	return c.Next()
}

// underBudget refuses a client that spent its budget of failed verifications; the
// handlers after it spend one unit per failure.
func (h *handler) underBudget(c *fiber.Ctx) error {
	if err := h.limits.Failures.Check(httpserver.ClientIP(c)); err != nil {
		return err
	}
	return c.Next()
}

// me is seed 4.3 session/me: 200 with the session and its user, or the verification's
// status (401) with {authenticated:false, reason}.
func (h *handler) me(c *fiber.Ctx) error {
	ip := httpserver.ClientIP(c)
	cred, ok := guard.CredentialOf(c)
	if !ok {
		h.limits.Failures.Fail(ip)
		return notAuthenticated(identity.ReasonNoSession)
	}
	p, err := h.engine.Authenticate(c.UserContext(), cred.Token)
	if err != nil {
		var ve *identity.VerifyError
		if errors.As(err, &ve) {
			h.limits.Failures.Fail(ip)
			return notAuthenticated(ve.Reason)
		}
		return err
	}
	prof := h.engine.Profile(c.UserContext(), p.UserID)
	return c.JSON(meBody{
		Authenticated: true, UserID: p.UserID, SessionHandle: p.SessionHandle,
		AccessTokenPayload: p.ClaimsJSON,
		User:               meUser{ID: p.UserID, Email: prof.Email, Name: prof.Name, EmailVerified: prof.EmailVerified},
	})
}

// meBody is the seed 4.3 session/me answer. A struct with the claims pre-encoded is about
// three times cheaper to encode than the equivalent nested maps.
type meBody struct {
	Authenticated      bool            `json:"authenticated"`
	UserID             string          `json:"userId"`
	SessionHandle      string          `json:"sessionHandle"`
	AccessTokenPayload json.RawMessage `json:"accessTokenPayload"`
	User               meUser          `json:"user"`
}

type meUser struct {
	ID            string  `json:"id"`
	Email         *string `json:"email"`
	Name          *string `json:"name"`
	EmailVerified bool    `json:"emailVerified"`
}

func notAuthenticated(reason string) error {
	return &apperr.Error{Kind: apperr.KindUnauthenticated, Fields: map[string]any{"authenticated": false, "reason": reason}}
}

// refresh rotates the refresh token from the body, else from the sRefreshToken cookie.
func (h *handler) refresh(c *fiber.Ctx) error {
	ip := httpserver.ClientIP(c)
	token, st := jsonbody.ParseOrEmpty(c.Body()).String("refreshToken")
	if st != jsonbody.OK || token == "" {
		token = c.Cookies(guard.RefreshCookie)
		if token != "" && !h.guard.OriginAllowed(c) {
			return apperr.CSRFRejected
		}
	}
	r, err := h.engine.Refresh(httpserver.WithIssuer(c, h.cfg), string([]byte(token)))
	if err != nil {
		if apperr.IsKind(err, apperr.KindUnauthenticated) {
			h.limits.Failures.Fail(ip)
		}
		return err
	}
	now := h.engine.clock.Now()
	guard.SetSessionCookies(c, h.cfg, r.Tokens, now)
	prof := h.engine.Profile(c.UserContext(), r.UserID)
	return c.JSON(fiber.Map{
		"user": fiber.Map{"id": r.UserID, "tenantId": r.TenantID, "email": prof.Email, "name": prof.Name, "emailVerified": prof.EmailVerified},
		"session": fiber.Map{
			"sessionHandle": r.Tokens.SessionHandle, "accessToken": r.Tokens.AccessToken,
			"refreshToken": r.Tokens.RefreshToken, "accessTokenExpiresAt": r.Tokens.AccessTokenExpiresAt.UTC().Format(time.RFC3339),
		},
	})
}

func (h *handler) signOut(c *fiber.Ctx) error {
	p, _ := guard.PrincipalOf(c)
	if _, err := h.engine.Revoke(c.UserContext(), p.SessionHandle); err != nil {
		return err
	}
	guard.ClearSessionCookies(c, h.cfg)
	return c.JSON(fiber.Map{"ok": true})
}
