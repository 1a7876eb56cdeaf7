package authorize_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/authcore/authcore/internal/apptest"
)

// Every rule of the authorization endpoint (SPEC §16), each in its own case: errors about
// the client or its redirect URI are a page and never a redirect; later ones go back to
// the client with state and iss.
func TestAuthorizationEndpoint(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		a := w.a
		const redirect = "http://127.0.0.1/callback"
		client := register(t, a, redirect)
		issuer := w.issuer(t)
		good := func() *flow {
			f := newFlow(client, "http://127.0.0.1:41234/callback") // loopback: any port (RFC 8252 §7.3)
			f.extra.Set("resource", w.mcp.URL)
			f.extra.Set("scope", "tools:call")
			return f
		}
		page := func(t *testing.T, q url.Values, says string) {
			t.Helper()
			res, err := noFollow.Get(a.Base + "/oauth/authorize?" + q.Encode())
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != 400 || res.Header.Get("Location") != "" || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") ||
				res.Header.Get("X-Frame-Options") != "DENY" || !strings.Contains(string(body), says) {
				t.Fatalf("answered %d, Location %q, %s: %s", res.StatusCode, res.Header.Get("Location"), res.Header.Get("Content-Type"), body)
			}
		}
		back := func(t *testing.T, f *flow, q url.Values, code string) {
			t.Helper()
			res := authorize(t, a, q)
			if res.StatusCode != http.StatusFound {
				t.Fatalf("answered %d", res.StatusCode)
			}
			got := backQuery(t, f, res.Header.Get("Location"))
			if got.Get("error") != code || got.Get("state") != f.state || got.Get("iss") != issuer {
				t.Fatalf("sent back %v, want error %s with state and iss %s", got, code, issuer)
			}
		}

		t.Run("no client_id is a page", func(t *testing.T) {
			q := good().query()
			q.Del("client_id")
			page(t, q, "names no client")
		})
		t.Run("an unknown client is a page", func(t *testing.T) {
			q := good().query()
			q.Set("client_id", "dcr_01NOPE")
			page(t, q, "no client is registered")
		})
		t.Run("a client_id that is neither is a page", func(t *testing.T) {
			q := good().query()
			q.Set("client_id", "http://example.com/client.json")
			page(t, q, "https URL of a client metadata document")
		})
		t.Run("an unregistered redirect_uri is a page, never a redirect", func(t *testing.T) {
			q := good().query()
			q.Set("redirect_uri", "https://attacker.example/callback")
			page(t, q, "not one this client registered")
			q.Set("redirect_uri", "http://127.0.0.1:41234/other")
			page(t, q, "not one this client registered")
			q.Set("redirect_uri", "http://localhost:41234/callback") // not the registered loopback literal
			page(t, q, "not one this client registered")
		})
		t.Run("a repeated redirect_uri is a page", func(t *testing.T) {
			q := good().query()
			q.Add("redirect_uri", redirect)
			page(t, q, "more than once")
		})
		t.Run("response_type other than code goes back", func(t *testing.T) {
			f := good()
			q := f.query()
			q.Set("response_type", "token")
			back(t, f, q, "unsupported_response_type")
		})
		t.Run("no code_challenge goes back", func(t *testing.T) {
			f := good()
			q := f.query()
			q.Del("code_challenge")
			back(t, f, q, "invalid_request")
		})
		t.Run("a plain PKCE challenge goes back", func(t *testing.T) {
			f := good()
			q := f.query()
			q.Set("code_challenge_method", "plain")
			q.Set("code_challenge", f.verifier)
			back(t, f, q, "invalid_request")
		})
		t.Run("no code_challenge_method goes back", func(t *testing.T) {
			f := good()
			q := f.query()
			q.Del("code_challenge_method")
			back(t, f, q, "invalid_request")
		})
		t.Run("a malformed scope goes back", func(t *testing.T) {
			f := good()
			q := f.query()
			q.Set("scope", "Tools:Call")
			back(t, f, q, "invalid_scope")
		})
		t.Run("a scope the resource does not allow goes back", func(t *testing.T) {
			f := good()
			q := f.query()
			q.Set("scope", "files:write")
			back(t, f, q, "invalid_scope")
		})
		t.Run("an unregistered resource goes back", func(t *testing.T) {
			f := good()
			q := f.query()
			q.Set("resource", "https://elsewhere.example/mcp")
			back(t, f, q, "invalid_target")
		})
		t.Run("a resource that is not a URI goes back", func(t *testing.T) {
			f := good()
			q := f.query()
			q.Set("resource", "mcp#frag")
			back(t, f, q, "invalid_target")
		})
		t.Run("a good request waits for the person", func(t *testing.T) {
			requestOf(t, a, good())
		})
	})
}

