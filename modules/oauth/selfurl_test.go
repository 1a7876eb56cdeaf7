package oauth_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/platform/config"
)

// SPEC §9a: metadata, issuers and a badge's tokenUrl come from the configured public URL,
// whatever Host or X-Forwarded-Host a request carries.
func TestServerURLNeverFromTheRequest(t *testing.T) {
	forged := map[string]string{"Host": "evil.example", "X-Forwarded-Host": "evil.example", "X-Forwarded-Proto": "https"}
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := apptest.Start(t, st, apptest.WithConfig(func(c *config.Config) { c.PublicURL = "https://auth.example.com" }))
		admin := a.SignUp(t)
		prj := a.CreateProject(t, admin)

		t.Run("metadata under a forged Host names the public URL and may be cached", func(t *testing.T) {
			r := a.Do(apptest.Req{Path: "/.well-known/oauth-authorization-server", Header: forged})
			r.Expect(t, 200, map[string]any{"issuer": "https://auth.example.com", "token_endpoint": "https://auth.example.com/v1/oauth/token"})
			if strings.Contains(string(r.Body), "evil") || r.Header.Get("Cache-Control") != "public, max-age=300" {
				t.Fatalf("%s %v", r.Body, r.Header)
			}
		})
		t.Run("a badge's tokenUrl is the public URL's", func(t *testing.T) {
			got := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + prj + "/service-badges",
				Body: map[string]any{"name": "m2m", "product": "auth"}, Header: merge(admin.Bearer(), forged)}).Expect(t, 201, nil)
			if u := got["auth"].(map[string]any)["tokenUrl"]; u != "https://auth.example.com/v1/oauth/token" {
				t.Fatalf("tokenUrl %v", u)
			}
		})
		t.Run("session tokens signed under a forged Host carry the public URL as iss", func(t *testing.T) {
			r := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signin", Header: forged,
				Body: map[string]any{"email": admin.Email, "password": admin.Password}}).Expect(t, 200, nil)
			me := a.Do(apptest.Req{Path: "/v1/auth-core/session/me", Header: map[string]string{"Authorization": "Bearer " + r["session"].(map[string]any)["accessToken"].(string)}}).Expect(t, 200, nil)
			if iss := me["accessTokenPayload"].(map[string]any)["iss"]; iss != "https://auth.example.com" {
				t.Fatalf("iss %v", iss)
			}
		})
		t.Run("an exchanged token's iss and default aud are the public URL's", func(t *testing.T) {
			secret, _ := agent(t, a, admin, prj, []string{"files:*"}, 1)
			r := post(a, url.Values{"grant_type": {grantExchange}, "subject_token": {secret}, "subject_token_type": {accessType}}, forged).Expect(t, 200, nil)
			c := claimsOf(t, r["access_token"].(string))
			if c["iss"] != "https://auth.example.com" || c["aud"] != "https://auth.example.com" {
				t.Fatalf("%v", c)
			}
		})
	})
	t.Run("without a public URL metadata is not cached publicly", func(t *testing.T) {
		a := apptest.StartURL(t, "sqlite", "sqlite::memory:", apptest.WithConfig(func(c *config.Config) { c.PublicURL = "" }))
		r := a.Do(apptest.Req{Path: "/.well-known/oauth-authorization-server", Header: forged})
		r.Expect(t, 200, nil)
		if strings.Contains(string(r.Body), "evil") || strings.Contains(r.Header.Get("Cache-Control"), "public") ||
			!strings.Contains(string(r.Body), `"issuer":"http://localhost:`) {
			t.Fatalf("%s %v", r.Body, r.Header)
		}
	})
}
