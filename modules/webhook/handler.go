package webhook

import (
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/identity"
)

type handler struct {
	svc   *Service
	guard *guard.Guard
}

func (h *handler) routes() []httpserver.Route {
	admin := []fiber.Handler{h.guard.Dashboard(), h.guard.ProjectRole(identity.RoleAdmin, guard.FromPath, nil)}
	routes := httpserver.Collection("/v1/projects/:id/webhooks", "webhookId", admin, h.list, h.guard.Recently(h.create), h.delete)
	return append(routes, httpserver.Route{Method: http.MethodGet, Path: "/v1/projects/:id/webhooks/:webhookId/deliveries",
		Handlers: append(admin, h.deliveries)})
}

func (h *handler) create(c *fiber.Ctx) error {
	created, err := h.svc.Create(c.UserContext(), guard.ProjectOf(c), guard.ActorOf(c), c.Body())
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(created)
}

func (h *handler) list(c *fiber.Ctx) error {
	hooks, err := h.svc.List(c.UserContext(), guard.ProjectOf(c))
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"webhooks": hooks})
}

func (h *handler) delete(c *fiber.Ctx) error {
	id := strings.Clone(c.Params("webhookId"))
	if err := h.svc.Delete(c.UserContext(), guard.ProjectOf(c), id); err != nil {
		return err
	}
	return c.JSON(fiber.Map{"ok": true, "webhookId": id})
}

func (h *handler) deliveries(c *fiber.Ctx) error {
	limit := httpserver.QueryLimit(c.Query("limit"), 50, 200)
	page, err := h.svc.Deliveries(c.UserContext(), guard.ProjectOf(c), strings.Clone(c.Params("webhookId")), limit, strings.Clone(c.Query("before")))
	if err != nil {
		return err
	}
	return c.JSON(page)
}
