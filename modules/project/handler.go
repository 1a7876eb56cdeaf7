package project

import (
	"fmt"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/jsonbody"
	"github.com/authcore/authcore/platform/policy"
	"github.com/authcore/authcore/platform/scope"
)

type handler struct {
	svc     *Service
	invites *Invitations
	guard   *guard.Guard
	audit   *audit.Recorder
}

func (h *handler) routes() []httpserver.Route {
	dash := h.guard.Dashboard()
	member := h.guard.ProjectRole(identity.RoleViewer, guard.FromPath, nil)
	admin := h.guard.ProjectRole(identity.RoleAdmin, guard.FromPath, nil)
	r := func(method, path string, hs ...fiber.Handler) httpserver.Route {
		return httpserver.Route{Method: method, Path: path, Handlers: hs}
	}
	return []httpserver.Route{
		r(http.MethodPost, "/v1/projects", dash, h.create),
		r(http.MethodGet, "/v1/projects", dash, h.mine),
		r(http.MethodGet, "/v1/projects/:id", dash, member, h.get),
		r(http.MethodGet, "/v1/projects/:id/members", dash, member, h.members),
		r(http.MethodPost, "/v1/projects/:id/members", dash, admin, h.guard.Recently(h.addMember)),
		r(http.MethodDelete, "/v1/projects/:id/members/:userId", dash, admin, h.removeMember),
		r(http.MethodPost, "/v1/projects/:id/invitations", dash, admin, h.guard.Recently(h.invite)),
		r(http.MethodGet, "/v1/projects/:id/invitations", dash, admin, h.invitations),
		r(http.MethodDelete, "/v1/projects/:id/invitations/:invitationId", dash, admin, h.revokeInvitation),
		r(http.MethodPost, "/v1/auth-core/invitations/accept", dash, h.acceptInvitation),
		r(http.MethodGet, "/v1/projects/:id/audit", dash, admin, h.auditTrail),
		r(http.MethodGet, "/v1/projects/:id/audit/verify", dash, admin, h.verifyTrail),
		r(http.MethodGet, "/v1/projects/:id/policy", dash, member, h.policy),
		r(http.MethodPut, "/v1/projects/:id/policy", dash, admin, h.guard.Recently(h.setPolicy)),
	}
}

// auditTrail pages through the project's audit records, newest first (SPEC §7).
func (h *handler) auditTrail(c *fiber.Ctx) error {
	limit := httpserver.QueryLimit(c.Query("limit"), 50, 200)
	page, err := h.audit.List(c.UserContext(), guard.ProjectOf(c), limit, strings.Clone(c.Query("before")))
	if err != nil {
		return err
	}
	return c.JSON(page)
}

// verifyTrail recomputes the project's hash chain and names its first broken link (SPEC §28).
func (h *handler) verifyTrail(c *fiber.Ctx) error {
	v, err := h.audit.Verify(c.UserContext(), guard.ProjectOf(c))
	if err != nil {
		return err
	}
	return c.JSON(v)
}

// ValidName checks a project name: 1 to 80 characters, no control characters.
func ValidName(s string) string {
	n := utf8.RuneCountInString(s)
	switch {
	case strings.TrimSpace(s) == "":
		return "must not be empty"
	case n > 80:
		return "must be at most 80 characters"
	case strings.IndexFunc(s, unicode.IsControl) >= 0:
		return "must not contain control characters"
	}
	return ""
}

func (h *handler) create(c *fiber.Ctx) error {
	f := jsonbody.Read(c.Body())
	name := f.RequiredString("name")
	if reason := ValidName(name); f.Err() == nil && reason != "" {
		f.Fail("name", reason)
	}
	if err := f.Err(); err != nil {
		return err
	}
	p, _ := guard.PrincipalOf(c)
	out, err := h.svc.Create(c.UserContext(), name, p.UserID)
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(out)
}

func (h *handler) mine(c *fiber.Ctx) error {
	p, _ := guard.PrincipalOf(c)
	ps, err := h.svc.Mine(c.UserContext(), p.UserID)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"projects": ps})
}

func (h *handler) get(c *fiber.Ctx) error {
	out, err := h.svc.Get(c.UserContext(), guard.ProjectOf(c), guard.RoleOf(c))
	if err != nil {
		return err
	}
	return c.JSON(out)
}

func (h *handler) members(c *fiber.Ctx) error {
	ms, err := h.svc.Members(c.UserContext(), guard.ProjectOf(c))
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"members": ms})
}

func (h *handler) addMember(c *fiber.Ctx) error {
	f := jsonbody.Read(c.Body())
	email, est := f.String("email")
	userID, ust := f.String("userId")
	if est == jsonbody.WrongType {
		f.Fail("email", "must be a string")
	}
	if ust == jsonbody.WrongType {
		f.Fail("userId", "must be a string")
	}
	if email == "" && userID == "" && est != jsonbody.WrongType && ust != jsonbody.WrongType {
		f.Fail("email", "give email or userId")
	}
	role := roleOf(f)
	if err := f.Err(); err != nil {
		return err
	}
	p, _ := guard.PrincipalOf(c)
	m, err := h.svc.AddMember(c.UserContext(), p.UserID, guard.ProjectOf(c), userID, email, role, httpserver.Origin(c))
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(m)
}

