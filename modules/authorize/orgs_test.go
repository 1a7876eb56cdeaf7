package authorize_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/internal/browser"
)

// payloadOf is a JWT's claims, unverified: the tests that sign these verify signatures
// elsewhere (go-oidc in sso_test.go); here what matters is what the token says.
func payloadOf(t *testing.T, jwt string) map[string]any {
	t.Helper()
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", jwt)
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// orgWorld is a project with an app and three orgs; a person of its tenant.
type orgWorld struct {
	a                     *apptest.App
	admin, person         *apptest.Session
	project, app          string
	acme, globex, initech string
}

const orgRedirect = "https://rp.example/cb"

func newOrgWorld(t *testing.T, st apptest.Store) *orgWorld {
	t.Helper()
	a := apptest.Start(t, st)
	w := &orgWorld{a: a, admin: a.SignUp(t)}
	w.project = a.CreateProject(t, w.admin)
	w.app = createApp(t, a, w.admin, w.project, map[string]any{"name": "Portal", "type": "spa",
		"redirectUris": []string{orgRedirect}})["app"].(map[string]any)["clientId"].(string)
	orgs := "/v1/projects/" + w.project + "/orgs"
	for _, o := range []struct {
		name string
		id   *string
	}{{"Acme", &w.acme}, {"Globex", &w.globex}, {"Initech", &w.initech}} {
		*o.id = a.Do(apptest.Req{Method: http.MethodPost, Path: orgs, Header: w.admin.Bearer(), Body: map[string]any{"name": o.name}}).Expect(t, 201, nil)["id"].(string)
	}
	a.Do(apptest.Req{Method: http.MethodPut, Path: "/v1/projects/" + w.project + "/org-roles", Header: w.admin.Bearer(),
		Body: []map[string]any{{"name": "billing", "permissions": []string{"invoices:read", "invoices:pay"}}}}).Expect(t, 200, nil)
	w.person = a.SignUpIn(t, w.project)
	return w
}

func (w *orgWorld) join(t *testing.T, org, role string) {
	t.Helper()
	w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + w.project + "/orgs/" + org + "/members", Header: w.admin.Bearer(),
		Body: map[string]any{"userId": w.person.UserID, "role": role}}).Expect(t, 201, nil)
}

func (w *orgWorld) setRole(t *testing.T, org, role string) {
	t.Helper()
	w.a.Do(apptest.Req{Method: http.MethodPatch, Path: "/v1/projects/" + w.project + "/orgs/" + org + "/members/" + w.person.UserID, Header: w.admin.Bearer(),
		Body: map[string]any{"role": role}}).Expect(t, 200, nil)
}

func (w *orgWorld) flow(organization string) *flow {
	f := newFlow(w.app, orgRedirect)
	f.extra.Set("scope", "openid profile")
	if organization != "" {
		f.extra.Set("organization", organization)
	}
	return f
}

// signIn runs f's request to the end with the person's decision body and returns the
// token endpoint's answer.
func (w *orgWorld) signIn(t *testing.T, f *flow, body map[string]any) map[string]any {
	t.Helper()
	id := requestOf(t, w.a, f)
	c := consentOf(w.a, w.person, id).Expect(t, 200, nil)
	body["decision"], body["csrfToken"] = "approve", c["csrfToken"]
	got := decideAs(w.a, w.person, id, body).Expect(t, 200, nil)
	q := backQuery(t, f, got["redirectTo"].(string))
	return redeem(w.a, f, q.Get("code"), nil).Expect(t, 200, nil)
}

// orgClaimsOf checks that both tokens of answer say org with role and permissions.
func orgClaimsOf(t *testing.T, answer map[string]any, org, role string, perms ...string) {
	t.Helper()
	for _, name := range []string{"id_token", "access_token"} {
		c := payloadOf(t, answer[name].(string))
		got := []string{}
		for _, p := range c["org_permissions"].([]any) {
			got = append(got, p.(string))
		}
		if c["org_id"] != org || c["org_role"] != role || !slices.Equal(got, perms) {
			t.Fatalf("%s says org %v role %v permissions %v; want %s %s %v", name, c["org_id"], c["org_role"], got, org, role, perms)
		}
	}
}

