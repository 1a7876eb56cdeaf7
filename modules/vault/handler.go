package vault

import (
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
)

type handler struct {
	svc   *service
	guard *guard.Guard
}

// routes are the person's: connect (step-up: it hands agents an account), list, revoke,
// and the agents they may choose.
func (h *handler) routes() []httpserver.Route {
	g := h.guard
	return []httpserver.Route{
		{Method: http.MethodGet, Path: "/v1/auth-core/connections", Handlers: []fiber.Handler{g.Session(), h.list}},
		{Method: http.MethodGet, Path: "/v1/auth-core/connections/agents", Handlers: []fiber.Handler{g.Session(), h.agents}},
		{Method: http.MethodPost, Path: "/v1/auth-core/connections/:id", Handlers: []fiber.Handler{g.Session(), g.Recently(h.connect)}},
		{Method: http.MethodDelete, Path: "/v1/auth-core/connections/:id", Handlers: []fiber.Handler{g.Session(), h.revoke}},
	}
}

func (h *handler) list(c *fiber.Ctx) error {
	p, _ := guard.PrincipalOf(c)
	out, err := h.svc.Connections(c.UserContext(), p.UserID)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"connections": out})
}

func (h *handler) agents(c *fiber.Ctx) error {
	p, _ := guard.PrincipalOf(c)
	out, err := h.svc.Agents(c.UserContext(), p)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"agents": out})
}

func (h *handler) connect(c *fiber.Ctx) error {
	p, _ := guard.PrincipalOf(c)
	out, created, err := h.svc.Connect(c.UserContext(), p, strings.Clone(c.Params("id")), c.Body(), httpserver.Origin(c))
	if err != nil {
		return err
	}
	if created {
		c.Status(http.StatusCreated)
	}
	return c.JSON(out)
}

func (h *handler) revoke(c *fiber.Ctx) error {
	p, _ := guard.PrincipalOf(c)
	id := strings.Clone(c.Params("id"))
	upstream, err := h.svc.Revoke(c.UserContext(), p.UserID, id, httpserver.Origin(c))
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"ok": true, "id": id, "upstreamRevoked": upstream})
}
