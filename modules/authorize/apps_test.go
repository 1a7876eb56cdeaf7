package authorize_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/platform/config"
)

// Apps (SPEC §25): a project's OAuth clients for its own people, administered by its
// admins through real HTTP on both stores.

func appsPath(project string) string { return "/v1/projects/" + project + "/apps" }

// createApp registers body as an app of project and returns the answer.
func createApp(t *testing.T, a *apptest.App, admin *apptest.Session, project string, body map[string]any) map[string]any {
	t.Helper()
	return a.Do(apptest.Req{Method: http.MethodPost, Path: appsPath(project), Body: body, Header: admin.Bearer()}).Expect(t, 201, nil)
}

func webApp() map[string]any {
	return map[string]any{"name": "Billing", "type": "web", "redirectUris": []string{"https://billing.example/cb"}}
}

// authenticates reports whether the token endpoint's revocation route (RFC 7009)
// accepts id and secret by client_secret_basic: 200 for an authenticated client (the
// unknown token is no error), 401 invalid_client otherwise.
func authenticates(t *testing.T, a *apptest.App, id, secret string) bool {
	t.Helper()
	r := a.PostForm("/v1/oauth/revoke", url.Values{"token": {"ac_gr_unknown"}}, apptest.Basic(id, secret))
	switch r.Status {
	case 200:
		return true
	case 401:
		r.Expect(t, 401, map[string]any{"error": "invalid_client"})
		return false
	}
	t.Fatalf("revoke answered %d: %s", r.Status, r.Body)
	return false
}

// clientCredentialsError is what x/oauth2's client credentials flow hears for id and
// secret: an app has no client_credentials grant, so a good secret gets past client
// authentication to unauthorized_client, and a bad one stops at invalid_client.
func clientCredentialsError(t *testing.T, a *apptest.App, id, secret string) string {
	t.Helper()
	cfg := clientcredentials.Config{ClientID: id, ClientSecret: secret, TokenURL: a.Base + "/v1/oauth/token", AuthStyle: oauth2.AuthStyleInHeader}
	_, err := cfg.Token(context.Background())
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) {
		t.Fatalf("client credentials: %v", err)
	}
	return re.ErrorCode
}

func auditActions(t *testing.T, a *apptest.App, admin *apptest.Session, project string) []string {
	t.Helper()
	got := a.Do(apptest.Req{Path: "/v1/projects/" + project + "/audit?limit=200", Header: admin.Bearer()}).Expect(t, 200, nil)
	var out []string
	for _, e := range got["events"].([]any) {
		out = append(out, e.(map[string]any)["action"].(string))
	}
	return out
}

