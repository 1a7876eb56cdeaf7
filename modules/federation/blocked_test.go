package federation_test

import (
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/platform/config"
)

// A person a project admin blocks (SPEC §25) is refused by every way in with the same 403
// user_blocked — password, mailed code, mailed link, passkey alone, a provider — because
// the session engine asks one rule before every session; unblocked, they sign in again.
func TestBlockedEveryWayIn(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st, apptest.WithConfig(func(c *config.Config) {
			_, port, _ := net.SplitHostPort(c.Addr)
			c.PublicURL = "http://localhost:" + port // WebAuthn takes no IP address for a relying party
		}))
		idp := w.addProvider(t, map[string]any{"name": "Corp"})
		idp.Start = strings.Replace(idp.Start, w.a.Base, w.a.Config.PublicURL, 1)
		w.a.Do(apptest.Req{Method: http.MethodPut, Path: "/v1/projects/" + w.project + "/auth/methods", Header: w.admin.Bearer(),
			Body: map[string]any{"password": true, "emailLink": true}}).Expect(t, 200, nil)

		alice := "alice-" + rnd(3) + "@example.com"
		aliceID, access := w.signUpIn(t, alice)
		passkey := w.passkeyOf(t, aliceID, access)
		w.mailRequest(t, alice).Expect(t, 202, nil)
		_, link := w.waitMail(t, alice, 1)
		w.mailRequest(t, alice).Expect(t, 202, nil)
		code, _ := w.waitMail(t, alice, 2)
		bob := w.account(t, "bob-"+rnd(3)+"@example.com", true)
		if res := newPerson(t).via(idp.Start, bob.Login); cookie(res, "sAccessToken") == "" {
			t.Fatalf("bob's first sign-in through the provider: %d %s", res.StatusCode, body(t, res))
		}
		users := "/v1/projects/" + w.project + "/users"
		found := w.a.Do(apptest.Req{Method: http.MethodGet, Path: users + "?query=" + url.QueryEscape(bob.Email), Header: w.admin.Bearer()}).Expect(t, 200, nil)["users"].([]any)
		if len(found) != 1 {
			t.Fatalf("bob is not found once: %v", found)
		}
		bobID := found[0].(map[string]any)["id"].(string)
		block := func(id string, blocked bool) {
			w.a.Do(apptest.Req{Method: http.MethodPatch, Path: users + "/" + id, Header: w.admin.Bearer(), Body: map[string]any{"blocked": blocked}}).
				Expect(t, 200, map[string]any{"blocked": blocked})
		}
		block(aliceID, true)
		block(bobID, true)
		want := map[string]any{"code": "user_blocked"}

		t.Run("password", func(t *testing.T) {
			w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signin",
				Body: map[string]any{"email": alice, "password": "correct horse battery", "tenantId": w.project}}).Expect(t, 403, want)
		})
		t.Run("email code", func(t *testing.T) {
			w.mailSignIn(t, map[string]any{"email": alice, "code": code, "tenantId": w.project}).Expect(t, 403, want)
		})
		t.Run("email link", func(t *testing.T) {
			w.mailSignIn(t, map[string]any{"token": link}).Expect(t, 403, want)
		})
		t.Run("passkey alone", func(t *testing.T) {
			passkey(t).Expect(t, 403, want)
		})
		t.Run("provider", func(t *testing.T) {
			res := newPerson(t).via(idp.Start, bob.Login)
			if p := body(t, res); res.StatusCode != http.StatusForbidden || cookie(res, "sAccessToken") != "" || !strings.Contains(p, "user_blocked") {
				t.Fatalf("want 403 user_blocked; got %d %s", res.StatusCode, p)
			}
		})
		t.Run("unblocked", func(t *testing.T) {
			block(aliceID, false)
			block(bobID, false)
			// (The virtual passkey's counter was spent by the refused sign-in above.)
			w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signin",
				Body: map[string]any{"email": alice, "password": "correct horse battery", "tenantId": w.project}}).Expect(t, 200, nil)
			if res := newPerson(t).via(idp.Start, bob.Login); cookie(res, "sAccessToken") == "" {
				t.Fatalf("bob after unblocking: %d %s", res.StatusCode, body(t, res))
			}
		})
	})
}
