package federation_test

import (
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/authcore/authcore/ent/federationflow"
	"github.com/authcore/authcore/internal/apptest"
)

// What an attacker, a broken upstream or a stale tab may bring back to the callback is
// refused, with a page for the person and nothing written (SPEC §20).
func TestCallbackRefusals(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		p := w.addProvider(t, nil)
		fresh := func(t *testing.T) string { return w.account(t, apptest.UniqueEmail(t), true).Login }
		refusal := func(t *testing.T, res *http.Response, status int, code string) {
			t.Helper()
			page := body(t, res)
			if res.StatusCode != status || !strings.Contains(page, code) || cookie(res, "sAccessToken") != "" {
				t.Fatalf("want %d %s; got %d %s", status, code, res.StatusCode, page)
			}
			if !strings.Contains(res.Header.Get("Content-Type"), "text/html") || res.Header.Get("X-Frame-Options") != "DENY" {
				t.Fatalf("a refusal page: %v", res.Header)
			}
		}
		// stopAt runs the upstream part and returns the callback URL it was sent to,
		// without following it.
		stopAt := func(t *testing.T, pr *person, login string) string {
			t.Helper()
			inner := pr.http.CheckRedirect
			pr.http.CheckRedirect = func(req *http.Request, via []*http.Request) error {
				if strings.HasSuffix(req.URL.Path, "/callback") {
					return http.ErrUseLastResponse
				}
				return inner(req, via)
			}
			defer func() { pr.http.CheckRedirect = inner }()
			res := pr.via(p.Start, login)
			res.Body.Close()
			return res.Header.Get("Location")
		}

		t.Run("tampered state", func(t *testing.T) {
			pr := newPerson(t)
			cb := stopAt(t, pr, fresh(t))
			u, _ := url.Parse(cb)
			q := u.Query()
			q.Set("state", q.Get("state")+"x")
			u.RawQuery = q.Encode()
			res, _ := pr.http.Get(u.String())
			refusal(t, res, 400, "invalid_state")
			// The genuine state still works once: the tampered one spent nothing.
			res, _ = pr.http.Get(cb)
			if res.StatusCode != http.StatusFound || cookie(res, "sAccessToken") == "" {
				t.Fatalf("the genuine callback: %d %s", res.StatusCode, body(t, res))
			}
		})
		t.Run("replayed callback", func(t *testing.T) {
			pr := newPerson(t)
			res := pr.via(p.Start, fresh(t))
			if cookie(res, "sAccessToken") == "" {
				t.Fatalf("first use: %d %s", res.StatusCode, body(t, res))
			}
			res, _ = pr.http.Get(pr.Callback)
			refusal(t, res, 400, "invalid_state")
		})
		t.Run("callback in another browser", func(t *testing.T) {
			cb := stopAt(t, newPerson(t), fresh(t))
			res, _ := newPerson(t).http.Get(cb)
			refusal(t, res, 400, "invalid_state")
		})
		t.Run("no state", func(t *testing.T) {
			res, _ := newPerson(t).http.Get(w.a.Base + "/v1/auth-core/providers/" + p.ID + "/callback?code=abc")
			refusal(t, res, 400, "invalid_state")
		})
		t.Run("person said no upstream", func(t *testing.T) {
			pr := newPerson(t)
			cb := stopAt(t, pr, fresh(t))
			u, _ := url.Parse(cb)
			q := u.Query()
			q.Del("code")
			q.Set("error", "access_denied")
			u.RawQuery = q.Encode()
			res, _ := pr.http.Get(u.String())
			refusal(t, res, 400, "upstream_refused")
		})
		t.Run("iss of another issuer", func(t *testing.T) {
			pr := newPerson(t)
			cb := stopAt(t, pr, fresh(t))
			u, _ := url.Parse(cb)
			q := u.Query()
			q.Set("iss", "https://evil.example")
			u.RawQuery = q.Encode()
			res, _ := pr.http.Get(u.String())
			refusal(t, res, 401, "invalid_id_token")
		})
		for _, c := range []struct{ mode, why string }{
			{"wrong_nonce", "the nonce is not the one sent"},
			{"other_issuer", "signed by another issuer's key, with its iss"},
			{"other_issuer_our_key", "the upstream's key, another iss"},
			{"alg_none", "alg none, unsigned"},
			{"expired", "exp an hour ago"},
			{"other_audience", "aud another client"},
		} {
			t.Run("id_token "+c.mode, func(t *testing.T) {
				q := w.addProvider(t, nil)
				w.up.Tamper(t, q.ClientID, c.mode)
				email := apptest.UniqueEmail(t)
				res := newPerson(t).via(q.Start, w.account(t, email, true).Login)
				refusal(t, res, 401, "invalid_id_token")
				if w.users(t, email) != 0 {
					t.Fatalf("%s: a user was created", c.why)
				}
			})
		}
		t.Run("token endpoint down", func(t *testing.T) {
			q := w.addProvider(t, nil)
			w.up.Tamper(t, q.ClientID, "unavailable")
			email := apptest.UniqueEmail(t)
			res := newPerson(t).via(q.Start, w.account(t, email, true).Login)
			refusal(t, res, 503, "upstream_unavailable")
			if w.users(t, email) != 0 {
				t.Fatal("a user was created")
			}
			// As JSON for an API client.
			res = newPerson(t).via(q.Start, w.account(t, email, true).Login)
			res.Body.Close()
		})
		t.Run("discovery down", func(t *testing.T) {
			ln, _ := net.Listen("tcp", "127.0.0.1:0")
			closed := "http://" + ln.Addr().String()
			ln.Close() // nothing listens there now
			q := w.addProvider(t, map[string]any{"issuer": closed})
			before := w.a.Ent.FederationFlow.Query().Where(federationflow.ProviderID(q.ID)).CountX(t.Context())
			req, _ := http.NewRequest(http.MethodGet, q.Start, nil)
			req.Header.Set("Accept", "text/html")
			res, err := newPerson(t).http.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			refusal(t, res, 503, "upstream_unavailable")
			w.a.Get("/v1/auth-core/providers/"+q.ID+"/start", "Accept", "application/json").Expect(t, 503, map[string]any{"code": "upstream_unavailable"})
			if after := w.a.Ent.FederationFlow.Query().Where(federationflow.ProviderID(q.ID)).CountX(t.Context()); after != before {
				t.Fatal("a flow was written for an upstream that cannot be reached")
			}
		})
		t.Run("start refusals", func(t *testing.T) {
			w.a.Get("/v1/auth-core/providers/idp_nope/start", "Accept", "application/json").Expect(t, 404, map[string]any{"code": "provider_not_found"})
			w.a.Get("/v1/auth-core/providers/"+p.ID+"/start?redirect=https://evil.example/x", "Accept", "application/json").Expect(t, 400, map[string]any{"code": "validation_failed"})
			w.a.Get("/v1/auth-core/providers/"+p.ID+"/start?redirect=//evil.example", "Accept", "application/json").Expect(t, 400, nil)
			w.a.Get("/v1/auth-core/providers/"+p.ID+"/start?redirect=/v1/auth-core/signout", "Accept", "application/json").Expect(t, 400, nil)
			q := w.addProvider(t, nil)
			w.a.Do(apptest.Req{Method: http.MethodPatch, Path: "/v1/projects/" + w.project + "/auth/providers/" + q.ID, Header: w.admin.Bearer(),
				Body: map[string]any{"enabled": false}}).Expect(t, 200, map[string]any{"enabled": false})
			w.a.Get("/v1/auth-core/providers/"+q.ID+"/start", "Accept", "application/json").Expect(t, 403, map[string]any{"code": "provider_disabled"})
			// An allowed origin's URL is a fine place to land.
			noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			res, err := noFollow.Get(w.a.Base + "/v1/auth-core/providers/" + p.ID + "/start?redirect=https://dashboard.example.com/after")
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusFound || !strings.HasPrefix(res.Header.Get("Location"), w.up.Issuer+"/auth?") {
				t.Fatalf("start: %d %v", res.StatusCode, res.Header)
			}
			loc, _ := url.Parse(res.Header.Get("Location"))
			aq := loc.Query()
			if aq.Get("code_challenge_method") != "S256" || len(aq.Get("code_challenge")) != 43 || aq.Get("nonce") == "" || aq.Get("state") == "" ||
				aq.Get("scope") != "openid email profile" || aq.Get("redirect_uri") != w.a.Config.PublicURL+"/v1/auth-core/providers/"+p.ID+"/callback" {
				t.Fatalf("authorization request %v", aq)
			}
		})
	})
}
