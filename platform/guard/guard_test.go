package guard_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/gofiber/fiber/v2"
	"go.uber.org/fx"

	"github.com/authcore/authcore/internal/testkit"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/logging"
	"github.com/authcore/authcore/platform/secret"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// tokens is a SessionVerifier over fixed access tokens: the guard's rules are tested
// here on their own; modules/session tests them again with real sessions.
type tokens map[string]identity.Principal

func (ts tokens) Authenticate(_ context.Context, tok string) (identity.Principal, error) {
	switch tok {
	case "not-ready":
		return identity.Principal{}, identity.ErrEngineNotReady
	case "revoked":
		return identity.Principal{}, &identity.VerifyError{Reason: identity.ReasonSessionRevoked}
	}
	p, ok := ts[tok]
	if !ok {
		return identity.Principal{}, &identity.VerifyError{Reason: identity.ReasonInvalidToken}
	}
	return p, nil
}

// roles is a Memberships where usr_admin administers prj_1.
type roles struct{}

func (roles) Role(_ context.Context, project, user string) (string, bool, error) {
	if project == "prj_1" && user == "usr_admin" {
		return identity.RoleAdmin, true, nil
	}
	if project == "prj_1" && user == "usr_dash" {
		return identity.RoleViewer, true, nil
	}
	return "", false, nil
}
func (roles) MemberIDs(context.Context, string) ([]string, error) { return nil, nil }

var (
	dash   = identity.Principal{UserID: "usr_dash", TenantID: identity.PublicTenant}
	admin  = identity.Principal{UserID: "usr_admin", TenantID: identity.PublicTenant}
	tenant = identity.Principal{UserID: "usr_tenant", TenantID: "prj_1"}
)

func graph(cfg config.Config, keys secret.MasterKeys, out logging.Output) fx.Option {
	return fx.Options(testkit.Core(cfg, keys, out), guard.Module,
		fx.Provide(
			fx.Annotate(func() tokens { return tokens{"dash": dash, "admin": admin, "tenant": tenant} }, fx.As(new(guard.SessionVerifier))),
			fx.Annotate(func() roles { return roles{} }, fx.As(new(identity.Memberships))),
		),
		httpserver.AsRoutes(routes))
}

func routes(g *guard.Guard) []httpserver.Route {
	who := func(c *fiber.Ctx) error {
		p, _ := guard.PrincipalOf(c)
		return c.JSON(fiber.Map{"userId": p.UserID, "project": guard.ProjectOf(c), "role": guard.RoleOf(c)})
	}
	h := func(hs ...fiber.Handler) []fiber.Handler { return hs }
	return []httpserver.Route{
		{Method: http.MethodGet, Path: "/test/dashboard", Handlers: h(g.Dashboard(), who)},
		{Method: http.MethodPost, Path: "/test/dashboard", Handlers: h(g.Dashboard(), who)},
		{Method: http.MethodGet, Path: "/test/session", Handlers: h(g.Session(), who)},
		{Method: http.MethodGet, Path: "/test/engine", Handlers: h(g.DashboardWith(map[string]any{"engine": "authcore"}), who)},
		{Method: http.MethodGet, Path: "/test/projects/:id", Handlers: h(g.Dashboard(), g.ProjectRole(identity.RoleAdmin, guard.FromPath, nil), who)},
		{Method: http.MethodPost, Path: "/test/revoke", Handlers: h(g.Dashboard(), g.ProjectRole(identity.RoleAdmin, guard.FromBodyThenQuery, nil), who)},
	}
}

