package guard

import (
	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/jsonbody"
)

// ProjectFrom says where a route carries its project id.
type ProjectFrom int

const (
	// FromPath reads the route parameter :id (or :projectId).
	FromPath ProjectFrom = iota
	// FromQuery reads ?projectId=.
	FromQuery
	// FromBodyThenQuery reads "projectId" from a JSON body, else ?projectId= (seed 4.3
	// session/revoke). A missing or unparsable body counts as empty.
	FromBodyThenQuery
)

type projectKey struct{}

// ProjectOf returns the project id a project guard admitted this request for.
func ProjectOf(c *fiber.Ctx) string {
	id, _ := c.Locals(projectKey{}).(string)
	return id
}

// RoleOf returns the caller's role on that project.
func RoleOf(c *fiber.Ctx) string {
	r, _ := c.Locals(roleKey{}).(string)
	return r
}

type roleKey struct{}

// ProjectRole admits a caller already admitted by Dashboard whose role on the route's
// project is at least min. Anything else (not a member, too low a role, no such project,
// no project id) is the same 403, so the answer never tells whether a project exists.
func (g *Guard) ProjectRole(min string, from ProjectFrom, fields map[string]any) fiber.Handler {
	forbidden := apperr.Forbidden("you need the " + min + " role on this project")
	for k, v := range fields {
		forbidden = forbidden.With(k, v)
	}
	want := identity.RoleRank(min)
	return func(c *fiber.Ctx) error {
		p, ok := PrincipalOf(c)
		if !ok {
			return forbidden
		}
		projectID := projectIDOf(c, from)
		if projectID == "" || g.members == nil {
			return forbidden
		}
		role, ok, err := g.members.Role(c.UserContext(), projectID, p.UserID)
		if err != nil {
			return err
		}
		if !ok || identity.RoleRank(role) < want {
			return forbidden
		}
		if err := g.RequireFactor(c.UserContext(), projectID, p.UserID); err != nil {
			return err
		}
		c.Locals(projectKey{}, projectID)
		c.Locals(roleKey{}, role)
		return c.Next()
	}
}

func projectIDOf(c *fiber.Ctx, from ProjectFrom) string {
	var id string
	switch from {
	case FromPath:
		id = c.Params("id")
		if id == "" {
			id = c.Params("projectId")
		}
	case FromQuery:
		id = c.Query("projectId")
	case FromBodyThenQuery:
		if s, st := jsonbody.ParseOrEmpty(c.Body()).String("projectId"); st == jsonbody.OK && s != "" {
			id = s
		} else {
			id = c.Query("projectId")
		}
	}
	return string([]byte(id)) // outlives Fiber's buffers in Locals
}
