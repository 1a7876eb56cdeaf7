package agenttoken

import (
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

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