func TestGuards(t *testing.T) {
	a := testkit.StartURL(t, "sqlite", "sqlite::memory:", graph)
	bearer := func(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }
	cookie := []*http.Cookie{{Name: guard.AccessCookie, Value: "dash"}}
	do := func(method, path string, h map[string]string, body any, cookies ...*http.Cookie) *testkit.Response {
		return a.Do(testkit.Req{Method: method, Path: path, Header: h, Body: body, Cookies: cookies})
	}

	cases := []struct {
		name   string
		res    *testkit.Response
		status int
		want   map[string]any
	}{
		{"header passes", do("GET", "/test/dashboard", bearer("dash"), nil), 200, map[string]any{"userId": "usr_dash"}},
		{"header change needs no Origin", do("POST", "/test/dashboard", bearer("dash"), nil), 200, nil},
		{"cookie passes a safe method", do("GET", "/test/dashboard", nil, nil, cookie...), 200, map[string]any{"userId": "usr_dash"}},
		{"cookie change without Origin is csrf_rejected", do("POST", "/test/dashboard", nil, nil, cookie...), 403, map[string]any{"code": "csrf_rejected"}},
		{"cookie change from a foreign Origin is csrf_rejected", do("POST", "/test/dashboard", map[string]string{"Origin": "https://evil.example.com"}, nil, cookie...), 403, map[string]any{"code": "csrf_rejected"}},
		{"cookie change from an allowed Origin passes", do("POST", "/test/dashboard", map[string]string{"Origin": "https://dashboard.example.com"}, nil, cookie...), 200, nil},
		{"cookie change from the server's own origin passes", do("POST", "/test/dashboard", map[string]string{"Origin": a.Base}, nil, cookie...), 200, nil},
		{"header wins over cookie", do("GET", "/test/dashboard", bearer("admin"), nil, cookie...), 200, map[string]any{"userId": "usr_admin"}},
		{"no credential is 401", do("GET", "/test/dashboard", nil, nil), 401, map[string]any{"code": "unauthorized"}},
		{"lower-case bearer is 401", do("GET", "/test/dashboard", map[string]string{"Authorization": "bearer dash"}, nil), 401, map[string]any{"code": "unauthorized"}},
		{"empty bearer is 401", do("GET", "/test/dashboard", map[string]string{"Authorization": "Bearer   "}, nil), 401, map[string]any{"code": "unauthorized"}},
		{"unknown token is 401", do("GET", "/test/dashboard", bearer("nope"), nil), 401, map[string]any{"code": "unauthorized"}},
		{"revoked session is 401", do("GET", "/test/dashboard", bearer("revoked"), nil), 401, map[string]any{"code": "unauthorized"}},
		{"engine not ready is 503", do("GET", "/test/dashboard", bearer("not-ready"), nil), 503, map[string]any{"code": "auth_core_sdk_not_ready"}},
		{"a tenant's user is not a dashboard user", do("GET", "/test/dashboard", bearer("tenant"), nil), 401, map[string]any{"code": "unauthorized"}},
		{"the session guard admits any tenant", do("GET", "/test/session", bearer("tenant"), nil), 200, map[string]any{"userId": "usr_tenant"}},
		{"rejections can carry engine", do("GET", "/test/engine", nil, nil), 401, map[string]any{"code": "unauthorized", "engine": "authcore"}},
		{"admin of the path's project passes", do("GET", "/test/projects/prj_1", bearer("admin"), nil), 200, map[string]any{"project": "prj_1", "role": "admin"}},
		{"a lower role is 403", do("GET", "/test/projects/prj_1", bearer("dash"), nil), 403, map[string]any{"code": "forbidden"}},
		{"another project is 403", do("GET", "/test/projects/prj_2", bearer("admin"), nil), 403, map[string]any{"code": "forbidden"}},
		{"project from the body", do("POST", "/test/revoke", bearer("admin"), map[string]any{"projectId": "prj_1"}), 200, map[string]any{"project": "prj_1"}},
		{"project from the query when the body has none", do("POST", "/test/revoke?projectId=prj_1", bearer("admin"), "not json"), 200, map[string]any{"project": "prj_1"}},
		{"the body wins over the query", do("POST", "/test/revoke?projectId=prj_1", bearer("admin"), map[string]any{"projectId": "prj_2"}), 403, nil},
		{"no project id is 403", do("POST", "/test/revoke", bearer("admin"), nil), 403, map[string]any{"code": "forbidden"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.res.Expect(t, c.status, c.want) })
	}
}