// An app's whole life: registered with a secret shown once, listed, read, changed,
// rotated with a grace in which the old secret still authenticates (and not after it),
// deleted; audited at each step; no secret in the database or the logs in clear.
func TestAppLifecycle(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := apptest.Start(t, st)
		admin := a.SignUp(t)
		project := a.CreateProject(t, admin)
		got := createApp(t, a, admin, project, webApp())
		app := got["app"].(map[string]any)
		id, first := app["clientId"].(string), got["clientSecret"].(string)
		if !strings.HasPrefix(id, "dcr_") || !strings.HasPrefix(first, "ac_rcs_") || app["tokenEndpointAuthMethod"] != "client_secret_basic" ||
			app["firstParty"] != true || app["type"] != "web" || app["previousSecretExpiresAt"] != nil {
			t.Fatalf("created %v", got)
		}
		list := a.Do(apptest.Req{Path: appsPath(project), Header: admin.Bearer()}).Expect(t, 200, nil)["apps"].([]any)
		if len(list) != 1 || list[0].(map[string]any)["clientId"] != id || strings.Contains(string(a.Do(apptest.Req{Path: appsPath(project), Header: admin.Bearer()}).Body), "ac_rcs_") {
			t.Fatalf("list %v", list)
		}
		// The wrong secret differs in its last character whatever that character is.
		wrong := first[:len(first)-1] + "x"
		if strings.HasSuffix(first, "x") {
			wrong = first[:len(first)-1] + "y"
		}
		if !authenticates(t, a, id, first) || authenticates(t, a, id, wrong) {
			t.Fatal("the app's secret does not authenticate it, or a wrong one does")
		}
		if code := clientCredentialsError(t, a, id, first); code != "unauthorized_client" {
			t.Fatalf("x/oauth2 with the app's secret: %s, want unauthorized_client (authenticated, no client_credentials grant)", code)
		}

		patched := a.Do(apptest.Req{Method: http.MethodPatch, Path: appsPath(project) + "/" + id, Header: admin.Bearer(),
			Body: map[string]any{"redirectUris": []string{"https://billing.example/cb2"}, "claims": map[string]string{"plan": "metadata.billing.plan"}}}).Expect(t, 200, nil)
		if r := patched["redirectUris"].([]any); len(r) != 1 || r[0] != "https://billing.example/cb2" || patched["claims"].(map[string]any)["plan"] != "metadata.billing.plan" {
			t.Fatalf("patched %v", patched)
		}
		a.Do(apptest.Req{Path: appsPath(project) + "/" + id, Header: admin.Bearer()}).Expect(t, 200, map[string]any{"name": "Billing"})

		// graceHours 0 retires the old one at once.
		other := createApp(t, a, admin, project, webApp())
		otherID, before := other["app"].(map[string]any)["clientId"].(string), other["clientSecret"].(string)
		zero := a.Do(apptest.Req{Method: http.MethodPost, Path: appsPath(project) + "/" + otherID + "/secret", Header: admin.Bearer(),
			Body: map[string]any{"graceHours": 0}}).Expect(t, 200, nil)
		third := zero["clientSecret"].(string)
		if zero["app"].(map[string]any)["previousSecretExpiresAt"] != nil || authenticates(t, a, otherID, before) || !authenticates(t, a, otherID, third) {
			t.Fatal("graceHours 0 must end the old secret at once")
		}

		db, logs := a.DumpDB(t), a.Logs.String()
		for _, s := range []string{first, before, third} {
			if strings.Contains(db, s) || strings.Contains(logs, s) {
				t.Fatal("an app's secret is in the database or the logs in clear")
			}
		}

		a.Do(apptest.Req{Method: http.MethodDelete, Path: appsPath(project) + "/" + otherID, Header: admin.Bearer()}).Expect(t, 200, map[string]any{"ok": true, "clientId": otherID})
		a.Do(apptest.Req{Path: appsPath(project) + "/" + otherID, Header: admin.Bearer()}).Expect(t, 404, nil)
		if authenticates(t, a, otherID, third) {
			t.Fatal("a deleted app still authenticates")
		}
		actions := strings.Join(auditActions(t, a, admin, project), " ")
		for _, want := range []string{"app.create", "app.update", "app.secret_rotate", "app.delete"} {
			if !strings.Contains(actions, want) {
				t.Errorf("audit has no %s: %s", want, actions)
			}
		}

		rotated := a.Do(apptest.Req{Method: http.MethodPost, Path: appsPath(project) + "/" + id + "/secret", Header: admin.Bearer()}).Expect(t, 200, nil)
		second := rotated["clientSecret"].(string)
		if second == first || rotated["app"].(map[string]any)["previousSecretExpiresAt"] == nil {
			t.Fatalf("rotated %v", rotated)
		}
		// Last, as it moves the clock past the admin's session: within the grace (24 h by
		// default) both secrets work, through the revocation route and through a stock
		// client credentials client alike; after it, only the new one.
		a.Clock.Advance(23 * time.Hour)
		if !authenticates(t, a, id, first) || !authenticates(t, a, id, second) {
			t.Fatal("within the grace, the old and the new secret must both authenticate")
		}
		if code := clientCredentialsError(t, a, id, first); code != "unauthorized_client" {
			t.Fatalf("old secret within the grace: %s", code)
		}
		a.Clock.Advance(2 * time.Hour)
		if authenticates(t, a, id, first) || !authenticates(t, a, id, second) {
			t.Fatal("after the grace, only the new secret may authenticate")
		}
		if code := clientCredentialsError(t, a, id, first); code != "invalid_client" {
			t.Fatalf("old secret after the grace: %s, want invalid_client", code)
		}
		db, logs = a.DumpDB(t), a.Logs.String()
		if strings.Contains(db, second) || strings.Contains(logs, second) {
			t.Fatal("a rotated secret is in the database or the logs in clear")
		}
	})
}

