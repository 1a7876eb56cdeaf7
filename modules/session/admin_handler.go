package session

import (
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/jsonbody"
)

// Engine is the seed's "engine" constant.
const engineName = "authcore"

// Limits of session/recent (seed 4.3 rule 1, SPEC §3).
const (
	defaultRecent = 50
	maxRecent     = 500
)

func (h *handler) adminRoutes() []httpserver.Route {
	dash := h.guard.Dashboard()
	byQuery := h.guard.ProjectRole(identity.RoleAdmin, guard.FromQuery, nil)
	byBody := h.guard.ProjectRole(identity.RoleAdmin, guard.FromBodyThenQuery, nil)
	notReadyRecent := func(c *fiber.Ctx) error {
		if !h.engine.Ready() {
			return errNotReady.With("engine", engineName).With("sessions", []any{})
		}
		return c.Next()
	}
	return []httpserver.Route{
		{Method: http.MethodGet, Path: "/v1/auth-core/session/list", Handlers: []fiber.Handler{h.requireReady, dash, byQuery, h.list}},
		{Method: http.MethodGet, Path: "/v1/auth-core/session/recent", Handlers: []fiber.Handler{notReadyRecent, dash, byQuery, h.recent}},
		{Method: http.MethodPost, Path: "/v1/auth-core/session/revoke", Handlers: []fiber.Handler{h.requireReady, dash, byBody, h.revoke}},
		{Method: http.MethodGet, Path: "/v1/auth-core/session/mine", Handlers: []fiber.Handler{h.requireReady, h.guard.Session(), h.mine}},
		{Method: http.MethodDelete, Path: "/v1/auth-core/session/mine/:sessionHandle", Handlers: []fiber.Handler{h.requireReady, h.guard.Session(), h.revokeMine}},
	}
}

func (h *handler) list(c *fiber.Ctx) error {
	userID := c.Query("userId")
	if userID == "" {
		return apperr.BadRequest("userId_required", "the userId query parameter is required")
	}
	userID = string([]byte(userID))
	projectID := guard.ProjectOf(c)
	handles, err := h.admin.Handles(c.UserContext(), projectID, userID)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"userId": userID, "handles": handles, "count": len(handles), "projectId": projectID})
}

func (h *handler) recent(c *fiber.Ctx) error {
	projectID := guard.ProjectOf(c)
	limit := httpserver.QueryLimit(c.Query("limit"), defaultRecent, maxRecent)
	// The tenant defaults to the one the project maps to: the project id itself.
	var tenantID *string
	if t := c.Query("tenantId"); t != "" {
		s := string([]byte(t))
		tenantID = &s
	} else {
		tenantID = &projectID
	}
	sessions, err := h.admin.Recent(c.UserContext(), projectID, tenantID, limit)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{
		"engine": engineName, "storage": string(h.engine.db.Storage),
		"projectId": projectID, "tenantId": tenantID,
		"sessions": sessions, "count": len(sessions),
	})
}

func (h *handler) revoke(c *fiber.Ctx) error {
	body := jsonbody.ParseOrEmpty(c.Body())
	handle, _ := body.String("sessionHandle")
	userID, _ := body.String("userId")
	all, _ := body.Bool("all")
	projectID := guard.ProjectOf(c)
	p, _ := guard.PrincipalOf(c)
	ctx := c.UserContext()
	switch {
	case all && userID != "":
		n, err := h.admin.AdminRevokeUser(ctx, projectID, userID, p.UserID, httpserver.Origin(c))
		if err != nil {
			return err
		}
		return c.JSON(fiber.Map{"revoked": n, "userId": userID})
	case handle != "":
		n, err := h.admin.AdminRevoke(ctx, projectID, handle, p.UserID, httpserver.Origin(c))
		if err != nil {
			return err
		}
		return c.JSON(fiber.Map{"revoked": n, "sessionHandle": handle})
	}
	return apperr.BadRequest("bad_request", "provide sessionHandle, or userId with all: true")
}

// ownSession is an element of session/mine: a recent-session element and whether it is
// the session making the request.
type ownSession struct {
	Recent
	Current bool `json:"current"`
}

func (h *handler) mine(c *fiber.Ctx) error {
	p, _ := guard.PrincipalOf(c)
	rows, err := h.admin.Mine(c.UserContext(), p.UserID)
	if err != nil {
		return err
	}
	sessions := make([]ownSession, len(rows))
	for i, r := range rows {
		sessions[i] = ownSession{Recent: r, Current: r.SessionHandle == p.SessionHandle}
	}
	return c.JSON(fiber.Map{"userId": p.UserID, "sessions": sessions, "count": len(sessions)})
}

func (h *handler) revokeMine(c *fiber.Ctx) error {
	p, _ := guard.PrincipalOf(c)
	handle := strings.Clone(c.Params("sessionHandle"))
	n, err := h.admin.RevokeMine(c.UserContext(), p.UserID, handle)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"revoked": n, "sessionHandle": handle})
}
