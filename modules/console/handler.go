package console

import (
	"embed"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/lifecycle"
)

//go:embed web
var files embed.FS

// policy allows nothing but this origin: no inline script or style, no other host, no
// framing. The page needs no more.
const policy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// routes are the page (where mailed links land too), its assets, the redirect from / and
// the screens of the credential kinds.
func routes(g *guard.Guard, s lifecycle.Screens) []httpserver.Route {
	web, _ := fs.Sub(files, "web") // cannot fail: web is embedded
	index, _ := fs.ReadFile(web, "index.html")
	page := func(c *fiber.Ctx) error {
		secure(c)
		c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
		return c.Send(index)
	}
	asset := func(c *fiber.Ctx) error {
		name := path.Clean(c.Params("file"))
		b, err := fs.ReadFile(web, "assets/"+name)
		if err != nil {
			return apperr.NotFound("no such file")
		}
		secure(c)
		c.Set(fiber.HeaderContentType, mime.TypeByExtension(path.Ext(name)))
		return c.Send(b)
	}
	var routes []httpserver.Route
	// The reset, verify and invite pages are where mailed links land, the authorize page where the
	// OAuth authorization endpoint sends a person (SPEC §16); the page reads the path.
	// A mailed sign-in link and a postmaster's domain proof land on pages too (SPEC §20),
	// and an org's setup link (SPEC §26).
	for _, p := range []string{"/console", "/console/reset", "/console/verify", "/console/invite", "/console/authorize", "/console/signin-link", "/console/domain", "/console/device", "/console/setup", "/console/org-invite"} {
		routes = append(routes, httpserver.Route{Method: http.MethodGet, Path: p, Handlers: []fiber.Handler{page}})
	}
	return append(routes,
		httpserver.Route{Method: http.MethodGet, Path: "/console/assets/:file", Handlers: []fiber.Handler{asset}},
		httpserver.Route{Method: http.MethodGet, Path: "/v1/console/screens", Handlers: []fiber.Handler{g.Dashboard(), screens(s.All)}},
		httpserver.Route{Method: http.MethodGet, Path: "/", Handlers: []fiber.Handler{func(c *fiber.Ctx) error {
			return c.Redirect("/console", http.StatusFound)
		}}},
	)
}

// screens answers the screens the credential kinds contribute, by title: the console
// learns them as it learns products from the catalogue, so a kind added as a module is
// on the console with no change here.
func screens(all []lifecycle.Screen) fiber.Handler {
	all = slices.Clone(all)
	slices.SortFunc(all, func(a, b lifecycle.Screen) int { return strings.Compare(a.Title, b.Title) })
	return func(c *fiber.Ctx) error { return c.JSON(fiber.Map{"screens": all}) }
}

// secure sets the headers every console answer carries: the page's own policy, the rest
// as on every server-rendered page.
func secure(c *fiber.Ctx) {
	httpserver.SecurePage(c, policy)
	c.Set(fiber.HeaderCacheControl, "no-cache")
}