// Deleting an app ends the grants people gave it: its refresh token refuses and its
// access token introspects inactive.
func TestAppDeleteEndsGrants(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		id := createApp(t, w.a, w.admin, w.project, map[string]any{"name": "Console", "type": "spa",
			"redirectUris": []string{"https://rp.example/cb"}})["app"].(map[string]any)["clientId"].(string)
		g := &grantWorld{world: w, f: newFlow(id, "https://rp.example/cb")}
		g.f.extra.Set("resource", w.mcp.URL)
		g.f.extra.Set("scope", "tools:call offline_access")
		person := w.a.SignUpIn(t, w.project) // an app's people are its project's users (SPEC §25)
		got := redeem(w.a, g.f, approve(t, w.a, person, g.f), nil).Expect(t, 200, nil)
		access, refresh := got["access_token"].(string), got["refresh_token"].(string)
		if g.introspect(t, access)["active"] != true {
			t.Fatal("the app's access token is not active before the delete")
		}
		w.a.Do(apptest.Req{Method: http.MethodDelete, Path: appsPath(w.project) + "/" + id, Header: w.admin.Bearer()}).
			Expect(t, 200, map[string]any{"grantsEnded": float64(1)})
		if g.introspect(t, access)["active"] != false {
			t.Fatal("the deleted app's access token is still active")
		}
		// The app is gone: its refresh token names no client any more.
		g.refreshWith(refresh, nil).Expect(t, 401, map[string]any{"error": "invalid_client"})
	})
}

