package badge

import (
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/bearer"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/product"
	"github.com/authcore/authcore/platform/rollover"
)

type handler struct {
	svc      *Service
	guard    *guard.Guard
	products *product.Registry
	me       *bearer.Endpoint
}

func (h *handler) routes() []httpserver.Route {
	// The sign-in guard, then role admin on the project, on the badges path and beneath
	// it (seed 4.4) — attached per route, never by prefix.
	admin := []fiber.Handler{h.guard.Dashboard(), h.guard.ProjectRole(identity.RoleAdmin, guard.FromPath, nil)}
	routes := httpserver.Collection("/v1/projects/:id/service-badges", "badgeId", admin, h.list, h.guard.Recently(h.create), h.revoke)
	return append(routes,
		httpserver.Route{Method: http.MethodPost, Path: "/v1/projects/:id/service-badges/:badgeId/roll", Handlers: append(admin, h.guard.Recently(h.roll))},
		httpserver.Route{Method: http.MethodGet, Path: "/v1/service-badges/products", Handlers: []fiber.Handler{h.guard.Dashboard(), h.catalogue}},
		httpserver.Route{Method: http.MethodGet, Path: "/v1/service-badges/me", Handlers: []fiber.Handler{h.whoAmI}})
}

func (h *handler) whoAmI(c *fiber.Ctx) error { return h.me.Serve(c, h.svc.Me) }

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

// catalogue lists every product with whether it can be minted now and, if not, why: what
// a console needs to offer the mintable ones and explain the rest.
func (h *handler) catalogue(c *fiber.Ctx) error {
	type entry struct {
		Key         string  `json:"key"`
		Description string  `json:"description"`
		Mintable    bool    `json:"mintable"`
		Reason      *string `json:"reason"`
	}
	out := make([]entry, 0, len(h.products.All()))
	for _, p := range h.products.All() {
		ok, reason := p.Mintable()
		e := entry{Key: p.Key(), Description: p.Description(), Mintable: ok}
		if !ok {
			e.Reason = &reason
		}
		out = append(out, e)
	}
	return c.JSON(fiber.Map{"products": out})
}

// create answers the badge, its secret, and under each registered product's key that
// product's credentials: the minted product's own value, null for every other (so the
// seed's `s3` and `auth` are always there).
func (h *handler) create(c *fiber.Ctx) error {
	req, err := parseCreate(c.Body(), h.products)
	if err != nil {
		return err
	}
	p, _ := guard.PrincipalOf(c)
	creator := p.UserID
	created, err := h.svc.Create(c.UserContext(), guard.ProjectOf(c), &creator, req, httpserver.Origin(c))
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(h.answer(created))
}

// answer is the create answer: the badge, its secret, and under each registered product's
// key that product's credentials (the badge's own, null for every other).
func (h *handler) answer(created Created) fiber.Map {
	body := make(fiber.Map, len(h.products.All())+3)
	for _, k := range h.products.Keys() {
		body[k] = nil
	}
	body[created.Badge.Product] = created.Credentials
	body["badge"], body["plaintext"] = created.Badge, created.Plaintext
	return body
}

// roll answers the create answer plus previousSecretExpiresAt (SPEC §12). The body is
// optional; when there is one it must be a JSON object.
func (h *handler) roll(c *fiber.Ctx) error {
	grace, notObject, err := rollover.Grace(c.Body())
	switch {
	case notObject:
		return apperr.Validation(apperr.NotAnObject)
	case err != nil:
		return apperr.Validation(apperr.Issue{Field: "graceHours", Reason: "must be a number from 0 to 168"})
	}
	p, _ := guard.PrincipalOf(c)
	actor := p.UserID
	rolled, err := h.svc.Roll(c.UserContext(), guard.ProjectOf(c), strings.Clone(c.Params("badgeId")), grace, &actor, httpserver.Origin(c))
	if err != nil {
		return err
	}
	body := h.answer(rolled.Created)
	body["previousSecretExpiresAt"] = rolled.PreviousSecretExpiresAt
	return c.JSON(body)
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