func (h *handler) removeMember(c *fiber.Ctx) error {
	p, _ := guard.PrincipalOf(c)
	userID := string([]byte(c.Params("userId")))
	if err := h.svc.RemoveMember(c.UserContext(), p.UserID, guard.ProjectOf(c), userID, httpserver.Origin(c)); err != nil {
		return err
	}
	return c.JSON(fiber.Map{"ok": true, "userId": userID})
}

func (h *handler) policy(c *fiber.Ctx) error {
	p, err := h.svc.Policy(c.UserContext(), guard.ProjectOf(c))
	if err != nil {
		return err
	}
	return c.JSON(p)
}

// setPolicy replaces the policy: an absent or null field is no limit.
func (h *handler) setPolicy(c *fiber.Ctx) error {
	f := jsonbody.Read(c.Body())
	var p policy.Policy
	limit := func(name string, max int64) *int {
		v, whole, st := f.Integer(name)
		switch {
		case st == jsonbody.Absent || st == jsonbody.Null:
			return nil
		case st != jsonbody.OK || !whole || v < 1 || v > max:
			f.Fail(name, fmt.Sprintf("must be an integer from 1 to %d, or null", max))
			return nil
		}
		n := int(v)
		return &n
	}
	p.AgentTokenMaxTTLHours = limit("agentTokenMaxTtlHours", 8760)
	p.BadgeMaxExpiresInDays = limit("badgeMaxExpiresInDays", 365)
	switch ss, st := f.Strings("allowedScopes"); st {
	case jsonbody.OK:
		for _, sc := range ss {
			if !scope.Valid(sc) {
				f.Fail("allowedScopes", "every pattern must match "+scope.Pattern.String())
				break
			}
		}
		p.AllowedScopes = append([]string{}, ss...)
	case jsonbody.WrongType:
		f.Fail("allowedScopes", "must be an array of scope patterns, or null")
	}
	switch b, st := f.Bool("requireMfa"); st {
	case jsonbody.OK:
		p.RequireMFA = b
	case jsonbody.WrongType:
		f.Fail("requireMfa", "must be a boolean, or null")
	}
	if err := f.Err(); err != nil {
		return err
	}
	pr, _ := guard.PrincipalOf(c)
	if err := h.svc.SetPolicy(c.UserContext(), pr.UserID, guard.ProjectOf(c), p, httpserver.Origin(c)); err != nil {
		return err
	}
	return c.JSON(p)
}

// invite reads { email, role }: an admin invites an address, with step-up (SPEC §9b).
func (h *handler) invite(c *fiber.Ctx) error {
	f := jsonbody.Read(c.Body())
	email := ""
	switch s, st := f.String("email"); {
	case st != jsonbody.OK:
		f.Fail("email", "required string")
	default:
		addr, ok := identity.NormalizeEmail(s)
		if !ok {
			f.Fail("email", "not a valid email address")
		}
		email = addr
	}
	role := roleOf(f)
	if err := f.Err(); err != nil {
		return err
	}
	p, _ := guard.PrincipalOf(c)
	inv, err := h.invites.Invite(c.UserContext(), p.UserID, guard.ProjectOf(c), email, role, httpserver.Origin(c))
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(inv)
}

func (h *handler) invitations(c *fiber.Ctx) error {
	list, err := h.invites.List(c.UserContext(), guard.ProjectOf(c))
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"invitations": list})
}

func (h *handler) revokeInvitation(c *fiber.Ctx) error {
	p, _ := guard.PrincipalOf(c)
	id := strings.Clone(c.Params("invitationId"))
	if err := h.invites.Revoke(c.UserContext(), p.UserID, guard.ProjectOf(c), id, httpserver.Origin(c)); err != nil {
		return err
	}
	return c.JSON(fiber.Map{"ok": true, "invitationId": id})
}

// acceptInvitation reads { token }: the signed-in dashboard user holding the invited
// address, verified, becomes a member.
func (h *handler) acceptInvitation(c *fiber.Ctx) error {
	f := jsonbody.Read(c.Body())
	token := f.RequiredString("token")
	if err := f.Err(); err != nil {
		return err
	}
	p, _ := guard.PrincipalOf(c)
	out, err := h.invites.Accept(c.UserContext(), p.UserID, token, httpserver.Origin(c))
	if err != nil {
		return err
	}
	return c.JSON(out)
}

// roleOf reads the role a member is given or invited with: one of the three roles.
func roleOf(f *jsonbody.Fields) string {
	role, st := f.String("role")
	if st != jsonbody.OK || identity.RoleRank(role) == 0 {
		f.Fail("role", "must be viewer, developer or admin")
	}
	return role
}
