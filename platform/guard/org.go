package guard

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/identity"
)

var (
	// errNoOrg answers anyone who is not a member of the route's org, or names an org of
	// another project or none: the same 404, so nothing of another org is visible.
	errNoOrg = apperr.NotFound("no such org")
	// errNotOrgAdmin answers a member of the org whose role administers nothing.
	errNotOrgAdmin = apperr.Forbidden("you need the owner or admin role in this org")
	// errTenantSession answers a dashboard session: org admins are users of the
	// project's tenant; project admins have their own routes under /v1/projects.
	errTenantSession = apperr.Forbidden("org admins sign in to the project's tenant: a dashboard session is not one")
)

type orgKey struct{}

type orgRoleKey struct{}

// OrgOf returns the org id OrgAdmin admitted this request for.
func OrgOf(c *fiber.Ctx) string {
	id, _ := c.Locals(orgKey{}).(string)
	return id
}

// OrgRoleOf returns the caller's role in that org ("owner" or "admin").
func OrgRoleOf(c *fiber.Ctx) string {
	r, _ := c.Locals(orgRoleKey{}).(string)
	return r
}

// OrgAdmin admits a caller, already admitted by Session, who may act as an admin of the
// route's org (:orgId): a user of a project's tenant whose role in an org of that
// project is owner or admin (SPEC §26). The project is the session's tenant, so no path
// names it. It sets the project (ProjectOf), the org (OrgOf) and the caller's role
// (OrgRoleOf). This is the one place that decides; a later way in (a setup link) joins
// it here.
func (g *Guard) OrgAdmin(orgs identity.OrgRoles) fiber.Handler {
	return func(c *fiber.Ctx) error {
		p, ok := PrincipalOf(c)
		if !ok {
			return apperr.Unauthorized("sign in first")
		}
		if p.TenantID == identity.PublicTenant {
			return errTenantSession
		}
		orgID := c.Params("orgId")
		role, ok, err := orgs.OrgRole(c.UserContext(), p.TenantID, orgID, p.UserID)
		if err != nil {
			return err
		}
		if !ok {
			return errNoOrg
		}
		if role != "owner" && role != "admin" {
			return errNotOrgAdmin
		}
		c.Locals(projectKey{}, p.TenantID)
		c.Locals(orgKey{}, strings.Clone(orgID))
		c.Locals(orgRoleKey{}, role)
		return c.Next()
	}
}