// The person's part and the token endpoint's rules for codes (SPEC §16).
func TestConsentAndCodes(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		a := w.a
		client := register(t, a, "http://127.0.0.1/callback")
		newGood := func() *flow {
			f := newFlow(client, "http://127.0.0.1:5001/callback")
			f.extra.Set("resource", w.mcp.URL)
			f.extra.Set("scope", "tools:call")
			return f
		}
		consent := func(t *testing.T, s *apptest.Session, id string) map[string]any {
			return consentOf(a, s, id).Expect(t, 200, nil)
		}
		decide := func(s *apptest.Session, id string, body map[string]any) *apptest.Response {
			return decideAs(a, s, id, body)
		}

		t.Run("deny goes back with access_denied, and the request is gone", func(t *testing.T) {
			f := newGood()
			id := requestOf(t, a, f)
			c := consent(t, w.admin, id)
			got := decide(w.admin, id, map[string]any{"decision": "deny", "csrfToken": c["csrfToken"]}).Expect(t, 200, nil)
			q := backQuery(t, f, got["redirectTo"].(string))
			if q.Get("error") != "access_denied" || q.Get("code") != "" || q.Get("state") != f.state || q.Get("iss") == "" {
				t.Fatalf("%v", q)
			}
			consentOf(a, w.admin, id).Expect(t, 404, map[string]any{"code": "authorization_not_found"})
		})
		t.Run("a decision without the person's CSRF token is refused", func(t *testing.T) {
			id := requestOf(t, a, newGood())
			decide(w.admin, id, map[string]any{"decision": "approve", "csrfToken": "forged"}).Expect(t, 403, map[string]any{"code": "csrf_rejected"})
			// Another person's token (for their own request) does not do either.
			other := a.SignUp(t)
			theirs := consent(t, other, requestOf(t, a, newGood()))["csrfToken"]
			decide(w.admin, id, map[string]any{"decision": "approve", "csrfToken": theirs}).Expect(t, 403, map[string]any{"code": "csrf_rejected"})
		})
		t.Run("bad decision bodies change nothing", func(t *testing.T) {
			id := requestOf(t, a, newGood())
			for _, body := range []any{nil, "x", map[string]any{"decision": "maybe", "csrfToken": "x"}, map[string]any{"decision": 1}} {
				decideAs(a, w.admin, id, body).Expect(t, 400, map[string]any{"code": "validation_failed"})
			}
			consent(t, w.admin, id) // still pending
		})
		t.Run("only a project admin approves", func(t *testing.T) {
			dev := a.SignUp(t)
			a.AddMember(t, w.admin, w.project, dev, "developer")
			id := requestOf(t, a, newGood())
			c := consentOf(a, dev, id).Expect(t, 200, map[string]any{"canApprove": false})
			if !strings.Contains(c["reason"].(string), "admin") {
				t.Fatalf("reason %v", c["reason"])
			}
			decide(dev, id, map[string]any{"decision": "approve", "csrfToken": c["csrfToken"]}).Expect(t, 403, nil)
			stranger := a.SignUp(t)
			id = requestOf(t, a, newGood())
			c = consent(t, stranger, id)
			decide(stranger, id, map[string]any{"decision": "approve", "csrfToken": c["csrfToken"]}).Expect(t, 403, nil)
		})
		t.Run("the project's policy bounds the scopes", func(t *testing.T) {
			a.Do(apptest.Req{Method: http.MethodPut, Path: "/v1/projects/" + w.project + "/policy", Header: w.admin.Bearer(),
				Body: map[string]any{"allowedScopes": []string{"files:*"}}}).Expect(t, 200, nil)
			defer func() {
				a.Do(apptest.Req{Method: http.MethodPut, Path: "/v1/projects/" + w.project + "/policy", Header: w.admin.Bearer(), Body: map[string]any{}}).Expect(t, 200, nil)
			}()
			id := requestOf(t, a, newGood())
			c := consent(t, w.admin, id)
			if c["canApprove"] != false || !strings.Contains(c["reason"].(string), "tools:call") {
				t.Fatalf("%v", c)
			}
			decide(w.admin, id, map[string]any{"decision": "approve", "csrfToken": c["csrfToken"]}).Expect(t, 403, nil)
		})

		t.Run("a code is bound to its verifier, client and redirect URI", func(t *testing.T) {
			f := newGood()
			code := approve(t, a, w.admin, f)
			wrong := *f
			wrong.verifier = strings.Repeat("a", 43)
			redeem(a, &wrong, code, nil).Expect(t, 400, map[string]any{"error": "invalid_grant"})

			f2 := newGood()
			code = approve(t, a, w.admin, f2)
			other := *f2
			other.redirect = "http://127.0.0.1:5002/callback"
			redeem(a, &other, code, nil).Expect(t, 400, map[string]any{"error": "invalid_grant"})

			f3 := newGood()
			code = approve(t, a, w.admin, f3)
			another := *f3
			another.clientID = register(t, a, "http://127.0.0.1/callback")
			redeem(a, &another, code, nil).Expect(t, 400, map[string]any{"error": "invalid_grant"})
		})
		t.Run("missing parameters are invalid_request", func(t *testing.T) {
			f := newGood()
			for _, drop := range []string{"client_id", "code", "redirect_uri", "code_verifier"} {
				form := url.Values{"grant_type": {"authorization_code"}, "client_id": {f.clientID}, "code": {"ac_oc_x"}, "redirect_uri": {f.redirect}, "code_verifier": {f.verifier}}
				form.Del(drop)
				a.PostForm("/v1/oauth/token", form, nil).Expect(t, 400, map[string]any{"error": "invalid_request"})
			}
		})
		t.Run("a code lives 60 seconds", func(t *testing.T) {
			f := newGood()
			code := approve(t, a, w.admin, f)
			a.Clock.Advance(61 * time.Second)
			defer a.Clock.Advance(-61 * time.Second)
			redeem(a, f, code, nil).Expect(t, 400, map[string]any{"error": "invalid_grant"})
		})
		t.Run("a resource not granted is invalid_target", func(t *testing.T) {
			f := newGood()
			code := approve(t, a, w.admin, f)
			redeem(a, f, code, url.Values{"resource": {"https://elsewhere.example/mcp"}}).Expect(t, 400, map[string]any{"error": "invalid_target"})
		})

		var accessToken, refreshToken string
		t.Run("a good code gives tokens for the resource", func(t *testing.T) {
			f := newGood()
			code := approve(t, a, w.admin, f)
			got := redeem(a, f, code, url.Values{"resource": {w.mcp.URL}}).Expect(t, 200, map[string]any{"token_type": "Bearer", "scope": "tools:call", "expires_in": float64(900)})
			accessToken, refreshToken = got["access_token"].(string), got["refresh_token"].(string)
			claims := a.VerifyAccessToken(t, accessToken, w.mcp.URL)
			if claims["sub"] != w.admin.UserID || claims["project_id"] != w.project || claims["client_id"] != client || claims["iss"] != w.issuer(t) {
				t.Fatalf("claims %v", claims)
			}

			// A second use of the code revokes what the first issued.
			redeem(a, f, code, nil).Expect(t, 400, map[string]any{"error": "invalid_grant"})
			in := w.introspector
			a.PostForm("/v1/oauth/introspect", url.Values{"token": {accessToken}}, apptest.Basic(in.ID, in.Secret)).Expect(t, 200, map[string]any{"active": false})
			a.PostForm("/v1/oauth/token", url.Values{"grant_type": {"refresh_token"}, "client_id": {client}, "refresh_token": {refreshToken}}, nil).
				Expect(t, 400, map[string]any{"error": "invalid_grant"})
		})
	})
}
