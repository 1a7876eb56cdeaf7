package agenttoken

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/bearer"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/identity"
)

// engineName is the seed's "engine" constant (SPEC §0).
const engineName = "authcore"

// note tells the caller what to do with the one-time secret (seed 4.1).
const note = "Copy this token now: it is shown only once and cannot be recovered. Send it as `Authorization: Bearer <token>`."

type handler struct {
	svc   *Service
	guard *guard.Guard
	me    *bearer.WhoAmI
	log   *slog.Logger
}

var engineField = map[string]any{"engine": engineName}

func (h *handler) routes() []httpserver.Route {
	// The project-admin guard on the agents path and everything beneath it (seed 4.1);
	// its rejections carry engine (SPEC §4).
	dash := h.guard.DashboardWith(engineField)
	admin := h.guard.ProjectRole(identity.RoleAdmin, guard.FromPath, engineField)
	const base = "/v1/auth-core/projects/:projectId/ai/agents"
	return []httpserver.Route{
		{Method: http.MethodGet, Path: base, Handlers: []fiber.Handler{dash, admin, h.list}},
		{Method: http.MethodPost, Path: base, Handlers: []fiber.Handler{dash, admin, h.create}},
		{Method: http.MethodDelete, Path: base + "/:tokenId", Handlers: []fiber.Handler{dash, admin, h.revoke}},
		{Method: http.MethodGet, Path: "/v1/auth-core/ai/me", Handlers: []fiber.Handler{h.me.Handle}},
	}
}

func failure(status int, code, message string) *apperr.Error {
	return apperr.New(status, code, message).With("engine", engineName)
}

func (h *handler) list(c *fiber.Ctx) error {
	projectID := guard.ProjectOf(c)
	agents, err := h.svc.List(c.UserContext(), projectID)
	if err != nil {
		h.log.ErrorContext(c.UserContext(), "listing agent tokens failed", "error", err)
		return failure(http.StatusInternalServerError, "list_failed", "the tokens could not be listed")
	}
	return c.JSON(fiber.Map{"engine": engineName, "projectId": projectID, "agents": agents})
}

func (h *handler) create(c *fiber.Ctx) error {
	req, err := ParseCreate(c.Body())
	if err != nil {
		return failure(http.StatusBadRequest, "create_failed", err.Error())
	}
	projectID := guard.ProjectOf(c)
	p, _ := guard.PrincipalOf(c)
	var creator *string
	if p.UserID != "" {
		creator = &p.UserID
	}
	created, err := h.svc.Create(c.UserContext(), projectID, creator, req, httpserver.Origin(c))
	if err != nil {
		// The seed answers every creation failure with 400 create_failed; a store
		// failure's text stays in the log.
		h.log.ErrorContext(c.UserContext(), "creating an agent token failed", "error", err)
		return failure(http.StatusBadRequest, "create_failed", "the token could not be created")
	}
	return c.Status(http.StatusOK).JSON(fiber.Map{
		"engine": engineName, "projectId": projectID, "agent": created.Agent, "plaintext": created.Plaintext, "note": note,
	})
}

func (h *handler) revoke(c *fiber.Ctx) error {
	projectID := guard.ProjectOf(c)
	tokenID := strings.Clone(c.Params("tokenId"))
	p, _ := guard.PrincipalOf(c)
	actor := p.UserID
	if err := h.svc.Revoke(c.UserContext(), projectID, tokenID, &actor, httpserver.Origin(c)); err != nil {
		msg := ErrNotFound.Error()
		if !errors.Is(err, ErrNotFound) {
			h.log.ErrorContext(c.UserContext(), "revoking an agent token failed", "error", err)
			msg = "the token could not be revoked"
		}
		return failure(http.StatusNotFound, "revoke_failed", msg)
	}
	return c.JSON(fiber.Map{"engine": engineName, "ok": true, "projectId": projectID, "tokenId": tokenID})
}
