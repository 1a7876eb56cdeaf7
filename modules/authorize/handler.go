package authorize

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/credential"
	"github.com/authcore/authcore/platform/dpop"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/oauth"
	"github.com/authcore/authcore/platform/policy"
	"github.com/authcore/authcore/platform/ratelimit"
	"github.com/authcore/authcore/platform/resource"
	"github.com/authcore/authcore/platform/secret"
)

// handler serves the routes.
type handler struct {
	ent       *ent.Client
	cfg       config.Config
	clock     clock.Clock
	clients   *clients
	grants    *grants
	resources resource.Registry
	members   identity.Memberships
	policies  policy.Source
	keys      *secret.Keyring
	limits    *ratelimit.Limiters
	guard     *guard.Guard
	verifier  oauth.Verifier
	kinds     *credential.Registry
	users     identity.Users
	sessions  identity.Sessions
	dpop      *dpop.Checker
	// appSessions joins SSO sessions to the apps they sign in to (modules/logout).
	appSessions oauth.AppSessions
	clientAuth  oauth.ClientAuthenticator
	svc         *service
	// wrong is the device flow's budget of wrong user codes.
	wrong *wrongTries
}

func (h *handler) routes() []httpserver.Route {
	// A request's page is decided by its tenant's people (SPEC §25); a person's own grants
	// are listed to them whichever tenant they belong to.
	person := []fiber.Handler{h.requestGuard(h.guard.Dashboard(), h.guard.Session())}
	anyone := []fiber.Handler{h.guard.Session()}
	admin := []fiber.Handler{h.guard.Dashboard(), h.guard.ProjectRole(identity.RoleAdmin, guard.FromPath, nil)}
	const (
		request = requestsPath + "/:id"
		mine    = "/v1/auth-core/oauth/grants"
		project = "/v1/projects/:id/oauth/grants"
	)
	return append([]httpserver.Route{
		{Method: http.MethodGet, Path: oauth.AuthorizePath, Handlers: []fiber.Handler{h.authorize}},
		{Method: http.MethodGet, Path: oauth.UserinfoPath, Handlers: []fiber.Handler{h.userinfo}},
		{Method: http.MethodPost, Path: oauth.UserinfoPath, Handlers: []fiber.Handler{h.userinfo}},
		{Method: http.MethodGet, Path: oauth.EndSessionPath, Handlers: []fiber.Handler{h.logout}},
		{Method: http.MethodPost, Path: oauth.EndSessionPath, Handlers: []fiber.Handler{h.logout}},
		{Method: http.MethodPost, Path: oauth.RegisterPath, Handlers: []fiber.Handler{h.register}},
		{Method: http.MethodGet, Path: request, Handlers: append(person, h.consent)},
		{Method: http.MethodPost, Path: request, Handlers: append(person, h.decide)},
		{Method: http.MethodGet, Path: mine, Handlers: append(anyone, h.mine)},
		{Method: http.MethodDelete, Path: mine + "/:grantId", Handlers: append(anyone, h.revokeMine)},
		{Method: http.MethodGet, Path: project, Handlers: append(admin, h.project)},
		{Method: http.MethodDelete, Path: project + "/:grantId", Handlers: append(admin, h.revokeProject)},
		{Method: http.MethodPost, Path: deviceAuthPath, Handlers: []fiber.Handler{(devices{h}).deviceAuthorization}},
		{Method: http.MethodPost, Path: "/v1/oauth/device/lookup", Handlers: append(anyone, (devices{h}).deviceLookup)},
		{Method: http.MethodPost, Path: "/v1/oauth/device/decide", Handlers: append(anyone, (devices{h}).deviceDecide)},
	}, (appAdmin{h}).appRoutes(admin)...)
}

// requestGuard admits a request's page to the session its tenant wants: a tenant session
// (session) for an app's request, which pending then holds to the app's project, and a
// dashboard session (dashboard, with its verified-email rule) for any other.
func (h *handler) requestGuard(dashboard, session fiber.Handler) fiber.Handler {
	return func(c *fiber.Ctx) error {
		row, err := h.ent.OAuthAuthorization.Get(c.UserContext(), c.Params("id"))
		if err == nil && h.tenantOf(c.UserContext(), row) != identity.PublicTenant {
			return session(c)
		}
		return dashboard(c)
	}
}

// The handler's parts by concern, each the handler seen through its own type, so that no
// one type carries every helper of the module (cmd/authcore/app TestModuleTypesStaySmall).
type (
	// devices serves the device authorization grant (RFC 8628).
	devices struct{ *handler }
	// appAdmin serves a project's apps and initial access tokens (SPEC §25).
	appAdmin struct{ *handler }
	// ssoCookies reads and writes the browser's SSO sessions of projects (SPEC §25).
	ssoCookies struct{ *handler }
)
