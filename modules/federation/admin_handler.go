package federation

import (
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/jsonbody"
)

// The admin routes of a project's sign-in configuration (SPEC §20): its tenant is the
// project. Changes need an admin with a recent authentication (step-up, SPEC §17).

func change(c *fiber.Ctx) Change {
	return Change{Actor: guard.ActorOf(c), Origin: httpserver.Origin(c)}
}

func (h *handler) getMethods(c *fiber.Ctx) error {
	m, err := h.svc.store.methods(c.UserContext(), guard.ProjectOf(c))
	if err != nil {
		return err
	}
	return c.JSON(m)
}

func (h *handler) putMethods(c *fiber.Ctx) error {
	m, err := h.svc.admin.SetMethods(c.UserContext(), guard.ProjectOf(c), c.Body(), change(c))
	if err != nil {
		return err
	}
	return c.JSON(m)
}

func (h *handler) adminList(c *fiber.Ctx) error {
	vs, err := h.svc.admin.views(c.UserContext(), guard.ProjectOf(c))
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"providers": vs})
}

func (h *handler) create(c *fiber.Ctx) error {
	v, err := h.svc.admin.CreateProvider(c.UserContext(), guard.ProjectOf(c), c.Body(), change(c))
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(v)
}

func (h *handler) adminGet(c *fiber.Ctx) error {
	p, err := h.svc.store.getIn(c.UserContext(), guard.ProjectOf(c), strings.Clone(c.Params("providerId")))
	if err != nil {
		return err
	}
	v, err := h.svc.admin.viewOne(c.UserContext(), p)
	if err != nil {
		return err
	}
	return c.JSON(v)
}

func (h *handler) patch(c *fiber.Ctx) error {
	v, err := h.svc.admin.UpdateProvider(c.UserContext(), guard.ProjectOf(c), strings.Clone(c.Params("providerId")), c.Body(), change(c))
	if err != nil {
		return err
	}
	return c.JSON(v)
}

func (h *handler) remove(c *fiber.Ctx) error {
	id := strings.Clone(c.Params("providerId"))
	if err := h.svc.admin.DeleteProvider(c.UserContext(), guard.ProjectOf(c), id, change(c)); err != nil {
		return err
	}
	return c.JSON(fiber.Map{"ok": true, "id": id})
}

// claimDomain is POST …/providers/{id}/domains { domain }: 201 proven at once (the admin's
// own verified address is in it), 202 when a mail to postmaster@ must prove it.
func (h *handler) claimDomain(c *fiber.Ctx) error {
	ctx := c.UserContext()
	f := jsonbody.Read(c.Body())
	domain := strings.ToLower(strings.TrimSpace(f.RequiredString("domain")))
	if err := f.Err(); err != nil {
		return err
	}
	p, err := h.svc.store.getIn(ctx, guard.ProjectOf(c), strings.Clone(c.Params("providerId")))
	if err != nil {
		return err
	}
	pr, _ := guard.PrincipalOf(c)
	admin, err := h.svc.users.Account(ctx, pr.UserID)
	if err != nil {
		return err
	}
	d, err := h.svc.claimDomain(ctx, p, domain, admin)
	if err != nil {
		return err
	}
	status := http.StatusCreated
	if !d.Verified {
		status = http.StatusAccepted
	}
	return c.Status(status).JSON(d)
}

func (h *handler) dropDomain(c *fiber.Ctx) error {
	ctx := c.UserContext()
	p, err := h.svc.store.getIn(ctx, guard.ProjectOf(c), strings.Clone(c.Params("providerId")))
	if err != nil {
		return err
	}
	domain := strings.ToLower(strings.Clone(c.Params("domain")))
	if err := h.svc.dropDomain(ctx, p, domain); err != nil {
		return err
	}
	return c.JSON(fiber.Map{"ok": true, "domain": domain})
}