// Every rule of an app's body is its own refusal, with the field it is about; nothing is
// written by a refused request.
func TestAppRules(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := apptest.Start(t, st)
		admin := a.SignUp(t)
		project := a.CreateProject(t, admin)
		with := func(base map[string]any, k string, v any) map[string]any {
			out := map[string]any{}
			for kk, vv := range base {
				out[kk] = vv
			}
			if v == nil {
				delete(out, k)
			} else {
				out[k] = v
			}
			return out
		}
		spa := map[string]any{"name": "SPA", "type": "spa", "redirectUris": []string{"https://spa.example/cb"}}
		cases := []struct {
			name  string
			body  any
			field string
		}{
			{"missing body", nil, "body"},
			{"unparsable body", `{"name":`, "body"},
			{"array body", `[]`, "body"},
			{"unknown field", with(webApp(), "clientSecret", "mine"), "clientSecret"},
			{"name missing", with(webApp(), "name", nil), "name"},
			{"name wrong type", with(webApp(), "name", 7), "name"},
			{"name empty", with(webApp(), "name", ""), "name"},
			{"name too long", with(webApp(), "name", strings.Repeat("n", 81)), "name"},
			{"name with a format character", with(webApp(), "name", "ev\u202eil"), "name"},
			{"type missing", with(webApp(), "type", nil), "type"},
			{"type unknown", with(webApp(), "type", "daemon"), "type"},
			{"redirectUris wrong type", with(webApp(), "redirectUris", "https://billing.example/cb"), "redirectUris"},
			{"web app public", with(webApp(), "tokenEndpointAuthMethod", "none"), "tokenEndpointAuthMethod"},
			{"spa with a secret", with(spa, "tokenEndpointAuthMethod", "client_secret_basic"), "tokenEndpointAuthMethod"},
			{"native with a key", map[string]any{"name": "N", "type": "native", "redirectUris": []string{"com.example.app:/cb"}, "tokenEndpointAuthMethod": "private_key_jwt"}, "tokenEndpointAuthMethod"},
			{"cli with a secret", map[string]any{"name": "C", "type": "cli", "redirectUris": []string{"http://127.0.0.1/cb"}, "tokenEndpointAuthMethod": "client_secret_post"}, "tokenEndpointAuthMethod"},
			{"method unknown", with(webApp(), "tokenEndpointAuthMethod", "tls_client_auth"), "tokenEndpointAuthMethod"},
			{"web redirect on http", with(webApp(), "redirectUris", []string{"http://billing.example/cb"}), "redirectUris"},
			{"redirect with fragment", with(webApp(), "redirectUris", []string{"https://billing.example/cb#x"}), "redirectUris"},
			{"no redirect for the code flow", with(webApp(), "redirectUris", []string{}), "redirectUris"},
			{"spa private-use scheme", with(spa, "redirectUris", []string{"com.example:/cb"}), "redirectUris"},
			{"native https on loopback", map[string]any{"name": "N", "type": "native", "redirectUris": []string{"https://127.0.0.1/cb"}}, "redirectUris"},
			{"cli off loopback", map[string]any{"name": "C", "type": "cli", "redirectUris": []string{"https://cli.example/cb"}}, "redirectUris"},
			{"post-logout javascript", with(webApp(), "postLogoutRedirectUris", []string{"javascript:alert(1)"}), "postLogoutRedirectUris"},
			{"backchannel on http", with(webApp(), "backchannelLogoutUri", "http://billing.example/bc"), "backchannelLogoutUri"},
			{"backchannel with fragment", with(webApp(), "backchannelLogoutUri", "https://billing.example/bc#f"), "backchannelLogoutUri"},
			{"frontchannel private scheme", with(webApp(), "frontchannelLogoutUri", "com.example:/fc"), "frontchannelLogoutUri"},
			{"backchannel wrong type", with(webApp(), "backchannelLogoutUri", 1), "backchannelLogoutUri"},
			{"firstParty wrong type", with(webApp(), "firstParty", "yes"), "firstParty"},
			{"private_key_jwt without keys", with(webApp(), "tokenEndpointAuthMethod", "private_key_jwt"), "jwks"},
			{"jwks for a secret method", with(webApp(), "jwksUri", "https://billing.example/jwks"), "jwksUri"},
			{"jwks wrong type", with(webApp(), "jwks", "keys"), "jwks"},
			{"grant type unknown", with(webApp(), "grantTypes", []string{"authorization_code", "client_credentials"}), "grantTypes"},
			{"refresh alone", with(webApp(), "grantTypes", []string{"refresh_token"}), "grantTypes"},
			{"grantTypes wrong type", with(webApp(), "grantTypes", "authorization_code"), "grantTypes"},
			{"scope malformed", with(webApp(), "scopes", []string{"openid", "bad scope"}), "scopes"},
			{"idToken alg unknown", with(webApp(), "idTokenSignedResponseAlg", "HS256"), "idTokenSignedResponseAlg"},
			{"claims wrong type", with(webApp(), "claims", []string{"plan"}), "claims"},
			{"claim value not a string", with(webApp(), "claims", map[string]any{"plan": 1}), "claims"},
			{"claim overrides sub", with(webApp(), "claims", map[string]string{"sub": "metadata.id"}), "claims.sub"},
			{"claim overrides email", with(webApp(), "claims", map[string]string{"email": "metadata.mail"}), "claims.email"},
			{"claim overrides org_id", with(webApp(), "claims", map[string]string{"org_id": "metadata.org"}), "claims.org_id"},
			{"claim path outside metadata", with(webApp(), "claims", map[string]string{"plan": "profile.plan"}), "claims.plan"},
			{"claim name malformed", with(webApp(), "claims", map[string]string{"9plan": "metadata.plan"}), "claims.9plan"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				got := a.Do(apptest.Req{Method: http.MethodPost, Path: appsPath(project), Body: c.body, Header: admin.Bearer()}).
					Expect(t, 400, map[string]any{"code": "validation_failed"})
				if !hasIssue(got, c.field) {
					t.Fatalf("no issue for %s: %v", c.field, got["issues"])
				}
			})
		}
		if n := len(a.Do(apptest.Req{Path: appsPath(project), Header: admin.Bearer()}).Expect(t, 200, nil)["apps"].([]any)); n != 0 {
			t.Fatalf("%d apps written by refused requests", n)
		}

		// What is allowed: each type with its own redirect rules, a device-only CLI,
		// private_key_jwt by jwks, custom claims, logout URIs on loopback http.
		key := newKeyPair(t, "k1")
		for _, body := range []map[string]any{
			with(with(webApp(), "tokenEndpointAuthMethod", "private_key_jwt"), "jwks", key.jwks()),
			with(with(webApp(), "backchannelLogoutUri", "http://127.0.0.1:9/bc"), "frontchannelLogoutUri", "https://billing.example/fc"),
			with(spa, "redirectUris", []string{"http://localhost:5173/cb", "https://spa.example/cb"}),
			with(webApp(), "redirectUris", []string{"http://127.0.0.1:8080/cb"}), // a relying party under development
			{"name": "Phone", "type": "native", "redirectUris": []string{"com.example.app:/cb", "http://127.0.0.1/cb"}},
			{"name": "Tool", "type": "cli", "grantTypes": []string{"urn:ietf:params:oauth:grant-type:device_code"}},
			with(webApp(), "claims", map[string]string{"plan": "metadata.plan", "https://example.com/roles": "metadata.roles"}),
		} {
			got := createApp(t, a, admin, project, body)
			if _, has := got["clientSecret"]; has != (got["app"].(map[string]any)["tokenEndpointAuthMethod"] == "client_secret_basic") {
				t.Fatalf("secret shown for %v", got)
			}
		}
		if n := len(a.Do(apptest.Req{Path: appsPath(project), Header: admin.Bearer()}).Expect(t, 200, nil)["apps"].([]any)); n != 7 {
			t.Fatalf("%d apps, want 7", n)
		}
	})
}

