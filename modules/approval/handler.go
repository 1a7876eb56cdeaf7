package approval

import (
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/dpop"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/oauth"
	"github.com/authcore/authcore/platform/ratelimit"
)

type handler struct {
	svc    *service
	guard  *guard.Guard
	limits *ratelimit.Limiters
	cfg    config.Config
	dpop   *dpop.Checker
}

// routes: the backchannel endpoint (a client), the person's approvals (their session),
// and the project's types and client settings (members read, admins change, step-up).
func (h *handler) routes() []httpserver.Route {
	g := h.guard
	member := func(f fiber.Handler) []fiber.Handler {
		return []fiber.Handler{g.Dashboard(), g.ProjectRole(identity.RoleViewer, guard.FromPath, nil), f}
	}
	admin := func(f fiber.Handler) []fiber.Handler {
		return []fiber.Handler{g.Dashboard(), g.ProjectRole(identity.RoleAdmin, guard.FromPath, nil), g.Recently(f)}
	}
	person := func(f fiber.Handler) []fiber.Handler { return []fiber.Handler{g.Session(), f} }
	const types = "/v1/projects/:id/oauth/authorization-details"
	const clients = "/v1/projects/:id/oauth/backchannel-clients"
	return []httpserver.Route{
		{Method: http.MethodPost, Path: oauth.BackchannelPath, Handlers: []fiber.Handler{h.authorize}},
		{Method: http.MethodGet, Path: "/v1/auth-core/approvals", Handlers: person(h.list)},
		{Method: http.MethodGet, Path: "/v1/auth-core/approvals/:requestId", Handlers: person(h.one)},
		{Method: http.MethodPost, Path: "/v1/auth-core/approvals/:requestId/approve", Handlers: person(h.decide(true))},
		{Method: http.MethodPost, Path: "/v1/auth-core/approvals/:requestId/deny", Handlers: person(h.decide(false))},
		{Method: http.MethodGet, Path: types, Handlers: member(h.listTypes)},
		{Method: http.MethodPost, Path: types, Handlers: admin(h.createType)},
		{Method: http.MethodPut, Path: types + "/:type", Handlers: admin(h.updateType)},
		{Method: http.MethodDelete, Path: types + "/:type", Handlers: admin(h.deleteType)},
		{Method: http.MethodGet, Path: clients, Handlers: member(h.listClients)},
		{Method: http.MethodPut, Path: clients + "/:clientId", Handlers: admin(h.setClient)},
		{Method: http.MethodDelete, Path: clients + "/:clientId", Handlers: admin(h.deleteClient)},
	}
}

// authorize is CIBA §7: failed client authentications spend the caller's failure budget,
// as at the token endpoint.
func (h *handler) authorize(c *fiber.Ctx) error {
	c.Set(fiber.HeaderCacheControl, "no-store")
	ip := httpserver.ClientIP(c)
	if err := h.limits.Failures.Check(ip); err != nil {
		return err
	}
	form, err := readForm(c.Get(fiber.HeaderContentType), c.Body())
	if err != nil {
		return err
	}
	// A client that is a DPoP-bound agent token proves its key here too (SPEC §22).
	c.Set("DPoP-Nonce", h.dpop.Nonce())
	ctx, err := oauth.ProveDPoP(httpserver.WithIssuer(c, h.cfg), h.dpop, c.Request().Header.PeekAll("DPoP"), http.MethodPost, h.cfg.SelfURL()+oauth.BackchannelPath)
	if err != nil {
		return err
	}
	started, err := h.svc.Authorize(ctx, form, strings.Clone(c.Get(fiber.HeaderAuthorization)), httpserver.Origin(c))
	if e, ok := apperr.As(err); ok && (e.Code == "invalid_client" || e.Code == "invalid_grant") {
		h.limits.Failures.Fail(ip)
	}
	if err != nil {
		return err
	}
	return c.JSON(started)
}

func (h *handler) list(c *fiber.Ctx) error {
	p, _ := guard.PrincipalOf(c)
	out, err := h.svc.Approvals(c.UserContext(), p.UserID)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"approvals": out})
}

func (h *handler) one(c *fiber.Ctx) error {
	p, _ := guard.PrincipalOf(c)
	out, err := h.svc.Approval(c.UserContext(), p.UserID, strings.Clone(c.Params("requestId")))
	if err != nil {
		return err
	}
	return c.JSON(out)
}

func (h *handler) decide(approve bool) fiber.Handler {
	return func(c *fiber.Ctx) error {
		p, _ := guard.PrincipalOf(c)
		fresh := h.guard.AuthenticatedWithin(p, freshWindow)
		out, err := h.svc.Decide(c.UserContext(), p, strings.Clone(c.Params("requestId")), approve, fresh, c.Body(), httpserver.Origin(c))
		if err != nil {
			return err
		}
		return c.JSON(out)
	}
}

func (h *handler) listTypes(c *fiber.Ctx) error {
	out, err := h.svc.types.ListTypes(c.UserContext(), guard.ProjectOf(c))
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"types": out})
}

func (h *handler) createType(c *fiber.Ctx) error {
	out, err := h.svc.types.CreateType(c.UserContext(), guard.ProjectOf(c), guard.ActorOf(c), c.Body(), httpserver.Origin(c))
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(out)
}

func (h *handler) updateType(c *fiber.Ctx) error {
	out, err := h.svc.types.UpdateType(c.UserContext(), guard.ProjectOf(c), strings.Clone(c.Params("type")), guard.ActorOf(c), c.Body(), httpserver.Origin(c))
	if err != nil {
		return err
	}
	return c.JSON(out)
}

func (h *handler) deleteType(c *fiber.Ctx) error {
	t := strings.Clone(c.Params("type"))
	if err := h.svc.types.DeleteType(c.UserContext(), guard.ProjectOf(c), t, guard.ActorOf(c), httpserver.Origin(c)); err != nil {
		return err
	}
	return c.JSON(fiber.Map{"ok": true, "type": t})
}

func (h *handler) listClients(c *fiber.Ctx) error {
	out, err := h.svc.Clients(c.UserContext(), guard.ProjectOf(c))
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"clients": out})
}

func (h *handler) setClient(c *fiber.Ctx) error {
	out, err := h.svc.SetClient(c.UserContext(), guard.ProjectOf(c), strings.Clone(c.Params("clientId")), guard.ActorOf(c), c.Body(), httpserver.Origin(c))
	if err != nil {
		return err
	}
	return c.JSON(out)
}

func (h *handler) deleteClient(c *fiber.Ctx) error {
	id := strings.Clone(c.Params("clientId"))
	if err := h.svc.DeleteClient(c.UserContext(), guard.ProjectOf(c), id, guard.ActorOf(c), httpserver.Origin(c)); err != nil {
		return err
	}
	return c.JSON(fiber.Map{"ok": true, "clientId": id})
}
