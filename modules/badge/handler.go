package badge

import (
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/product"
	"github.com/authcore/authcore/platform/ratelimit"
)

type handler struct {
	svc      *Service
	guard    *guard.Guard
	products *product.Registry
	limits   *ratelimit.Limiters

	okCount, invalidCount, unauthorizedCount prometheus.Counter
}

func (h *handler) routes() []httpserver.Route {
	// The sign-in guard, then role admin on the project, on the badges path and beneath
	// it (seed 4.4) — attached per route, never by prefix.
	dash := h.guard.Dashboard()
	admin := h.guard.ProjectRole(identity.RoleAdmin, guard.FromPath, nil)
	const base = "/v1/projects/:id/service-badges"
	return []httpserver.Route{
		{Method: http.MethodGet, Path: base, Handlers: []fiber.Handler{dash, admin, h.list}},
		{Method: http.MethodPost, Path: base, Handlers: []fiber.Handler{dash, admin, h.create}},
		{Method: http.MethodDelete, Path: base + "/:badgeId", Handlers: []fiber.Handler{dash, admin, h.revoke}},
		{Method: http.MethodGet, Path: "/v1/service-badges/me", Handlers: []fiber.Handler{h.me}},
	}
}

func (h *handler) list(c *fiber.Ctx) error {
	badges, err := h.svc.List(c.UserContext(), guard.ProjectOf(c), c.Query("product"))
	if err != nil {
		return err
	}
	descriptions := make(map[string]string, len(h.products.All()))
	for _, p := range h.products.All() {
		descriptions[p.Key()] = p.Description()
	}
	return c.JSON(fiber.Map{"badges": badges, "products": descriptions})
}

func (h *handler) create(c *fiber.Ctx) error {
	req, err := parseCreate(c.Body(), h.products)
	if err != nil {
		return err
	}
	p, _ := guard.PrincipalOf(c)
	creator := p.UserID
	created, err := h.svc.Create(c.UserContext(), guard.ProjectOf(c), &creator, req, httpserver.Origin(c), c.BaseURL())
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(fiber.Map{
		"badge": created.Badge, "plaintext": created.Plaintext,
		"s3": created.Credentials.S3, "auth": created.Credentials.Auth,
	})
}

func (h *handler) revoke(c *fiber.Ctx) error {
	badgeID := strings.Clone(c.Params("badgeId"))
	p, _ := guard.PrincipalOf(c)
	actor := p.UserID
	if err := h.svc.Revoke(c.UserContext(), guard.ProjectOf(c), badgeID, &actor, httpserver.Origin(c)); err != nil {
		return err
	}
	return c.JSON(fiber.Map{"ok": true, "badgeId": badgeID})
}

// me answers who a badge secret is, with the header rules of ai/me.
func (h *handler) me(c *fiber.Ctx) error {
	ip := c.IP()
	if err := h.limits.Failures.Check(ip); err != nil {
		return err
	}
	header := c.Get(fiber.HeaderAuthorization)
	token := ""
	if strings.HasPrefix(header, "Bearer ") {
		token = strings.TrimSpace(header[len("Bearer "):])
	}
	if token == "" {
		h.unauthorizedCount.Inc()
		h.limits.Failures.Fail(ip)
		return notAuthenticated("unauthorized")
	}
	ans, ok, err := h.svc.Verify(c.UserContext(), token)
	if err != nil {
		return err
	}
	if !ok {
		h.invalidCount.Inc()
		h.limits.Failures.Fail(ip)
		return notAuthenticated("invalid_token")
	}
	h.okCount.Inc()
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Send(ans.response)
}

func notAuthenticated(code string) error {
	return &apperr.Error{Status: http.StatusUnauthorized, Code: code, Fields: map[string]any{"engine": "authcore", "authenticated": false}}
}