func hasIssue(got map[string]any, field string) bool {
	issues, _ := got["issues"].([]any)
	for _, i := range issues {
		if i.(map[string]any)["field"] == field {
			return true
		}
	}
	return false
}

// PATCH and rotation refuse what they must: the fixed fields, unknown ones, a broken rule,
// a grace out of range, a rotation of an app without a secret; and the app is unchanged.
func TestAppPatchAndRotateRules(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := apptest.Start(t, st)
		admin := a.SignUp(t)
		project := a.CreateProject(t, admin)
		id := createApp(t, a, admin, project, webApp())["app"].(map[string]any)["clientId"].(string)
		path := appsPath(project) + "/" + id
		for _, c := range []struct {
			name  string
			body  any
			field string
		}{
			{"missing body", nil, "body"},
			{"unparsable", "{", "body"},
			{"type fixed", map[string]any{"type": "spa"}, "type"},
			{"method fixed", map[string]any{"tokenEndpointAuthMethod": "client_secret_post"}, "tokenEndpointAuthMethod"},
			{"unknown field", map[string]any{"secret": "x"}, "secret"},
			{"redirect on http", map[string]any{"redirectUris": []string{"http://billing.example/cb"}}, "redirectUris"},
			{"name wrong type", map[string]any{"name": false}, "name"},
		} {
			t.Run(c.name, func(t *testing.T) {
				got := a.Do(apptest.Req{Method: http.MethodPatch, Path: path, Body: c.body, Header: admin.Bearer()}).Expect(t, 400, nil)
				if !hasIssue(got, c.field) {
					t.Fatalf("no issue for %s: %v", c.field, got)
				}
			})
		}
		a.Do(apptest.Req{Path: path, Header: admin.Bearer()}).Expect(t, 200, map[string]any{"name": "Billing", "type": "web"})
		for _, body := range []any{`{"graceHours":169}`, `{"graceHours":-1}`, `{"graceHours":1.5}`, `{"graceHours":"24"}`, `{"grace":1}`, `[`} {
			a.Do(apptest.Req{Method: http.MethodPost, Path: path + "/secret", Body: body, Header: admin.Bearer()}).Expect(t, 400, map[string]any{"code": "validation_failed"})
		}
		spa := createApp(t, a, admin, project, map[string]any{"name": "SPA", "type": "spa", "redirectUris": []string{"https://spa.example/cb"}})["app"].(map[string]any)["clientId"].(string)
		a.Do(apptest.Req{Method: http.MethodPost, Path: appsPath(project) + "/" + spa + "/secret", Header: admin.Bearer()}).Expect(t, 409, map[string]any{"code": "no_secret"})
	})
}

// An app of project A does not exist for project B's admin (404 on every route of B), B's
// admin and a developer of A may not administer A's apps (403), nobody signed out may (401).
func TestAppProjectIsolation(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := apptest.Start(t, st)
		adminA, adminB, dev := a.SignUp(t), a.SignUp(t), a.SignUp(t)
		projectA, projectB := a.CreateProject(t, adminA), a.CreateProject(t, adminB)
		a.AddMember(t, adminA, projectA, dev, "developer")
		id := createApp(t, a, adminA, projectA, webApp())["app"].(map[string]any)["clientId"].(string)
		inB := appsPath(projectB) + "/" + id
		a.Do(apptest.Req{Path: inB, Header: adminB.Bearer()}).Expect(t, 404, nil)
		a.Do(apptest.Req{Method: http.MethodPatch, Path: inB, Body: map[string]any{"name": "Mine"}, Header: adminB.Bearer()}).Expect(t, 404, nil)
		a.Do(apptest.Req{Method: http.MethodPost, Path: inB + "/secret", Header: adminB.Bearer()}).Expect(t, 404, nil)
		a.Do(apptest.Req{Method: http.MethodDelete, Path: inB, Header: adminB.Bearer()}).Expect(t, 404, nil)
		if n := len(a.Do(apptest.Req{Path: appsPath(projectB), Header: adminB.Bearer()}).Expect(t, 200, nil)["apps"].([]any)); n != 0 {
			t.Fatalf("project B lists %d apps", n)
		}
		a.Do(apptest.Req{Path: appsPath(projectA), Header: adminB.Bearer()}).Expect(t, 403, nil)
		a.Do(apptest.Req{Path: appsPath(projectA), Header: dev.Bearer()}).Expect(t, 403, nil)
		a.Do(apptest.Req{Method: http.MethodPost, Path: appsPath(projectA), Body: webApp(), Header: dev.Bearer()}).Expect(t, 403, nil)
		a.Do(apptest.Req{Path: appsPath(projectA)}).Expect(t, 401, nil)
		a.Do(apptest.Req{Path: appsPath(projectA) + "/" + id, Header: adminA.Bearer()}).Expect(t, 200, map[string]any{"name": "Billing"})
	})
}

