package org

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/jsonbody"
	"github.com/authcore/authcore/platform/ratelimit"
)

// The members each body may hold; any other is refused, so a typo never passes silently.
var (
	orgFields    = []string{"name", "slug"}
	memberFields = []string{"userId", "email", "role"}
	roleFields   = []string{"name", "permissions"}
	domainFields = []string{"domain", "method", "email"}
	policyFields = []string{"ssoRequired", "mfaRequired", "sessionMaxHours", "autoJoin", "revokeMintedOnDeprovision"}
)

// handler serves SPEC §26's routes for project admins and for org admins.
type handler struct {
	svc     *Service
	invites *Invitations
	dir     Directory
	doms    *domains
	guard   *guard.Guard
	limits  *ratelimit.Limiters
}

// errNotTenantUser answers a dashboard session on the routes of a tenant's users.
var errNotTenantUser = apperr.Forbidden("these routes are a project's tenant users': a dashboard session is not one")

// routes are the project admins' and the org admins' (SPEC §26): the same member and
// invitation routes under both prefixes, with the same bodies; every change asks for a
// recent sign-in. Org admins are users of the project's tenant whose role in the org is
// owner or admin (guard.OrgAdmin decides, once, for every module's org admin routes).
func (h handler) routes() []httpserver.Route {
	const (
		orgs    = "/v1/projects/:id/orgs"
		one     = orgs + "/:orgId"
		roles   = "/v1/projects/:id/org-roles"
		domains = one + "/domains"
		domain  = domains + "/:domain"
		policy  = one + "/policy"
		mine    = "/v1/auth-core/orgs"
		own     = mine + "/:orgId"
	)
	o := func(intent, method, path string, f fiber.Handler) httpserver.Route {
		return httpserver.Route{Method: method, Path: path, Handlers: []fiber.Handler{h.guard.OrgAdmin(intent), f}}
	}
	admin := []fiber.Handler{h.guard.Dashboard(), h.guard.ProjectRole(identity.RoleAdmin, guard.FromPath, nil)}
	// Only an org's own admins manage its people: no setup link names members.
	orgAdmin := []fiber.Handler{h.guard.OrgAdmin(guard.IntentMembers)}
	in := func(guards []fiber.Handler) func(method, path string, f fiber.Handler) httpserver.Route {
		return func(method, path string, f fiber.Handler) httpserver.Route {
			return httpserver.Route{Method: method, Path: path, Handlers: append(slices.Clone(guards), f)}
		}
	}
	r := in(admin)
	routes := []httpserver.Route{
		r(http.MethodGet, orgs, h.list),
		r(http.MethodPost, orgs, h.guard.Recently(h.create)),
		r(http.MethodGet, one, h.get),
		r(http.MethodPatch, one, h.guard.Recently(h.update)),
		r(http.MethodDelete, one, h.guard.Recently(h.remove)),
		r(http.MethodGet, roles, h.roles),
		r(http.MethodPut, roles, h.guard.Recently(h.putRoles)),
		r(http.MethodGet, domains, h.domains),
		r(http.MethodPost, domains, h.guard.Recently(h.claimDomain)),
		r(http.MethodDelete, domain, h.guard.Recently(h.removeDomain)),
		r(http.MethodPost, domain+"/verify", h.guard.Recently(h.verifyDomain)),
		r(http.MethodGet, policy, h.policy),
		r(http.MethodPut, policy, h.guard.Recently(h.putPolicy)),
		r(http.MethodPost, one+"/setup-links", h.guard.Recently(h.createSetupLink)),
		// The org's own admins and its setup sessions (SPEC §26): the same handlers, the
		// project from the guard rather than the path.
		o(guard.IntentAny, http.MethodGet, own, h.get),
		o(guard.IntentDomains, http.MethodGet, own+"/domains", h.domains),
		o(guard.IntentDomains, http.MethodPost, own+"/domains", h.guard.Recently(h.claimDomain)),
		o(guard.IntentDomains, http.MethodDelete, own+"/domains/:domain", h.guard.Recently(h.removeDomain)),
		o(guard.IntentDomains, http.MethodPost, own+"/domains/:domain/verify", h.guard.Recently(h.verifyDomain)),
		o(guard.IntentSSO, http.MethodGet, own+"/policy", h.policy),
		o(guard.IntentSSO, http.MethodPut, own+"/policy", h.guard.Recently(h.putPolicy)),
		// The link is the credential; its budget is the sign-in attempts'.
		{Method: http.MethodPost, Path: "/v1/auth-core/orgs/setup/open", Handlers: []fiber.Handler{h.limits.Attempts.Middleware(), h.openSetupLink}},
		// A tenant user's own orgs, and the invitee's acceptance: any session of a tenant.
		in([]fiber.Handler{h.guard.Session()})(http.MethodGet, mine, h.mine),
		in([]fiber.Handler{h.guard.Session()})(http.MethodPost, mine+"/invitations/accept", h.accept),
	}
	for _, at := range []struct {
		path   string
		guards []fiber.Handler
	}{{one, admin}, {own, orgAdmin}} {
		r := in(at.guards)
		routes = append(routes,
			r(http.MethodGet, at.path+"/members", h.members),
			r(http.MethodPost, at.path+"/members", h.guard.Recently(h.addMember)),
			r(http.MethodPatch, at.path+"/members/:userId", h.guard.Recently(h.updateMember)),
			r(http.MethodDelete, at.path+"/members/:userId", h.guard.Recently(h.removeMember)),
			r(http.MethodGet, at.path+"/invitations", h.invitations),
			r(http.MethodPost, at.path+"/invitations", h.guard.Recently(h.invite)),
			r(http.MethodDelete, at.path+"/invitations/:invitationId", h.guard.Recently(h.revokeInvitation)),
		)
	}
	return routes
}

