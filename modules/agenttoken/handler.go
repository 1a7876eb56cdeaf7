package agenttoken

import (
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/platform/bearer"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/rollover"
)

// note tells the caller what to do with the one-time secret (seed 4.1).
const note = "Copy this token now: it is shown only once and cannot be recovered. Send it as `Authorization: Bearer <token>`."

type handler struct {
	svc   *Service
	guard *guard.Guard
	me    *bearer.Endpoint
}

var engineField = map[string]any{"engine": engineName}

func (h *handler) routes() []httpserver.Route {
	// The project-admin guard on the agents path and everything beneath it (seed 4.1);
	// its rejections carry engine (SPEC §4).
	admin := []fiber.Handler{h.guard.DashboardWith(engineField), h.guard.ProjectRole(identity.RoleAdmin, guard.FromPath, engineField)}
	routes := httpserver.Collection("/v1/auth-core/projects/:projectId/ai/agents", "tokenId", admin, h.list, h.guard.Recently(h.create), h.revoke)
	return append(routes,
		httpserver.Route{Method: http.MethodPost, Path: "/v1/auth-core/projects/:projectId/ai/agents/:tokenId/roll", Handlers: append(admin, h.guard.Recently(h.roll))},
		httpserver.Route{Method: http.MethodGet, Path: "/v1/auth-core/ai/me", Handlers: []fiber.Handler{h.whoAmI}})
}

func (h *handler) whoAmI(c *fiber.Ctx) error { return h.me.Serve(c, h.svc.Me) }

func (h *handler) list(c *fiber.Ctx) error {
	projectID := guard.ProjectOf(c)
	agents, err := h.svc.List(c.UserContext(), projectID)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"engine": engineName, "projectId": projectID, "agents": agents})
}

func (h *handler) create(c *fiber.Ctx) error {
	req, err := ParseCreate(c.Body())
	if err != nil {
		return err
	}
	projectID := guard.ProjectOf(c)
	created, err := h.svc.Create(c.UserContext(), projectID, guard.ActorOf(c), req, httpserver.Origin(c))
	if err != nil {
		return err
	}
	return c.Status(http.StatusOK).JSON(fiber.Map{
		"engine": engineName, "projectId": projectID, "agent": created.Agent, "plaintext": created.Plaintext, "note": note,
	})
}

func (h *handler) revoke(c *fiber.Ctx) error {
	projectID := guard.ProjectOf(c)
	tokenID := strings.Clone(c.Params("tokenId"))
	if err := h.svc.Revoke(c.UserContext(), projectID, tokenID, guard.ActorOf(c), httpserver.Origin(c)); err != nil {
		return err
	}
	return c.JSON(fiber.Map{"engine": engineName, "ok": true, "projectId": projectID, "tokenId": tokenID})
}

// roll answers the create answer's shape plus previousSecretExpiresAt (SPEC §12). Like
// create, a body that is not a JSON object is read as {}.
func (h *handler) roll(c *fiber.Ctx) error {
	grace, _, err := rollover.Grace(c.Body())
	if err != nil {
		return invalidRoll(err.Error())
	}
	projectID := guard.ProjectOf(c)
	rolled, err := h.svc.Roll(c.UserContext(), projectID, strings.Clone(c.Params("tokenId")), grace, guard.ActorOf(c), httpserver.Origin(c))
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{
		"engine": engineName, "projectId": projectID, "agent": rolled.Agent, "plaintext": rolled.Plaintext, "note": note,
		"previousSecretExpiresAt": rolled.PreviousSecretExpiresAt,
	})
}