// Initial access tokens (RFC 7591 §3): minted once, listed by hint, spent one use per
// registration (of two racing for the last use, one wins), refused when unknown, expired,
// used up or deleted with 401 invalid_token; a registration with one is a third-party app
// of the project; without one, registration is as before.
func TestRegistrationToken(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := apptest.Start(t, st)
		admin := a.SignUp(t)
		project := a.CreateProject(t, admin)
		tokens := appsPath(project) + "/registration-tokens"
		mint := func(body any) (string, string) {
			got := a.Do(apptest.Req{Method: http.MethodPost, Path: tokens, Body: body, Header: admin.Bearer()}).Expect(t, 201, nil)
			return got["token"].(string), got["registrationToken"].(map[string]any)["id"].(string)
		}
		dcr := func(token string) *apptest.Response {
			h := map[string]string{}
			if token != "" {
				h["Authorization"] = "Bearer " + token
			}
			return a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/register", Header: h,
				Body: map[string]any{"client_name": "Partner", "redirect_uris": []string{"https://partner.example/cb"}, "token_endpoint_auth_method": "client_secret_basic"}})
		}
		refused := func(token string) {
			t.Helper()
			r := dcr(token).Expect(t, 401, map[string]any{"error": "invalid_token"})
			_ = r
		}

		for _, body := range []any{nil, "{", `{"maxUses":0}`, `{"maxUses":1001}`, `{"expiresInHours":0}`, `{"expiresInHours":721}`, `{"expiresInHours":"1"}`, `{"maxUses":1.5}`, `{"uses":3}`} {
			a.Do(apptest.Req{Method: http.MethodPost, Path: tokens, Body: body, Header: admin.Bearer()}).Expect(t, 400, map[string]any{"code": "validation_failed"})
		}

		token, tokenID := mint(map[string]any{"expiresInHours": 2, "maxUses": 2})
		if !strings.HasPrefix(token, "ac_iat_") || !strings.HasPrefix(tokenID, "iat_") {
			t.Fatalf("minted %s %s", token, tokenID)
		}
		listed := a.Do(apptest.Req{Path: tokens, Header: admin.Bearer()}).Expect(t, 200, nil)
		if l := listed["registrationTokens"].([]any); len(l) != 1 || strings.Contains(string(a.Do(apptest.Req{Path: tokens, Header: admin.Bearer()}).Body), token) {
			t.Fatalf("listed %v", listed)
		}

		got := dcr(token).Expect(t, 201, nil)
		clientID, secret := got["client_id"].(string), got["client_secret"].(string)
		app := a.Do(apptest.Req{Path: appsPath(project) + "/" + clientID, Header: admin.Bearer()}).Expect(t, 200, map[string]any{"firstParty": false, "type": "web"})
		if app["clientId"] != clientID || !authenticates(t, a, clientID, secret) {
			t.Fatalf("registered app %v", app)
		}
		// Without a token, registration is the host's own, as before: no project.
		plain := dcr("").Expect(t, 201, nil)["client_id"].(string)
		a.Do(apptest.Req{Path: appsPath(project) + "/" + plain, Header: admin.Bearer()}).Expect(t, 404, nil)

		dcr(token).Expect(t, 201, nil) // the second and last use
		refused(token)                 // used up
		refused("ac_iat_" + strings.Repeat("A", 38))
		refused("not-a-token")
		a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/register", Header: map[string]string{"Authorization": "Basic " + token},
			Body: map[string]any{"redirect_uris": []string{"https://partner.example/cb"}}}).Expect(t, 401, map[string]any{"error": "invalid_token"})

		deleted, deletedID := mint(map[string]any{})
		a.Do(apptest.Req{Method: http.MethodDelete, Path: tokens + "/" + deletedID, Header: admin.Bearer()}).Expect(t, 200, map[string]any{"ok": true})
		a.Do(apptest.Req{Method: http.MethodDelete, Path: tokens + "/" + deletedID, Header: admin.Bearer()}).Expect(t, 404, nil)
		refused(deleted)

		// A refused registration spends no use.
		once, _ := mint(map[string]any{"maxUses": 1})
		a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/register", Header: map[string]string{"Authorization": "Bearer " + once},
			Body: map[string]any{"redirect_uris": []string{"http://partner.example/cb"}}}).Expect(t, 400, map[string]any{"error": "invalid_redirect_uri"})
		// Two registrations race for its one use: exactly one wins.
		var wg sync.WaitGroup
		statuses := make([]int, 2)
		for i := range statuses {
			wg.Add(1)
			go func() {
				defer wg.Done()
				statuses[i] = dcr(once).Status
			}()
		}
		wg.Wait()
		if !(statuses[0] == 201 && statuses[1] == 401) && !(statuses[0] == 401 && statuses[1] == 201) {
			t.Fatalf("two registrations for one use answered %v", statuses)
		}

		db, logs := a.DumpDB(t), a.Logs.String()
		for _, s := range []string{token, once, secret} {
			if strings.Contains(db, s) || strings.Contains(logs, s) {
				t.Fatal("an initial access token or a secret is in the database or the logs in clear")
			}
		}
		actions := strings.Join(auditActions(t, a, admin, project), " ")
		for _, want := range []string{"app.registration_token_create", "app.registration_token_delete", "app.create"} {
			if !strings.Contains(actions, want) {
				t.Errorf("audit has no %s: %s", want, actions)
			}
		}
		// Another project's admin does not see or delete them.
		other := a.SignUp(t)
		otherProject := a.CreateProject(t, other)
		a.Do(apptest.Req{Method: http.MethodDelete, Path: appsPath(otherProject) + "/registration-tokens/" + tokenID, Header: other.Bearer()}).Expect(t, 404, nil)

		// Last, as it moves the clock past the admin's session: an expired token.
		expiring, _ := mint(map[string]any{"expiresInHours": 1, "maxUses": 5})
		a.Clock.Advance(59 * time.Minute)
		dcr(expiring).Expect(t, 201, nil)
		a.Clock.Advance(2 * time.Minute)
		refused(expiring)
	})
}