// An app's tokens carry the organisation the person signed in for (SPEC §26): their only
// one; the one the request names; the one they pick when they have several; the role and
// permissions as they are when each token is signed; and none once they left it.
func TestOrgInAppTokens(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newOrgWorld(t, st)

		// No org: no org claims.
		plain := w.signIn(t, w.flow(""), map[string]any{})
		if c := payloadOf(t, plain["id_token"].(string)); c["org_id"] != nil || c["org_role"] != nil {
			t.Fatalf("a person of no org got org claims: %v", c)
		}

		// One org: that one, with the project-defined role's permissions.
		w.join(t, w.acme, "billing")
		one := w.signIn(t, w.flow(""), map[string]any{})
		orgClaimsOf(t, one, w.acme, "billing", "invoices:pay", "invoices:read")

		// Several: the person picks; without a pick the decision is refused.
		w.join(t, w.globex, "member")
		f := w.flow("")
		id := requestOf(t, w.a, f)
		c := consentOf(w.a, w.person, id).Expect(t, 200, map[string]any{"orgId": nil})
		if orgs, _ := c["orgs"].([]any); len(orgs) != 2 || c["remembered"] != false {
			t.Fatalf("the consent view offers %v (remembered %v), want both orgs to pick from", c["orgs"], c["remembered"])
		}
		decideAs(w.a, w.person, id, map[string]any{"decision": "approve", "csrfToken": c["csrfToken"]}).Expect(t, 400, map[string]any{"code": "org_required"})
		decideAs(w.a, w.person, id, map[string]any{"decision": "approve", "csrfToken": c["csrfToken"], "orgId": w.initech}).
			Expect(t, 403, map[string]any{"code": "access_denied"})
		decideAs(w.a, w.person, id, map[string]any{"decision": "approve", "csrfToken": c["csrfToken"], "orgId": 7}).Expect(t, 400, map[string]any{"code": "validation_failed"})
		got := decideAs(w.a, w.person, id, map[string]any{"decision": "approve", "csrfToken": c["csrfToken"], "orgId": w.globex}).Expect(t, 200, nil)
		picked := redeem(w.a, f, backQuery(t, f, got["redirectTo"].(string)).Get("code"), nil).Expect(t, 200, nil)
		orgClaimsOf(t, picked, w.globex, "member")

		// organization= decides; a different pick is refused; the view says which.
		f = w.flow(w.acme)
		id = requestOf(t, w.a, f)
		c = consentOf(w.a, w.person, id).Expect(t, 200, map[string]any{"orgId": w.acme, "orgs": nil})
		decideAs(w.a, w.person, id, map[string]any{"decision": "approve", "csrfToken": c["csrfToken"], "orgId": w.globex}).Expect(t, 400, map[string]any{"code": "org_fixed"})
		got = decideAs(w.a, w.person, id, map[string]any{"decision": "approve", "csrfToken": c["csrfToken"]}).Expect(t, 200, nil)
		named := redeem(w.a, f, backQuery(t, f, got["redirectTo"].(string)).Get("code"), nil).Expect(t, 200, nil)
		orgClaimsOf(t, named, w.acme, "billing", "invoices:pay", "invoices:read")

		// organization= of an org the person is not in: nothing to approve.
		f = w.flow(w.initech)
		id = requestOf(t, w.a, f)
		c = consentOf(w.a, w.person, id).Expect(t, 200, map[string]any{"canApprove": false})
		decideAs(w.a, w.person, id, map[string]any{"decision": "approve", "csrfToken": c["csrfToken"]}).Expect(t, 403, map[string]any{"code": "access_denied"})

		// A refresh signs the role as it is now, and fails once the person left the org.
		refresh := func() *apptest.Response {
			r := w.a.PostForm("/v1/oauth/token", url.Values{"grant_type": {"refresh_token"}, "client_id": {w.app}, "refresh_token": {named["refresh_token"].(string)}}, nil)
			if r.Status == 200 {
				named = r.Expect(t, 200, nil)
			}
			return r
		}
		w.setRole(t, w.acme, "admin")
		refresh().Expect(t, 200, nil)
		orgClaimsOf(t, named, w.acme, "admin")
		w.a.Do(apptest.Req{Method: http.MethodDelete, Path: "/v1/projects/" + w.project + "/orgs/" + w.acme + "/members/" + w.person.UserID, Header: w.admin.Bearer()}).Expect(t, 200, nil)
		refresh().Expect(t, 400, map[string]any{"error": "invalid_grant"})
	})
}

// organization= is checked before anything is parked: its shape, once, and only for an
// app, whose project the orgs are of.
func TestOrganizationParameterRules(t *testing.T) {
	w := newOrgWorld(t, apptest.Stores(t)[0]) // the rules are the handler's: one store is enough
	for name, q := range map[string]url.Values{
		"not an org id": {"organization": {"acme"}},
		"twice":         {"organization": {w.acme, w.globex}},
		"too long":      {"organization": {"org_" + strings.Repeat("a", 61)}},
	} {
		t.Run(name, func(t *testing.T) {
			f := w.flow("")
			for k, v := range q {
				f.extra[k] = v
			}
			res := authorize(t, w.a, f.query())
			back := backQuery(t, f, res.Header.Get("Location"))
			if back.Get("error") != "invalid_request" || !strings.Contains(back.Get("error_description"), "organization") {
				t.Fatalf("answered %v", back)
			}
		})
	}
	t.Run("not an app", func(t *testing.T) {
		f := newFlow(register(t, w.a, "http://127.0.0.1:9/cb"), "http://127.0.0.1:9/cb")
		f.extra.Set("organization", w.acme)
		back := backQuery(t, f, authorize(t, w.a, f.query()).Header.Get("Location"))
		if back.Get("error") != "invalid_request" {
			t.Fatalf("answered %v", back)
		}
	})
}