func actorOf(c *fiber.Ctx) Actor {
	a := Actor{ID: guard.ActorOf(c), Project: guard.ProjectOf(c), Origin: httpserver.Origin(c)}
	if guard.OrgOf(c) != "" { // admitted by OrgAdmin, whose RoleOf is the org role
		a.OrgRole = guard.RoleOf(c)
	}
	return a
}

// refuseUnknown fails each member of f that is not one of fields.
func refuseUnknown(f *jsonbody.Fields, fields []string, of string) {
	for name := range f.Object {
		if !slices.Contains(fields, name) {
			f.Fail(name, "not a field of "+of)
		}
	}
}

// readOrg reads a name and a slug (each nil when absent); creating requires the name and
// derives the slug from it when absent.
func readOrg(body []byte, creating bool) (name, slug *string, err error) {
	f := jsonbody.Read(body)
	refuseUnknown(f, orgFields, "an org")
	switch v, st := f.String("name"); {
	case st == jsonbody.OK:
		if why := checkName(v); why != "" {
			f.Fail("name", why)
		}
		name = &v
	case st == jsonbody.WrongType:
		f.Fail("name", "must be a string")
	case creating || st == jsonbody.Null:
		f.Fail("name", "required string")
	}
	switch v, st := f.String("slug"); {
	case st == jsonbody.OK:
		if why := checkSlug(v); why != "" {
			f.Fail("slug", why)
		}
		slug = &v
	case st == jsonbody.WrongType || (st == jsonbody.Null && !creating):
		f.Fail("slug", "must be a string")
	case creating && name != nil && checkName(*name) == "":
		derived := slugOf(*name)
		if derived == "" {
			f.Fail("slug", "the name has no a-z nor 0-9 to derive a slug from: give one")
		}
		slug = &derived
	}
	return name, slug, f.Err()
}

func (h handler) create(c *fiber.Ctx) error {
	name, slug, err := readOrg(c.Body(), true)
	if err != nil {
		return err
	}
	o, err := h.svc.Create(c.UserContext(), actorOf(c), *name, *slug)
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(o)
}

func (h handler) list(c *fiber.Ctx) error {
	out, err := h.svc.List(c.UserContext(), guard.ProjectOf(c))
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"orgs": out})
}

func (h handler) get(c *fiber.Ctx) error {
	o, err := h.svc.Get(c.UserContext(), guard.ProjectOf(c), c.Params("orgId"))
	if err != nil {
		return err
	}
	return c.JSON(o)
}