// A leaked initial access token reported by a secret scanner is deleted.
func TestRegistrationTokenLeakReport(t *testing.T) {
	sc := apptest.NewScanner(t)
	a := apptest.Start(t, apptest.Stores(t)[0], sc.Trusted)
	admin := a.SignUp(t)
	project := a.CreateProject(t, admin)
	token := a.Do(apptest.Req{Method: http.MethodPost, Path: appsPath(project) + "/registration-tokens", Body: map[string]any{"maxUses": 3}, Header: admin.Bearer()}).
		Expect(t, 201, nil)["token"].(string)
	sc.Report(t, a, token).Expect(t, 200, nil)
	a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/register", Header: map[string]string{"Authorization": "Bearer " + token},
		Body: map[string]any{"redirect_uris": []string{"https://partner.example/cb"}}}).Expect(t, 401, map[string]any{"error": "invalid_token"})
}

// A change to an app reaches every replica as it commits: a replica that cached the app's
// registration (by serving its authorization request) follows its new redirect URIs.
func TestAppPatchReachesEveryReplica(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		dbURL := st.URL(t)
		a := apptest.StartURL(t, st.Name, dbURL)
		b := a
		if st.Name == "postgres" {
			b = apptest.StartURL(t, st.Name, dbURL)
		}
		admin := a.SignUp(t)
		project := a.CreateProject(t, admin)
		id := createApp(t, a, admin, project, map[string]any{"name": "SPA", "type": "spa", "redirectUris": []string{"https://spa.example/old"}})["app"].(map[string]any)["clientId"].(string)
		status := func(redirect string) int { return authorize(t, b, newFlow(id, redirect).query()).StatusCode }
		if status("https://spa.example/old") != http.StatusFound || status("https://spa.example/new") == http.StatusFound {
			t.Fatal("replica b does not serve the app as registered")
		}
		a.Do(apptest.Req{Method: http.MethodPatch, Path: appsPath(project) + "/" + id, Header: admin.Bearer(),
			Body: map[string]any{"redirectUris": []string{"https://spa.example/new"}}}).Expect(t, 200, nil)
		// SPEC §1 gives an invalidation a second to reach every replica.
		deadline := time.Now().Add(time.Second)
		for status("https://spa.example/new") != http.StatusFound || status("https://spa.example/old") == http.StatusFound {
			if time.Now().After(deadline) {
				t.Fatal("replica b still serves the app as it was before the change")
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

// Every change to apps and registration tokens needs a recent authentication from an
// admin with a second factor (step-up, SPEC §17); reading them does not, and a step-up
// makes the changes possible again.
func TestAppChangesNeedStepUp(t *testing.T) {
	a := apptest.Start(t, apptest.Stores(t)[0], apptest.WithConfig(func(c *config.Config) { c.AccessTTL = 24 * time.Hour }))
	admin := a.SignUp(t)
	project := a.CreateProject(t, admin)
	id := createApp(t, a, admin, project, webApp())["app"].(map[string]any)["clientId"].(string)
	tokenID := a.Do(apptest.Req{Method: http.MethodPost, Path: appsPath(project) + "/registration-tokens", Body: map[string]any{}, Header: admin.Bearer()}).
		Expect(t, 201, nil)["registrationToken"].(map[string]any)["id"].(string)
	secret := enrolTOTP(t, a, admin)
	a.Clock.Advance(guardWindow)
	for _, r := range []apptest.Req{
		{Method: http.MethodPost, Path: appsPath(project), Body: webApp()},
		{Method: http.MethodPatch, Path: appsPath(project) + "/" + id, Body: map[string]any{"name": "Renamed"}},
		{Method: http.MethodPost, Path: appsPath(project) + "/" + id + "/secret"},
		{Method: http.MethodDelete, Path: appsPath(project) + "/" + id},
		{Method: http.MethodPost, Path: appsPath(project) + "/registration-tokens", Body: map[string]any{}},
		{Method: http.MethodDelete, Path: appsPath(project) + "/registration-tokens/" + tokenID},
	} {
		r.Header = admin.Bearer()
		a.Do(r).Expect(t, 403, map[string]any{"code": "reauthentication_required"})
	}
	a.Do(apptest.Req{Path: appsPath(project) + "/" + id, Header: admin.Bearer()}).Expect(t, 200, map[string]any{"name": "Billing"})
	if n := len(a.Do(apptest.Req{Path: appsPath(project) + "/registration-tokens", Header: admin.Bearer()}).Expect(t, 200, nil)["registrationTokens"].([]any)); n != 1 {
		t.Fatalf("%d registration tokens", n)
	}
	up := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/mfa/step-up", Header: admin.Bearer(),
		Body: map[string]any{"code": totpCode(t, secret, a.Clock.Now())}}).Expect(t, 200, nil)
	fresh := (&apptest.Session{AccessToken: up["accessToken"].(string)}).Bearer()
	a.Do(apptest.Req{Method: http.MethodPatch, Path: appsPath(project) + "/" + id, Body: map[string]any{"name": "Renamed"}, Header: fresh}).
		Expect(t, 200, nil)
}

// A rotated-away secret still in its grace, once reported leaked, dies at once (with the
// app's grants); the new secret keeps working.
func TestAppRotatedSecretLeakReport(t *testing.T) {
	sc := apptest.NewScanner(t)
	a := apptest.Start(t, apptest.Stores(t)[0], sc.Trusted)
	admin := a.SignUp(t)
	project := a.CreateProject(t, admin)
	got := createApp(t, a, admin, project, webApp())
	id, old := got["app"].(map[string]any)["clientId"].(string), got["clientSecret"].(string)
	current := a.Do(apptest.Req{Method: http.MethodPost, Path: appsPath(project) + "/" + id + "/secret", Header: admin.Bearer()}).Expect(t, 200, nil)["clientSecret"].(string)
	if !authenticates(t, a, id, old) {
		t.Fatal("the old secret does not work within its grace")
	}
	sc.Report(t, a, old).Expect(t, 200, nil)
	if authenticates(t, a, id, old) || !authenticates(t, a, id, current) {
		t.Fatal("after the leak report, the old secret must be dead and the current one alive")
	}
	a.Do(apptest.Req{Path: appsPath(project) + "/" + id, Header: admin.Bearer()}).Expect(t, 200, map[string]any{"previousSecretExpiresAt": nil})
}
