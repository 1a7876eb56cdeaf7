package federation_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/authcore/authcore/internal/apptest"
)

var domainToken = regexp.MustCompile(`token=(ac_dom_[A-Za-z0-9]+)`)

// Enterprise OIDC by domain (SPEC §20): a provider claims a domain after proof, discovery
// by email finds it, and sso_required sends the domain's addresses to it.
func TestDomains(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		p, q := w.addProvider(t, map[string]any{"name": "Corp"}), w.addProvider(t, map[string]any{"name": "Other"})
		domains := func(id string) string { return "/v1/projects/" + w.project + "/auth/providers/" + id + "/domains" }
		claim := func(id, d string) *apptest.Response {
			return w.a.Do(apptest.Req{Method: http.MethodPost, Path: domains(id), Body: map[string]any{"domain": d}, Header: w.admin.Bearer()})
		}
		own := strings.SplitN(w.admin.Email, "@", 2)[1] // the admin's own domain

		claim(p.ID, "not a domain").Expect(t, 400, map[string]any{"code": "validation_failed"})
		w.a.Do(apptest.Req{Method: http.MethodPost, Path: domains(p.ID), Body: map[string]any{}, Header: w.admin.Bearer()}).Expect(t, 400, nil)
		// The admin's address is in the domain but not proven: that proves nothing, a
		// postmaster mail is the way.
		claim(p.ID, own).Expect(t, 202, map[string]any{"verified": false, "proof": "postmaster"})
		w.verifyEmail(t, w.admin.UserID)
		claim(p.ID, own).Expect(t, 201, map[string]any{"domain": own, "verified": true, "proof": "admin_email"})
		claim(q.ID, own).Expect(t, 409, map[string]any{"code": "domain_taken"})

		corp := "corp-" + rnd(4) + ".test"
		claim(p.ID, corp).Expect(t, 202, map[string]any{"domain": corp, "verified": false})
		w.waitMailTo(t, "postmaster@"+corp)
		tok := domainToken.FindStringSubmatch(w.mailsTo("postmaster@" + corp)[0].Text)
		if tok == nil {
			t.Fatalf("no proof link: %s", w.mailsTo("postmaster@" + corp)[0].Text)
		}
		w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/domains/verify", Body: map[string]any{"token": tok[1]}}).
			Expect(t, 200, map[string]any{"domain": corp, "verified": true, "providerId": p.ID, "proof": "postmaster"})
		w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/domains/verify", Body: map[string]any{"token": tok[1]}}).
			Expect(t, 400, map[string]any{"code": "invalid_token"})

		got := w.a.Do(apptest.Req{Method: http.MethodGet, Path: "/v1/projects/" + w.project + "/auth/providers/" + p.ID, Header: w.admin.Bearer()}).Expect(t, 200, nil)
		if ds := got["domains"].([]any); len(ds) != 2 {
			t.Fatalf("domains %v", ds)
		}

		// Discovery by email.
		disc := "/v1/auth-core/providers/discover?tenantId=" + w.project + "&email="
		w.a.Get(disc+"someone@"+corp).Expect(t, 200, map[string]any{"providerId": p.ID, "name": "Corp", "ssoRequired": false})
		w.a.Get(disc+"someone@elsewhere.test").Expect(t, 404, map[string]any{"code": "no_provider"})
		w.a.Get(disc+"nobody").Expect(t, 400, map[string]any{"code": "validation_failed"})

		// sso_required: the domain's addresses sign in with the provider only.
		inside := "worker@" + corp
		w.signUpIn(t, inside)
		w.a.Do(apptest.Req{Method: http.MethodPatch, Path: "/v1/projects/" + w.project + "/auth/providers/" + p.ID, Header: w.admin.Bearer(),
			Body: map[string]any{"ssoRequired": true}}).Expect(t, 200, map[string]any{"ssoRequired": true})
		want := map[string]any{"code": "sso_required", "providerId": p.ID}
		w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signin", Body: map[string]any{"email": inside, "password": "correct horse battery", "tenantId": w.project}}).Expect(t, 403, want)
		w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signin", Body: map[string]any{"email": strings.ToUpper(inside), "password": "wrong", "tenantId": w.project}}).Expect(t, 403, want)
		w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signup", Body: map[string]any{"email": "new@" + corp, "password": "correct horse battery", "tenantId": w.project}}).Expect(t, 403, want)
		w.a.Do(apptest.Req{Method: http.MethodPut, Path: "/v1/projects/" + w.project + "/auth/methods", Header: w.admin.Bearer(), Body: map[string]any{"password": true, "emailLink": true}}).Expect(t, 200, nil)
		w.mailRequest(t, inside).Expect(t, 403, want)
		w.a.Get(disc+inside).Expect(t, 200, map[string]any{"ssoRequired": true})
		// Other domains, and the dashboard's tenant, are untouched.
		w.signUpIn(t, "someone-"+rnd(4)+"@elsewhere.test")
		w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signin", Body: map[string]any{"email": w.admin.Email, "password": w.admin.Password}}).Expect(t, 200, nil)
		// The provider itself signs the domain's people in.
		acc := w.account(t, "boss@"+corp, true)
		if res := newPerson(t).via(p.Start, acc.Login); cookie(res, "sAccessToken") == "" {
			t.Fatalf("sign-in through the required provider: %d %s", res.StatusCode, body(t, res))
		}

		w.a.Do(apptest.Req{Method: http.MethodDelete, Path: domains(p.ID) + "/" + corp, Header: w.admin.Bearer()}).Expect(t, 200, map[string]any{"ok": true, "domain": corp})
		w.a.Do(apptest.Req{Method: http.MethodDelete, Path: domains(p.ID) + "/" + corp, Header: w.admin.Bearer()}).Expect(t, 404, map[string]any{"code": "domain_not_found"})
		w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signin", Body: map[string]any{"email": inside, "password": "correct horse battery", "tenantId": w.project}}).Expect(t, 200, nil)
	})
}

