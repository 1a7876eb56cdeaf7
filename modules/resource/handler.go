package resource

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

// routes: admins register and remove resources; every member may list them (SPEC §11).
func (h *handler) routes() []httpserver.Route {
	const base = "/v1/projects/:id/oauth/resources"
	member := []fiber.Handler{h.guard.Dashboard(), h.guard.ProjectRole(identity.RoleViewer, guard.FromPath, nil)}
	admin := []fiber.Handler{h.guard.Dashboard(), h.guard.ProjectRole(identity.RoleAdmin, guard.FromPath, nil)}
	return []httpserver.Route{
		{Method: http.MethodGet, Path: base, Handlers: append(member, h.list)},
		{Method: http.MethodPost, Path: base, Handlers: append(admin, h.guard.Recently(h.create))},
		{Method: http.MethodDelete, Path: base + "/:resourceId", Handlers: append(admin, h.delete)},
	}
}

func (h *handler) create(c *fiber.Ctx) error {
	r, err := h.svc.Create(c.UserContext(), guard.ProjectOf(c), guard.ActorOf(c), c.Body(), httpserver.Origin(c))
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(r)
}

func (h *handler) list(c *fiber.Ctx) error {
	rs, err := h.svc.List(c.UserContext(), guard.ProjectOf(c))
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"resources": rs})
}

func (h *handler) delete(c *fiber.Ctx) error {
	id := strings.Clone(c.Params("resourceId"))
	if err := h.svc.Delete(c.UserContext(), guard.ProjectOf(c), id, guard.ActorOf(c), httpserver.Origin(c)); err != nil {
		return err
	}
	return c.JSON(fiber.Map{"ok": true, "resourceId": id})
}
