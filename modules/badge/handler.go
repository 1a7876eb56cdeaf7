package badge

import (
	"net/http"
	"time"

	"entgo.io/ent/dialect/sql"
	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/platform/bearer"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/lifecycle"
)

// routes are the lifecycle's routes under the badges path (seed 4.4), behind the sign-in
// guard and role admin on the project, with the seed's answers; and the product catalogue.
func (s *Service) routes(g *guard.Guard, k bearer.Kit) []httpserver.Route {
	routes := s.life.Routes(g, k, lifecycle.Routes{
		Collection: "/v1/projects/:id/service-badges", ID: "badgeId", Me: "/v1/service-badges/me",
		Shape: lifecycle.Shape{
			Parse: func(c *fiber.Ctx) (lifecycle.Mint, error) {
				req, err := parseCreate(c.Body(), s.products)
				if err != nil {
					return lifecycle.Mint{}, err
				}
				return s.mint(c.UserContext(), guard.ProjectOf(c), req, c.Body())
			},
			Filter: s.filter,
			Roll: func(c *fiber.Ctx) (time.Duration, func(*lifecycle.Row, time.Time) error, error) {
				grace, err := lifecycle.Grace(c.Body())
				if err != nil {
					return 0, nil, err
				}
				may, err := s.mayRoll(c.UserContext(), guard.ProjectOf(c))
				return grace, may, err
			},
			Created: func(c *fiber.Ctx, is lifecycle.Issued) error { return c.Status(http.StatusCreated).JSON(s.answer(is)) },
			Listed:  s.listed,
			Revoked: func(c *fiber.Ctx, id string) error { return c.JSON(fiber.Map{"ok": true, "badgeId": id}) },
			Rolled: func(c *fiber.Ctx, r lifecycle.Rolled) error {
				body := s.answer(r.Issued)
				body["previousSecretExpiresAt"] = r.PreviousSecretExpiresAt
				return c.JSON(body)
			},
		},
	})
	return append(routes, httpserver.Route{Method: http.MethodGet, Path: "/v1/service-badges/products", Handlers: []fiber.Handler{g.Dashboard(), s.catalogue}})
}

// filter narrows the list to one product when ?product= names a mintable one; anything
// else is ignored (SPEC §6).
func (s *Service) filter(c *fiber.Ctx) []func(*sql.Selector) {
	f := c.Query("product")
	if p, ok := s.products.Get(f); ok {
		if mintable, _ := p.Mintable(); mintable {
			return []func(*sql.Selector){sql.FieldEQ(fieldProduct, f)}
		}
	}
	return nil
}

func (s *Service) listed(c *fiber.Ctx, rs []lifecycle.Record) error {
	descriptions := make(map[string]string, len(s.products.All()))
	for _, p := range s.products.All() {
		descriptions[p.Key()] = p.Description()
	}
	return c.JSON(fiber.Map{"badges": rs, "products": descriptions})
}

// catalogue lists every product with whether it can be minted now and, if not, why: what
// a console needs to offer the mintable ones and explain the rest.
func (s *Service) catalogue(c *fiber.Ctx) error {
	type entry struct {
		Key         string  `json:"key"`
		Description string  `json:"description"`
		Mintable    bool    `json:"mintable"`
		Reason      *string `json:"reason"`
	}
	out := make([]entry, 0, len(s.products.All()))
	for _, p := range s.products.All() {
		ok, reason := p.Mintable()
		e := entry{Key: p.Key(), Description: p.Description(), Mintable: ok}
		if !ok {
			e.Reason = &reason
		}
		out = append(out, e)
	}
	return c.JSON(fiber.Map{"products": out})
}

// answer is the create answer: the badge, its secret, and under each registered product's
// key that product's credentials — the badge's own, null for every other (so the seed's
// `s3` and `auth` are always there).
func (s *Service) answer(is lifecycle.Issued) fiber.Map {
	body := make(fiber.Map, len(s.products.All())+3)
	for _, k := range s.products.Keys() {
		body[k] = nil
	}
	body[is.Row.String(fieldProduct)] = is.Extra
	body["badge"], body["plaintext"] = lifecycle.Record{Row: is.Row}, is.Plaintext
	return body
}