func (w *world) waitMailTo(t *testing.T, to string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if len(w.mailsTo(to)) > 0 {
			return
		}
	}
	t.Fatalf("no mail to %s", to)
}

// An OAuth 2.0 provider with a userinfo endpoint (GitHub-shaped): no id_token is read; the
// claim mapping says where subject, email, verification and name are.
func TestOAuth2WithClaimMapping(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		p := w.addProvider(t, map[string]any{"type": "oauth2", "issuer": nil, "name": "Hub",
			"authorizationEndpoint": w.up.Issuer + "/auth", "tokenEndpoint": w.up.Issuer + "/token", "userinfoEndpoint": w.up.Issuer + "/me",
			"scopes": []string{"openid", "email", "profile"},
			"claims": map[string]any{"subject": "sub", "email": "email", "emailVerified": "email_verified", "name": "preferred_username"}})
		email := apptest.UniqueEmail(t)
		acc := w.account(t, email, true)
		res := newPerson(t).via(p.Start, acc.Login)
		access := cookie(res, "sAccessToken")
		if access == "" {
			t.Fatalf("%d %s", res.StatusCode, body(t, res))
		}
		me := w.a.Get("/v1/auth-core/session/me", "Authorization", "Bearer "+access).Expect(t, 200, nil)
		if u := me["user"].(map[string]any); u["email"] != email || u["name"] != acc.Username {
			t.Fatalf("user %v (mapped name %s)", u, acc.Username)
		}
		// An unverified address does not make an account here either.
		res = newPerson(t).via(p.Start, w.account(t, apptest.UniqueEmail(t), false).Login)
		if page := body(t, res); res.StatusCode != http.StatusForbidden || !strings.Contains(page, "email_not_verified") {
			t.Fatalf("%d %s", res.StatusCode, page)
		}
	})
}