// A session's active organisation (SPEC §26): the only one a person belongs to when they
// sign in, switched by POST /v1/auth-core/session/org to one of theirs or to none, in
// the session's access tokens and session/me, and kept by refreshes.
func TestSessionOrg(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newOrgWorld(t, st)
		if c := payloadOf(t, w.person.AccessToken); c["org_id"] != nil {
			t.Fatalf("a person of no org signed up into one: %v", c)
		}
		w.join(t, w.acme, "billing")
		signin := w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signin",
			Body: map[string]any{"email": w.person.Email, "password": w.person.Password, "tenantId": w.project}}).Expect(t, 200, nil)
		access := signin["session"].(map[string]any)["accessToken"].(string)
		if c := payloadOf(t, access); c["org_id"] != w.acme || c["org_role"] != "billing" {
			t.Fatalf("a person of one org signed in outside it: %v", c)
		}

		sw := func(body any) *apptest.Response {
			return w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/session/org", Header: w.person.Bearer(), Body: body})
		}
		sw(map[string]any{}).Expect(t, 400, map[string]any{"code": "validation_failed"})
		sw(map[string]any{"orgId": 3}).Expect(t, 400, map[string]any{"code": "validation_failed"})
		sw(map[string]any{"orgId": ""}).Expect(t, 400, map[string]any{"code": "validation_failed"})
		sw(map[string]any{"orgId": w.globex}).Expect(t, 404, map[string]any{"code": "org_not_found"})
		sw(map[string]any{"orgId": "org_nosuchthing"}).Expect(t, 404, map[string]any{"code": "org_not_found"})
		w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/session/org", Body: map[string]any{"orgId": w.acme}}).Expect(t, 401, nil)

		got := sw(map[string]any{"orgId": w.acme}).Expect(t, 200, map[string]any{"org": map[string]any{"orgId": w.acme, "orgName": "Acme", "role": "billing", "permissions": []any{"invoices:pay", "invoices:read"}}})
		next := got["session"].(map[string]any)["accessToken"].(string)
		me := w.a.Do(apptest.Req{Path: "/v1/auth-core/session/me", Header: map[string]string{"Authorization": "Bearer " + next}}).Expect(t, 200, nil)
		if p := me["accessTokenPayload"].(map[string]any); p["org_id"] != w.acme || p["org_role"] != "billing" {
			t.Fatalf("session/me payload %v", p)
		}
		refreshed := w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/session/refresh", Body: map[string]any{"refreshToken": w.person.RefreshToken}}).Expect(t, 200, nil)
		if c := payloadOf(t, refreshed["session"].(map[string]any)["accessToken"].(string)); c["org_id"] != w.acme {
			t.Fatalf("a refresh dropped the active org: %v", c)
		}
		cleared := sw(map[string]any{"orgId": nil}).Expect(t, 200, map[string]any{"org": nil})
		if c := payloadOf(t, cleared["session"].(map[string]any)["accessToken"].(string)); c["org_id"] != nil {
			t.Fatalf("no active org, yet the token says %v", c["org_id"])
		}
	})
}

// In Chromium, with go-oidc as the app: a person of two orgs picks one on the console's
// page and the app's verified id_token says it; prompt=none cannot pick for them, but
// organization= can.
func TestAppSignInPicksOrg(t *testing.T) {
	w := newOrgWorld(t, apptest.Stores(t)[0]) // the stores are TestOrgInAppTokens'
	issuer := w.a.Get("/.well-known/openid-configuration").Expect(t, 200, nil)["issuer"].(string)
	w.join(t, w.acme, "admin")
	w.join(t, w.globex, "billing")
	rp := newRelyingParty(t, w.a, issuer, w.project, true, nil)

	p := freshBrowser(t)
	p.Do(chromedp.Navigate(rp.authURL()), browser.WaitFor("button", "Sign in"),
		browser.TypeInto("textbox", "Email", w.person.Email), browser.TypeInto("textbox", "Password", w.person.Password), browser.Click("button", "Sign in"),
		browser.WaitFor("combobox", "Organization"))
	p.Do(chromedp.SetValue(browser.Label("combobox", "Organization"), w.globex, browser.ByRole("combobox", "Organization")), browser.Click("button", "Approve"))
	r := rp.next(t)
	if r.err != "" || r.claims["org_id"] != w.globex || r.claims["org_role"] != "billing" {
		t.Fatalf("after picking Globex: %+v", r)
	}

	p.Do(chromedp.Navigate(rp.authURL("prompt", "none")))
	if r := rp.next(t); r.err != "interaction_required" {
		t.Fatalf("prompt=none for a person of two orgs: %+v", r)
	}
	p.Do(chromedp.Navigate(rp.authURL("prompt", "none", "organization", w.acme)))
	if r := rp.next(t); r.err != "" || r.claims["org_id"] != w.acme || r.claims["org_role"] != "admin" {
		t.Fatalf("prompt=none with organization=Acme: %+v", r)
	}
	p.Do(chromedp.Navigate(rp.authURL("prompt", "none", "organization", w.initech)))
	if r := rp.next(t); r.err != "access_denied" {
		t.Fatalf("prompt=none with an org not theirs: %+v", r)
	}
}
