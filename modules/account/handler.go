package account

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

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
	tenants  identity.Tenants // nil when no module supplies tenants other than "public"
	sessions identity.Sessions
	cfg      config.Config
	clock    clock.Clock
	limits   *ratelimit.Limiters
}

func (h *handler) routes() []httpserver.Route {
	attempts := h.limits.Attempts.Middleware()
	return []httpserver.Route{
		{Method: http.MethodPost, Path: "/v1/auth-core/signup", Handlers: []fiber.Handler{attempts, h.signUp}},
		{Method: http.MethodPost, Path: "/v1/auth-core/signin", Handlers: []fiber.Handler{attempts, h.signIn}},
	}
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
	u, err := h.svc.Create(c.UserContext(), in)
	if err != nil {
		return err
	}
	return h.startSession(c, http.StatusCreated, u)
}

func (h *handler) signIn(c *fiber.Ctx) error {
	o, ok := jsonbody.Parse(c.Body())
	if !ok {
		return apperr.Validation(apperr.NotAnObject)
	}
	var issues []Issue
	email, st := o.String("email")
	if st != jsonbody.OK {
		issues = append(issues, Issue{Field: "email", Reason: "required string"})
	}
	password, st := o.String("password")
	if st != jsonbody.OK {
		issues = append(issues, Issue{Field: "password", Reason: "required string"})
	}
	tenant, terr := tenantOf(o)
	if terr != nil {
		issues = append(issues, *terr)
	}
	if len(issues) > 0 {
		return apperr.Validation(issues...)
	}
	u, err := h.svc.Authenticate(c.UserContext(), tenant, email, password)
	if err != nil {
		return err
	}
	return h.startSession(c, http.StatusOK, u)
}

func (h *handler) startSession(c *fiber.Ctx, status int, u User) error {
	t, err := h.sessions.Start(c.UserContext(), identity.NewSession{
		UserID: u.ID, TenantID: u.TenantID,
		UserAgent: string(c.Request().Header.UserAgent()),
		IP:        httpserver.ClientIP(c),
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

func tenantOf(o jsonbody.Object) (string, *Issue) {
	s, st := o.String("tenantId")
	switch st {
	case jsonbody.Absent, jsonbody.Null:
		return identity.PublicTenant, nil
	case jsonbody.OK:
		if s = strings.TrimSpace(s); s != "" {
			return s, nil
		}
	}
	return "", &Issue{Field: "tenantId", Reason: "must be a non-empty string"}
}

func parseSignUp(body []byte) (SignUp, error) {
	o, ok := jsonbody.Parse(body)
	if !ok {
		return SignUp{}, apperr.Validation(apperr.NotAnObject)
	}
	var in SignUp
	var issues []Issue
	if s, st := o.String("email"); st != jsonbody.OK {
		issues = append(issues, Issue{Field: "email", Reason: "required string"})
	} else if addr, ok := normalizeEmail(s); !ok {
		issues = append(issues, Issue{Field: "email", Reason: "not a valid email address"})
	} else {
		in.Email = addr
	}
	if s, st := o.String("password"); st != jsonbody.OK {
		issues = append(issues, Issue{Field: "password", Reason: "required string"})
	} else if reason := checkPassword(s); reason != "" {
		issues = append(issues, Issue{Field: "password", Reason: reason})
	} else {
		in.Password = s
	}
	switch s, st := o.String("name"); st {
	case jsonbody.OK:
		if utf8.RuneCountInString(s) > maxName {
			issues = append(issues, Issue{Field: "name", Reason: "must be at most 200 characters"})
		} else {
			in.Name = &s
		}
	case jsonbody.WrongType:
		issues = append(issues, Issue{Field: "name", Reason: "must be a string"})
	}
	tenant, terr := tenantOf(o)
	if terr != nil {
		issues = append(issues, *terr)
	}
	in.TenantID = tenant
	if len(issues) > 0 {
		return SignUp{}, apperr.Validation(issues...)
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
	return apperr.Validation(Issue{Field: "tenantId", Reason: "no such tenant"})
}
