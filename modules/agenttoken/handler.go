package agenttoken

import (
	"net/http"
	"strings"
	"time"

	"entgo.io/ent/dialect/sql"

	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/ent/schema"
	"github.com/authcore/authcore/platform/bearer"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/lifecycle"
	"github.com/authcore/authcore/platform/rollover"
)

// note tells the caller what to do with the one-time secret (seed 4.1).
const note = "Copy this token now: it is shown only once and cannot be recovered. Send it as `Authorization: Bearer <token>`."

var engineField = map[string]any{"engine": engineName}

// routes are the seed's: the lifecycle's routes under the agents path, behind the
// project-admin guard whose rejections carry engine (SPEC §4), with the seed's answers.
func (s *Service) routes(g *guard.Guard, k bearer.Kit) []httpserver.Route {
	return s.life.Routes(g, k, lifecycle.Routes{
		Collection: "/v1/auth-core/projects/:projectId/ai/agents", ID: "tokenId", Me: "/v1/auth-core/ai/me",
		Guards: []fiber.Handler{g.DashboardWith(engineField), g.ProjectRole(identity.RoleAdmin, guard.FromPath, engineField)},
		Shape: lifecycle.Shape{
			Parse: func(c *fiber.Ctx) (lifecycle.Mint, error) {
				req, err := ParseCreate(c.Body())
				if err != nil {
					return lifecycle.Mint{}, err
				}
				return s.mint(c.UserContext(), guard.ProjectOf(c), req)
			},
			Roll:    s.rollBody,
			Created: created,
			Listed: func(c *fiber.Ctx, rs []lifecycle.Record) error {
				return c.JSON(fiber.Map{"engine": engineName, "projectId": guard.ProjectOf(c), "agents": rs})
			},
			Revoked: func(c *fiber.Ctx, id string) error {
				return c.JSON(fiber.Map{"engine": engineName, "ok": true, "projectId": guard.ProjectOf(c), "tokenId": id})
			},
			Rolled: func(c *fiber.Ctx, r lifecycle.Rolled) error {
				return c.JSON(fiber.Map{"engine": engineName, "projectId": guard.ProjectOf(c), "agent": lifecycle.Record{Row: r.Row},
					"plaintext": r.Plaintext, "note": note, "previousSecretExpiresAt": r.PreviousSecretExpiresAt})
			},
		},
	})
}

func created(c *fiber.Ctx, is lifecycle.Issued) error {
	return c.Status(http.StatusOK).JSON(fiber.Map{
		"engine": engineName, "projectId": guard.ProjectOf(c), "agent": lifecycle.Record{Row: is.Row}, "plaintext": is.Plaintext, "note": note,
	})
}

// rollBody reads a roll's body (SPEC §12); like create, a body that is not a JSON object
// is read as {}.
func (s *Service) rollBody(c *fiber.Ctx) (time.Duration, func(*lifecycle.Row, time.Time) error, error) {
	grace, _, err := rollover.Grace(c.Body())
	if err != nil {
		return 0, nil, invalidRoll(err.Error())
	}
	may, err := s.mayRoll(c.UserContext(), guard.ProjectOf(c))
	return grace, may, err
}

// orgRoutes are an org's admins' (SPEC §26): the seed's bodies and answers under
// /v1/auth-core/orgs/{orgId}/ai/agents, behind guard.OrgAdmin. A token minted there is
// bound to that org; only that org's tokens are listed, and another org's, like an
// unknown one, is not found to revoke.
func (s *Service) orgRoutes(g *guard.Guard) []httpserver.Route {
	if s.orgs == nil {
		return nil
	}
	// An org's own admins only: no setup link names its agents.
	guards := []fiber.Handler{g.OrgAdmin(guard.IntentMembers)}
	return httpserver.Collection("/v1/auth-core/orgs/:orgId/ai/agents", "tokenId", guards, s.orgList, g.Recently(s.orgCreate), s.orgRevoke)
}

// ofOrg narrows a list to the tokens bound to org.
func ofOrg(org string) func(*sql.Selector) { return sql.FieldEQ(fieldOrgID, org) }

func (s *Service) orgList(c *fiber.Ctx) error {
	rs, err := s.life.List(c.UserContext(), guard.ProjectOf(c), ofOrg(guard.OrgOf(c)))
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"engine": engineName, "projectId": guard.ProjectOf(c), "orgId": guard.OrgOf(c), "agents": rs})
}

func (s *Service) orgCreate(c *fiber.Ctx) error {
	req, err := ParseCreate(c.Body())
	if err != nil {
		return err
	}
	org := guard.OrgOf(c)
	if req.OrgID != "" && req.OrgID != org {
		return invalidCreate("orgId must be this org's, or absent")
	}
	req.OrgID = org
	m, err := s.mint(c.UserContext(), guard.ProjectOf(c), req)
	if err != nil {
		return err
	}
	m.ProjectID, m.Creator, m.Origin = guard.ProjectOf(c), guard.ActorOf(c), httpserver.Origin(c)
	is, err := s.life.Mint(c.UserContext(), m)
	if err != nil {
		return err
	}
	return created(c, is)
}

func (s *Service) orgRevoke(c *fiber.Ctx) error {
	id := strings.Clone(c.Params("tokenId"))
	// An org's token stays that org's (org_id is immutable), so a token found in the org
	// now is still the org's when revoked.
	rs, err := s.life.List(c.UserContext(), guard.ProjectOf(c), sql.FieldEQ(schema.FieldID, id), ofOrg(guard.OrgOf(c)))
	if err != nil {
		return err
	}
	if len(rs) == 0 {
		return ErrNotFound
	}
	if err := s.life.Revoke(c.UserContext(), guard.ProjectOf(c), id, guard.ActorOf(c), httpserver.Origin(c)); err != nil {
		return err
	}
	return c.JSON(fiber.Map{"engine": engineName, "ok": true, "projectId": guard.ProjectOf(c), "tokenId": id})
}