func (h handler) update(c *fiber.Ctx) error {
	name, slug, err := readOrg(c.Body(), false)
	if err != nil {
		return err
	}
	o, err := h.svc.Update(c.UserContext(), actorOf(c), strings.Clone(c.Params("orgId")), name, slug)
	if err != nil {
		return err
	}
	return c.JSON(o)
}

func (h handler) remove(c *fiber.Ctx) error {
	id := strings.Clone(c.Params("orgId"))
	n, err := h.svc.Delete(c.UserContext(), actorOf(c), id)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"ok": true, "id": id, "membersRemoved": n})
}

// readRole reads a role field that must be present.
func readRole(f *jsonbody.Fields) string {
	v, st := f.String("role")
	switch {
	case st == jsonbody.WrongType:
		f.Fail("role", "must be a string")
	case st != jsonbody.OK || v == "":
		f.Fail("role", "required string")
	}
	return v
}

func (h handler) addMember(c *fiber.Ctx) error {
	f := jsonbody.Read(c.Body())
	refuseUnknown(f, memberFields, "a member")
	userID, ust := f.String("userId")
	email, est := f.String("email")
	switch {
	case ust != jsonbody.Absent && est != jsonbody.Absent:
		f.Fail("email", "give userId or email, not both")
	case ust == jsonbody.OK && userID != "":
	case ust != jsonbody.Absent:
		f.Fail("userId", "must be a user id (a non-empty string)")
	case est == jsonbody.OK:
		if addr, ok := identity.NormalizeEmail(email); ok {
			email = addr
		} else {
			f.Fail("email", "not a valid email address")
		}
	case est != jsonbody.Absent:
		f.Fail("email", "must be a string")
	default:
		f.Fail("userId", "required: userId or email")
	}
	role := readRole(f)
	if err := f.Err(); err != nil {
		return err
	}
	m, err := h.svc.AddMember(c.UserContext(), actorOf(c), strings.Clone(c.Params("orgId")), userID, email, role)
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(m)
}

func (h handler) members(c *fiber.Ctx) error {
	out, err := h.svc.Members(c.UserContext(), guard.ProjectOf(c), c.Params("orgId"))
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"members": out})
}

func (h handler) updateMember(c *fiber.Ctx) error {
	f := jsonbody.Read(c.Body())
	refuseUnknown(f, []string{"role"}, "a membership change")
	role := readRole(f)
	if err := f.Err(); err != nil {
		return err
	}
	m, err := h.svc.UpdateMember(c.UserContext(), actorOf(c), strings.Clone(c.Params("orgId")), strings.Clone(c.Params("userId")), role)
	if err != nil {
		return err
	}
	return c.JSON(m)
}

func (h handler) removeMember(c *fiber.Ctx) error {
	userID := strings.Clone(c.Params("userId"))
	if err := h.svc.RemoveMember(c.UserContext(), actorOf(c), strings.Clone(c.Params("orgId")), userID); err != nil {
		return err
	}
	return c.JSON(fiber.Map{"ok": true, "userId": userID})
}

func (h handler) roles(c *fiber.Ctx) error {
	out, err := h.svc.Roles(c.UserContext(), guard.ProjectOf(c))
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"roles": out})
}

