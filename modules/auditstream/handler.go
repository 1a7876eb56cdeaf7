package auditstream

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

const base = "/v1/projects/:id/audit-streams"

func (h *handler) routes() []httpserver.Route {
	admin := []fiber.Handler{h.guard.Dashboard(), h.guard.ProjectRole(identity.RoleAdmin, guard.FromPath, nil)}
	behind := func(f fiber.Handler) []fiber.Handler { return append(append([]fiber.Handler(nil), admin...), f) }
	// Creating a stream sends the whole trail elsewhere from then on: a recent sign-in.
	routes := httpserver.Collection(base, "streamId", admin, h.list, h.guard.Recently(h.create), h.delete)
	return append(routes,
		httpserver.Route{Method: http.MethodGet, Path: base + "/:streamId", Handlers: behind(h.get)},
		httpserver.Route{Method: http.MethodPost, Path: base + "/:streamId/replay", Handlers: behind(h.replay)},
		httpserver.Route{Method: http.MethodPost, Path: base + "/:streamId/test", Handlers: behind(h.test)},
		httpserver.Route{Method: http.MethodPost, Path: base + "/:streamId/resume", Handlers: behind(h.resume)},
	)
}

func streamID(c *fiber.Ctx) string { return strings.Clone(c.Params("streamId")) }

func (h *handler) create(c *fiber.Ctx) error {
	created, err := h.svc.Create(c.UserContext(), guard.ProjectOf(c), guard.ActorOf(c), c.Body())
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(created)
}

func (h *handler) list(c *fiber.Ctx) error {
	sts, err := h.svc.List(c.UserContext(), guard.ProjectOf(c))
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"streams": sts})
}

func (h *handler) get(c *fiber.Ctx) error {
	st, err := h.svc.Get(c.UserContext(), guard.ProjectOf(c), streamID(c))
	if err != nil {
		return err
	}
	return c.JSON(st)
}

func (h *handler) delete(c *fiber.Ctx) error {
	id := streamID(c)
	if err := h.svc.Delete(c.UserContext(), guard.ProjectOf(c), id); err != nil {
		return err
	}
	return c.JSON(fiber.Map{"ok": true, "streamId": id})
}

func (h *handler) replay(c *fiber.Ctx) error {
	st, err := h.svc.Replay(c.UserContext(), guard.ProjectOf(c), streamID(c), c.Body())
	if err != nil {
		return err
	}
	return c.JSON(st)
}

func (h *handler) test(c *fiber.Ctx) error {
	res, err := h.svc.Test(c.UserContext(), guard.ProjectOf(c), streamID(c))
	if err != nil {
		return err
	}
	return c.JSON(res)
}

func (h *handler) resume(c *fiber.Ctx) error {
	st, err := h.svc.Resume(c.UserContext(), guard.ProjectOf(c), streamID(c))
	if err != nil {
		return err
	}
	return c.JSON(st)
}
