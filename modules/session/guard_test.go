package session_test

import (
	"net/http"
	"testing"

	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
)

// dashboardRoutes is a test-only route behind the dashboard guard, answering who passed.
func dashboardRoutes(g *guard.Guard) []httpserver.Route {
	who := func(c *fiber.Ctx) error {
		p, _ := guard.PrincipalOf(c)
		return c.JSON(fiber.Map{"userId": p.UserID})
	}
	return []httpserver.Route{
		{Method: http.MethodGet, Path: "/test/dashboard", Handlers: []fiber.Handler{g.Dashboard(), who}},
		{Method: http.MethodPost, Path: "/test/dashboard", Handlers: []fiber.Handler{g.Dashboard(), who}},
		{Method: http.MethodGet, Path: "/test/engine", Handlers: []fiber.Handler{g.DashboardWith(map[string]any{"engine": "authcore"}), who}},
	}
}

func TestDashboardGuard(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := apptest.Start(t, st, apptest.WithFx(httpserver.AsRoutes(dashboardRoutes)))
		dash := a.SignUp(t)
		tenantUser := a.SignUpIn(t, a.CreateProject(t, dash))
		var access *http.Cookie
		for _, c := range dash.Cookies {
			if c.Name == "sAccessToken" {
				access = &http.Cookie{Name: c.Name, Value: c.Value}
			}
		}
		req := func(method string, header map[string]string, cookies ...*http.Cookie) *apptest.Response {
			return a.Do(apptest.Req{Method: method, Path: "/test/dashboard", Header: header, Cookies: cookies})
		}

		t.Run("dashboard user by header passes", func(t *testing.T) {
			req("GET", dash.Bearer()).Expect(t, 200, map[string]any{"userId": dash.UserID})
			req("POST", dash.Bearer()).Expect(t, 200, map[string]any{"userId": dash.UserID}) // no CSRF check for headers
		})
		t.Run("dashboard user by cookie passes a safe method", func(t *testing.T) {
			req("GET", nil, access).Expect(t, 200, map[string]any{"userId": dash.UserID})
		})
		t.Run("cookie change without Origin is 403 csrf_rejected", func(t *testing.T) {
			req("POST", nil, access).Expect(t, 403, map[string]any{"code": "csrf_rejected"})
		})
		t.Run("cookie change from a foreign Origin is 403 csrf_rejected", func(t *testing.T) {
			req("POST", map[string]string{"Origin": "https://evil.example.com"}, access).Expect(t, 403, map[string]any{"code": "csrf_rejected"})
		})
		t.Run("cookie change from an allowed Origin passes", func(t *testing.T) {
			req("POST", map[string]string{"Origin": "https://dashboard.example.com"}, access).Expect(t, 200, nil)
		})
		t.Run("a tenant's user is 401", func(t *testing.T) {
			req("GET", tenantUser.Bearer()).Expect(t, 401, map[string]any{"code": "unauthorized"})
		})
		t.Run("no credential is 401", func(t *testing.T) {
			req("GET", nil).Expect(t, 401, map[string]any{"code": "unauthorized"})
		})
		t.Run("lower-case bearer is 401", func(t *testing.T) {
			req("GET", map[string]string{"Authorization": "bearer " + dash.AccessToken}).Expect(t, 401, map[string]any{"code": "unauthorized"})
		})
		t.Run("rejections can carry engine", func(t *testing.T) {
			a.Get("/test/engine").Expect(t, 401, map[string]any{"code": "unauthorized", "engine": "authcore"})
		})
	})
}