// readRoles reads PUT …/org-roles: an array of { name, permissions }, every broken rule
// an issue of its element ("[2].permissions").
func readRoles(body []byte) ([]Role, error) {
	var items []json.RawMessage
	if t := bytes.TrimSpace(body); len(t) == 0 || t[0] != '[' || json.Unmarshal(t, &items) != nil {
		return nil, apperr.Validation(apperr.Issue{Field: "body", Reason: "must be a JSON array of roles: [{ name, permissions }]"})
	}
	var issues []apperr.Issue
	if len(items) > maxRoles {
		issues = append(issues, apperr.Issue{Field: "body", Reason: fmt.Sprintf("at most %d roles", maxRoles)})
	}
	roles := make([]Role, 0, len(items))
	seen := map[string]bool{}
	for i, raw := range items {
		at := fmt.Sprintf("[%d].", i)
		f := jsonbody.Read(raw)
		if f.Object == nil {
			issues = append(issues, apperr.Issue{Field: fmt.Sprintf("[%d]", i), Reason: "must be an object { name, permissions }"})
			continue
		}
		fail := func(field, why string) { issues = append(issues, apperr.Issue{Field: at + field, Reason: why}) }
		for name := range f.Object {
			if !slices.Contains(roleFields, name) {
				fail(name, "not a field of a role")
			}
		}
		var r Role
		switch v, st := f.String("name"); {
		case st != jsonbody.OK:
			fail("name", "required string")
		case slices.Contains(builtInRoles, v):
			fail("name", "owner, admin and member are built in: they cannot be redefined")
		case len(v) > maxRoleName || !roleNamePattern.MatchString(v):
			fail("name", fmt.Sprintf("a-z first, then a-z, 0-9, '_' and '-', at most %d", maxRoleName))
		case seen[v]:
			fail("name", "defined twice")
		default:
			seen[v] = true
			r.Name = v
		}
		switch v, st := f.Strings("permissions"); {
		case st != jsonbody.OK:
			fail("permissions", "required array of strings")
		case len(v) > maxPermissions:
			fail("permissions", fmt.Sprintf("at most %d per role", maxPermissions))
		default:
			for _, p := range v {
				if len(p) > maxPermission || !permissionPattern.MatchString(p) {
					fail("permissions", fmt.Sprintf("each a permission such as invoices:read (letters, digits, _ . * - parts joined by ':', at most %d): %q is not", maxPermission, p))
					break
				}
			}
			slices.Sort(v)
			r.Permissions = slices.Compact(v)
		}
		roles = append(roles, r)
	}
	if len(issues) > 0 {
		return nil, apperr.Validation(issues...)
	}
	return roles, nil
}

func (h handler) putRoles(c *fiber.Ctx) error {
	roles, err := readRoles(c.Body())
	if err != nil {
		return err
	}
	if err := h.svc.PutRoles(c.UserContext(), actorOf(c), roles); err != nil {
		return err
	}
	return h.roles(c)
}

// mine answers a tenant user's orgs with their role in each.
func (h handler) mine(c *fiber.Ctx) error {
	p, _ := guard.PrincipalOf(c)
	if p.TenantID == identity.PublicTenant {
		return errNotTenantUser
	}
	out, err := h.dir.OrgsOf(c.UserContext(), p.TenantID, p.UserID)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"orgs": out})
}

func (h handler) invite(c *fiber.Ctx) error {
	f := jsonbody.Read(c.Body())
	refuseUnknown(f, []string{"email", "role"}, "an invitation")
	email, st := f.String("email")
	switch {
	case st == jsonbody.OK:
		if addr, ok := identity.NormalizeEmail(email); ok {
			email = addr
		} else {
			f.Fail("email", "not a valid email address")
		}
	case st == jsonbody.WrongType:
		f.Fail("email", "must be a string")
	default:
		f.Fail("email", "required string")
	}
	role := readRole(f)
	if err := f.Err(); err != nil {
		return err
	}
	inv, err := h.invites.Invite(c.UserContext(), actorOf(c), strings.Clone(c.Params("orgId")), email, role)
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(inv)
}

func (h handler) invitations(c *fiber.Ctx) error {
	out, err := h.invites.List(c.UserContext(), guard.ProjectOf(c), c.Params("orgId"))
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"invitations": out})
}

func (h handler) revokeInvitation(c *fiber.Ctx) error {
	id := strings.Clone(c.Params("invitationId"))
	if err := h.invites.Revoke(c.UserContext(), actorOf(c), strings.Clone(c.Params("orgId")), id); err != nil {
		return err
	}
	return c.JSON(fiber.Map{"ok": true, "id": id})
}

// accept spends an invitation for the signed-in tenant user it was mailed to.
func (h handler) accept(c *fiber.Ctx) error {
	f := jsonbody.Read(c.Body())
	refuseUnknown(f, []string{"token"}, "an acceptance")
	token, st := f.String("token")
	if st != jsonbody.OK || token == "" {
		f.Fail("token", "required string: the token of the invitation's link")
	}
	if err := f.Err(); err != nil {
		return err
	}
	p, _ := guard.PrincipalOf(c)
	if p.TenantID == identity.PublicTenant {
		return errNotTenantUser
	}
	out, err := h.invites.Accept(c.UserContext(), p, token, httpserver.Origin(c))
	if err != nil {
		return err
	}
	return c.JSON(out)
}
