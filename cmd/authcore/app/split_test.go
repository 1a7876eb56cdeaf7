package app_test

import (
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/platform/config"
)

// overlayModules is AUTHCORE_MODULES as the split overlay (deploy/overlays/split) sets it
// for half: the test runs what ships.
func overlayModules(t *testing.T, half string) []string {
	t.Helper()
	b, err := os.ReadFile("../../../deploy/overlays/split/" + half + "/kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`name: AUTHCORE_MODULES\s+value: (\S+)`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("the %s half of the split overlay sets no AUTHCORE_MODULES", half)
	}
	return strings.Split(string(m[1]), ",")
}

// rawStatus sends a request outside the OpenAPI check: a route the other half serves is
// documented, but not with the 404 this half must answer.
func rawStatus(t *testing.T, a *apptest.App, method, path string) int {
	t.Helper()
	req, err := http.NewRequest(method, a.Base+path, strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := a.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode == http.StatusNotFound && !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		t.Errorf("%s %s: a 404 without a JSON body", method, path)
	}
	return res.StatusCode
}

// SPEC §18: AUTHCORE_MODULES splits one deployment into two of the same binary: each
// answers 404 for the other half's routes, and they share sessions and revocations.
func TestSplitDeployment(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		if st.Name != "postgres" {
			t.Skip("two processes share revocations through PostgreSQL NOTIFY")
		}
		url := st.URL(t)
		modules := func(m []string) apptest.Option {
			return apptest.WithConfig(func(c *config.Config) { c.Modules = m })
		}
		signIn := apptest.StartURL(t, st.Name, url, modules(overlayModules(t, "signin")))
		verify := apptest.StartURL(t, st.Name, url, modules(overlayModules(t, "verify")))

		// Each half refuses the other's routes, and serves the platform's.
		for _, r := range []struct{ method, path string }{
			{"POST", "/v1/auth-core/signin"}, {"POST", "/v1/auth-core/signup"}, {"POST", "/v1/auth-core/password/reset-request"},
			{"POST", "/v1/auth-core/mfa/verify"}, {"GET", "/console/"}, {"GET", "/console/assets/app.js"},
		} {
			if got := rawStatus(t, verify, r.method, r.path); got != 404 {
				t.Errorf("verification half: %s %s answered %d, want 404", r.method, r.path, got)
			}
		}
		for _, r := range []struct{ method, path string }{
			{"GET", "/v1/auth-core/ai/me"}, {"GET", "/v1/service-badges/me"}, {"POST", "/v1/s3/verify"},
			{"POST", "/v1/oauth/introspect"}, {"POST", "/v1/oauth/token"}, {"GET", "/v1/auth-core/projects"},
		} {
			if got := rawStatus(t, signIn, r.method, r.path); got != 404 {
				t.Errorf("sign-in half: %s %s answered %d, want 404", r.method, r.path, got)
			}
		}
		for _, a := range []*apptest.App{signIn, verify} {
			for _, p := range []string{"/healthz", "/readyz", "/metrics"} {
				if got := rawStatus(t, a, "GET", p); got != 200 {
					t.Errorf("%s answered %d on a split process", p, got)
				}
			}
		}
		if metric(t, signIn, `authcore_module_served{module="account"}`) != 1 || metric(t, verify, `authcore_module_served{module="agenttoken"}`) != 1 {
			t.Error("authcore_module_served does not name the served modules")
		}

		// A session started by the sign-in half is good on the verification half, which
		// administers with it too.
		admin := signIn.SignUp(t)
		verify.Get("/v1/auth-core/session/me", "Authorization", "Bearer "+admin.AccessToken).Expect(t, 200, nil)
		prj := verify.CreateProject(t, admin)
		token, _ := mintAgent(t, verify, admin, prj)
		if aiMe(verify, token) != 200 {
			t.Fatal("the verification half does not verify its own token")
		}

		// Signing out on the sign-in half ends the session on the verification half.
		signIn.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signout", Header: admin.Bearer()}).Expect(t, 200, nil)
		eventually(t, "the verification half refuses the signed-out session", time.Second, func() bool {
			return verify.Get("/v1/auth-core/session/me", "Authorization", "Bearer "+admin.AccessToken).Status == 401
		})
	})
}
