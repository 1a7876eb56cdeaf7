package authorize_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/internal/browser"
)

// rpResult is what a relying party's callback saw: an error, or the verified id_token's
// claims and the raw token.
type rpResult struct {
	err     string
	claims  map[string]any
	idToken string
	access  string
}

// relyingParty is an app of a project as a stock Go relying party runs it (go-oidc and
// x/oauth2, PKCE, nonce), on loopback: its callback redeems the code and verifies the
// id_token against the provider's JWKS.
type relyingParty struct {
	srv      *httptest.Server
	conf     oauth2.Config
	verifier *oidc.IDTokenVerifier
	pending  sync.Map // state → PKCE verifier
	results  chan rpResult
	clientID string
}

func newRelyingParty(t *testing.T, a *apptest.App, issuer, project string, firstParty bool, claims map[string]string) *relyingParty {
	t.Helper()
	rp := &relyingParty{results: make(chan rpResult, 4)}
	rp.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/logged-out":
			_, _ = fmt.Fprint(w, "logged out of the app")
			return
		case "/callback":
		default:
			http.NotFound(w, r)
			return
		}
		q := r.URL.Query()
		if e := q.Get("error"); e != "" {
			rp.results <- rpResult{err: e}
			_, _ = fmt.Fprint(w, "error "+e)
			return
		}
		v, ok := rp.pending.LoadAndDelete(q.Get("state"))
		if !ok {
			rp.results <- rpResult{err: "unknown state"}
			return
		}
		tok, err := rp.conf.Exchange(r.Context(), q.Get("code"), oauth2.VerifierOption(v.(string)))
		if err != nil {
			rp.results <- rpResult{err: "exchange: " + err.Error()}
			return
		}
		raw, _ := tok.Extra("id_token").(string)
		idt, err := rp.verifier.Verify(r.Context(), raw)
		if err != nil {
			rp.results <- rpResult{err: "verify: " + err.Error()}
			return
		}
		var c map[string]any
		if err := idt.Claims(&c); err != nil || c["nonce"] != "n-"+q.Get("state") {
			rp.results <- rpResult{err: fmt.Sprintf("claims %v %v", c, err)}
			return
		}
		rp.results <- rpResult{claims: c, idToken: raw, access: tok.AccessToken}
		_, _ = fmt.Fprint(w, "signed in to the app")
	}))
	t.Cleanup(rp.srv.Close)
	// The apps engineer builds the CRUD API in parallel: the rows are written as it will.
	row, err := a.Ent.OAuthClient.Create().SetName("App").SetRedirectUris([]string{rp.srv.URL + "/callback"}).SetApplicationType("web").
		SetGrantTypes([]string{"authorization_code", "refresh_token"}).SetTokenEndpointAuthMethod("none").
		SetPostLogoutRedirectUris([]string{rp.srv.URL + "/logged-out"}).SetProjectID(project).SetAppType("web").
		SetFirstParty(firstParty).SetClaims(claims).Save(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rp.clientID = row.ID
	prov, err := oidc.NewProvider(context.Background(), issuer)
	if err != nil {
		t.Fatal(err)
	}
	rp.conf = oauth2.Config{ClientID: row.ID, Endpoint: prov.Endpoint(), RedirectURL: rp.srv.URL + "/callback",
		Scopes: []string{oidc.ScopeOpenID, "profile", "email"}}
	rp.conf.Endpoint.AuthStyle = oauth2.AuthStyleInParams
	rp.verifier = prov.Verifier(&oidc.Config{ClientID: row.ID})
	return rp
}

// authURL starts a sign-in with extra parameters (prompt, max_age, acr_values …).
func (rp *relyingParty) authURL(extra ...string) string {
	v := oauth2.GenerateVerifier()
	state := "s" + v[:12]
	rp.pending.Store(state, v)
	opts := []oauth2.AuthCodeOption{oauth2.S256ChallengeOption(v), oauth2.SetAuthURLParam("nonce", "n-"+state)}
	for i := 0; i+1 < len(extra); i += 2 {
		opts = append(opts, oauth2.SetAuthURLParam(extra[i], extra[i+1]))
	}
	return rp.conf.AuthCodeURL(state, opts...)
}

func (rp *relyingParty) next(t *testing.T) rpResult {
	t.Helper()
	select {
	case r := <-rp.results:
		return r
	case <-time.After(30 * time.Second):
		t.Fatal("the relying party's callback was never reached")
		return rpResult{}
	}
}

// freshBrowser is a tab in a browser context of its own: no cookie of another tab.
func freshBrowser(t *testing.T) *browser.Page {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browser.Tab(t, nil), chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatal(err)
	}
	return browser.NewPage(t, ctx)
}

// Single sign-on for a project's people (SPEC §25), with stock Go relying parties and
// the person in headless Chromium on the console's real pages.
func TestAppsSingleSignOn(t *testing.T) {
	for _, st := range apptest.Stores(t) {
		t.Run(st.Name, func(t *testing.T) { testAppsSingleSignOn(t, st) })
	}
}

func testAppsSingleSignOn(t *testing.T, st apptest.Store) {
	a := apptest.Start(t, st)
	issuer := a.Get("/.well-known/openid-configuration").Expect(t, 200, map[string]any{
		"frontchannel_logout_supported": true, "frontchannel_logout_session_supported": true,
		"backchannel_logout_supported": true, "backchannel_logout_session_supported": true})["issuer"].(string)
	admin := a.SignUp(t)
	projectA, projectB := a.CreateProject(t, admin), a.CreateProject(t, admin)

	// A tenant user of project A with metadata and a TOTP app; one of project B.
	alice := a.SignUpIn(t, projectA)
	if err := a.Ent.User.UpdateOneID(alice.UserID).SetMetadata(`{"name":"Alice","plan":"pro","seats":3,"beta":true,"tags":["x","y"],"org":{"tier":"gold"},"email":"evil@example.com"}`).
		Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	pending := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/mfa/totp", Body: map[string]any{"name": "phone"}, Header: alice.Bearer()}).Expect(t, 201, nil)
	key := pending["secret"].(string)
	a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/mfa/totp/" + pending["id"].(string) + "/confirm", Body: map[string]any{"code": totpCode(t, key, a.Clock.Now())},
		Header: alice.Bearer()}).Expect(t, 200, nil)
	a.Clock.Advance(time.Minute) // past the step the enrolment's code used
	bob := a.SignUpIn(t, projectB)

	claims := map[string]string{"plan": "metadata.plan", "seats": "metadata.seats", "beta": "metadata.beta", "tags": "metadata.tags",
		"tier": "metadata.org.tier", "email": "metadata.email", "sub": "metadata.plan", "nested": "metadata.org", "missing": "metadata.none"}
	app1 := newRelyingParty(t, a, issuer, projectA, true, claims)
	app2 := newRelyingParty(t, a, issuer, projectA, true, nil)
	third := newRelyingParty(t, a, issuer, projectA, false, nil)
	appB := newRelyingParty(t, a, issuer, projectB, true, nil)

	// Alice signs in to app 1 with her password and a code from her app.
	p := freshBrowser(t)
	p.Do(chromedp.Navigate(app1.authURL()), browser.WaitFor("button", "Sign in"),
		browser.TypeInto("textbox", "Email", alice.Email), browser.TypeInto("textbox", "Password", alice.Password), browser.Click("button", "Sign in"),
		browser.WaitFor("heading", "Two-step sign-in"))
	p.Do(browser.TypeInto("textbox", "Authentication code", totpCode(t, key, a.Clock.Now())), browser.Click("button", "Verify"))
	r1 := app1.next(t)
	if r1.err != "" {
		t.Fatalf("app 1: %s", r1.err)
	}
	c1 := r1.claims
	sid, _ := c1["sid"].(string)
	if c1["sub"] != alice.UserID || sid == "" || c1["project_id"] != projectA || c1["acr"] != "urn:authcore:acr:mfa" {
		t.Fatalf("app 1's id_token: %v", c1)
	}
	// Custom claims: scalars and lists of them from metadata, never an object, a missing
	// path, or a registered claim.
	if c1["plan"] != "pro" || c1["seats"] != 3.0 || c1["beta"] != true || fmt.Sprint(c1["tags"]) != "[x y]" || c1["tier"] != "gold" ||
		c1["email"] != alice.Email || c1["nested"] != nil || c1["missing"] != nil {
		t.Fatalf("custom claims in app 1's id_token: %v", c1)
	}

	info := a.Do(apptest.Req{Path: "/v1/oauth/userinfo", Header: map[string]string{"Authorization": "Bearer " + r1.access}}).Expect(t, 200, nil)
	if info["sub"] != alice.UserID || info["plan"] != "pro" || info["tier"] != "gold" || info["email"] != alice.Email || info["nested"] != nil {
		t.Fatalf("userinfo for app 1: %v", info)
	}

	// App 2 in the same browser: a code without typing anything, the same sid.
	p.Do(chromedp.Navigate(app2.authURL()))
	r2 := app2.next(t)
	if r2.err != "" || r2.claims["sub"] != alice.UserID || r2.claims["sid"] != sid {
		t.Fatalf("app 2 by SSO: %+v (app 1's sid %s)", r2, sid)
	}
	if r2.claims["plan"] != nil {
		t.Fatalf("app 2 registered no custom claims: %v", r2.claims)
	}
	// prompt=none in the same browser: a code.
	p.Do(chromedp.Navigate(app2.authURL("prompt", "none")))
	if r := app2.next(t); r.err != "" || r.claims["sid"] != sid {
		t.Fatalf("prompt=none with a live SSO session: %+v", r)
	}

	// A fresh browser: prompt=none is login_required.
	fresh := freshBrowser(t)
	fresh.Do(chromedp.Navigate(app2.authURL("prompt", "none")))
	if r := app2.next(t); r.err != "login_required" {
		t.Fatalf("prompt=none in a fresh browser: %+v", r)
	}

	// prompt=login and max_age ask again; acr_values=mfa with prompt=none is satisfied here.
	a.Clock.Advance(2 * time.Minute)
	for _, extra := range [][]string{{"prompt", "login"}, {"max_age", "60"}} {
		p.Do(chromedp.Navigate(app1.authURL(extra...)), browser.WaitFor("button", "Sign in"))
		if !strings.Contains(p.Eval(`location.pathname`), "/console/authorize") {
			t.Fatalf("%v went to %s", extra, p.Eval(`location.href`))
		}
	}
	p.Do(chromedp.Navigate(app2.authURL("prompt", "none", "acr_values", "urn:authcore:acr:mfa")))
	if r := app2.next(t); r.err != "" {
		t.Fatalf("acr mfa with an MFA session: %+v", r)
	}

	// A person signed in with a password alone: acr_values=mfa is interaction_required
	// with prompt=none, and the console (not a code) without it.
	carol := a.SignUpIn(t, projectA)
	pc := freshBrowser(t)
	pc.Do(chromedp.Navigate(app2.authURL()), browser.WaitFor("button", "Sign in"),
		browser.TypeInto("textbox", "Email", carol.Email), browser.TypeInto("textbox", "Password", carol.Password), browser.Click("button", "Sign in"))
	if r := app2.next(t); r.err != "" || r.claims["sub"] != carol.UserID || r.claims["acr"] != "urn:authcore:acr:1fa" {
		t.Fatalf("carol at app 2: %+v", r)
	}
	pc.Do(chromedp.Navigate(app1.authURL("prompt", "none", "acr_values", "urn:authcore:acr:mfa")))
	if r := app1.next(t); r.err != "interaction_required" {
		t.Fatalf("acr mfa, prompt=none, a one-factor session: %+v", r)
	}
	pc.Do(chromedp.Navigate(app1.authURL("acr_values", "urn:authcore:acr:mfa")), browser.WaitFor("button", "Sign in"))
	if got := pc.Eval(`location.pathname + ' ' + document.body.innerText`); !strings.Contains(got, "/console/authorize") || !strings.Contains(got, "second factor") {
		t.Fatalf("acr mfa with a one-factor session showed %q", got)
	}

	// A third-party app: consent_required before consent, asked once, remembered after.
	p.Do(chromedp.Navigate(third.authURL("prompt", "none")))
	if r := third.next(t); r.err != "consent_required" {
		t.Fatalf("third-party app before consent: %+v", r)
	}
	p.Do(chromedp.Navigate(third.authURL()), browser.WaitFor("button", "Approve"))
	p.Shot("third-party-consent")
	p.Do(browser.Click("button", "Approve"))
	if r := third.next(t); r.err != "" || r.claims["sid"] != sid {
		t.Fatalf("third-party app after consent: %+v", r)
	}
	p.Do(chromedp.Navigate(third.authURL("prompt", "none")))
	if r := third.next(t); r.err != "" {
		t.Fatalf("third-party app, consent remembered: %+v", r)
	}
	// Her connected apps list it: tenant users read their own grants.
	grants := a.Do(apptest.Req{Path: "/v1/auth-core/oauth/grants", Header: alice.Bearer()}).Expect(t, 200, nil)["grants"].([]any)
	found := false
	for _, g := range grants {
		found = found || g.(map[string]any)["clientId"] == third.clientID
	}
	if !found {
		t.Fatalf("alice's grants: %v", grants)
	}
	// Revoked by her, the consent is asked again; the project's admins see her grants.
	var grantID string
	for _, g := range grants {
		if g := g.(map[string]any); g["clientId"] == third.clientID {
			grantID = g["id"].(string)
		}
	}
	admins := a.Do(apptest.Req{Path: "/v1/projects/" + projectA + "/oauth/grants", Header: admin.Bearer()}).Expect(t, 200, nil)["grants"].([]any)
	if len(admins) == 0 || !strings.Contains(fmt.Sprint(admins), grantID) {
		t.Fatalf("the project's grants: %v", admins)
	}
	a.Do(apptest.Req{Method: http.MethodDelete, Path: "/v1/auth-core/oauth/grants/" + grantID, Header: alice.Bearer()}).Expect(t, 200, map[string]any{"revoked": true})
	p.Do(chromedp.Navigate(third.authURL("prompt", "none")))
	if r := third.next(t); r.err != "consent_required" {
		t.Fatalf("third-party app after its grant was revoked: %+v", r)
	}
	// Bob cannot revoke Alice's grant of another tenant.
	a.Do(apptest.Req{Method: http.MethodDelete, Path: "/v1/auth-core/oauth/grants/" + grantID, Header: bob.Bearer()}).Expect(t, 404, nil)

	// A tenant user of project B is never signed in to an app of project A: her session is
	// refused on the request. An SSO cookie made from a sid (every app sees it in its
	// id_tokens) is no SSO session without the server's MAC.
	f := newFlow(app1.clientID, app1.srv.URL+"/callback")
	f.extra.Set("scope", "openid")
	id := requestOfTenant(t, a, f, projectA)
	a.Do(apptest.Req{Path: "/v1/oauth/authorizations/" + id, Header: opener(bob, id)}).Expect(t, 403, map[string]any{"code": "tenant_session_required"})
	f.extra.Set("prompt", "none")
	res, err := noFollow.Do(withCookie(t, a.Base+"/oauth/authorize?"+f.query().Encode(), "ac_sso_"+projectA+"="+sid+".forged"))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if q := backQuery(t, f, res.Header.Get("Location")); q.Get("error") != "login_required" {
		t.Fatalf("a forged SSO cookie: %v", q)
	}
	// Alice's SSO session of project A is nothing at project B's app.
	p.Do(chromedp.Navigate(appB.authURL("prompt", "none")))
	if r := appB.next(t); r.err != "login_required" {
		t.Fatalf("project B's app with project A's session: %+v", r)
	}

	// A redirect URI or post-logout URI not registered is refused on a page.
	bad := newFlow(app1.clientID, app1.srv.URL+"/elsewhere")
	if res := authorize(t, a, bad.query()); res.StatusCode != http.StatusBadRequest {
		t.Fatalf("unregistered redirect_uri: %d", res.StatusCode)
	}
	res, err = noFollow.Get(a.Base + "/oauth/logout?" + url.Values{"id_token_hint": {r1.idToken}, "post_logout_redirect_uri": {"https://evil.example/"}}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusBadRequest {
		t.Fatalf("unregistered post_logout_redirect_uri: %d %s", res.StatusCode, res.Header.Get("Location"))
	}

	// RP-initiated logout from app 1 ends the SSO session: app 2's prompt=none is
	// login_required after it.
	p.Do(chromedp.Navigate(a.Base + "/oauth/logout?" + url.Values{"id_token_hint": {r1.idToken}, "post_logout_redirect_uri": {app1.srv.URL + "/logged-out"}}.Encode()))
	for deadline := time.Now().Add(10 * time.Second); p.Eval(`location.pathname`) != "/logged-out" && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
	}
	if got := p.Eval(`location.pathname`); got != "/logged-out" {
		t.Fatalf("after logout the browser is at %s", p.Eval(`location.href`))
	}
	if st, ok := sessionState(t, a, sid); !ok || st {
		t.Fatalf("the SSO session is live after RP logout (found %v)", ok)
	}
	p.Do(chromedp.Navigate(app2.authURL("prompt", "none")))
	if r := app2.next(t); r.err != "login_required" {
		t.Fatalf("app 2 after app 1's logout: %+v", r)
	}
}

// requestOfTenant is requestOf for an app's request: the console is sent the tenant.
func requestOfTenant(t *testing.T, a *apptest.App, f *flow, tenant string) string {
	t.Helper()
	res := authorize(t, a, f.query())
	loc, _ := url.Parse(res.Header.Get("Location"))
	if res.StatusCode != http.StatusFound || loc == nil || loc.Path != "/console/authorize" || loc.Query().Get("tenant") != tenant {
		t.Fatalf("authorize answered %d, Location %q", res.StatusCode, res.Header.Get("Location"))
	}
	id := loc.Query().Get("request")
	for _, c := range res.Cookies() {
		if c.Name == "ac_authz" {
			marks.Store(id, c.Name+"="+c.Value)
		}
	}
	return id
}

func withCookie(t *testing.T, u, cookie string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Cookie", cookie)
	return req
}

// sessionState reads whether session sid is live, from the store.
func sessionState(t *testing.T, a *apptest.App, sid string) (live, found bool) {
	t.Helper()
	s, err := a.Ent.Session.Get(context.Background(), sid)
	if err != nil {
		return false, false
	}
	return s.RevokedAt == nil, true
}

// Identity scopes without a resource, from a host's own client: the dashboard person
// consents for themselves, no project admin (SPEC §25); the grant is theirs alone,
// remembered, and issues identity scopes only.
func TestPersonalConsent(t *testing.T) {
	for _, st := range apptest.Stores(t) {
		t.Run(st.Name, func(t *testing.T) {
			a := apptest.Start(t, st)
			nobody := a.SignUp(t) // administers no project
			redirect := "http://127.0.0.1:9/callback"
			f := newFlow(register(t, a, redirect), redirect)
			f.extra.Set("scope", "openid email offline_access")
			id := requestOf(t, a, f)
			c := consentOf(a, nobody, id).Expect(t, 200, map[string]any{"canApprove": true, "personal": true, "remembered": false, "projectId": nil})
			got := decideAs(a, nobody, id, map[string]any{"decision": "approve", "csrfToken": c["csrfToken"]}).Expect(t, 200, nil)
			code := backQuery(t, f, got["redirectTo"].(string)).Get("code")
			tok := redeem(a, f, code, nil).Expect(t, 200, nil)
			if idt := apptest.ClaimsOf(t, tok["id_token"].(string)); idt["sub"] != nobody.UserID || idt["email"] != nobody.Email {
				t.Fatalf("id_token: %v", idt)
			}
			a.Do(apptest.Req{Path: "/v1/oauth/userinfo", Header: map[string]string{"Authorization": "Bearer " + tok["access_token"].(string)}}).
				Expect(t, 200, map[string]any{"sub": nobody.UserID, "email": nobody.Email})
			// Remembered: the next request is approved as it stands.
			f2 := newFlow(f.clientID, redirect)
			f2.extra.Set("scope", "openid email")
			consentOf(a, nobody, requestOf(t, a, f2)).Expect(t, 200, map[string]any{"remembered": true, "personal": true})
			// A resource or an agent scope is not personal: a project admin is needed again.
			f3 := newFlow(f.clientID, redirect)
			f3.extra.Set("scope", "openid mcp:tools")
			consentOf(a, nobody, requestOf(t, a, f3)).Expect(t, 200, map[string]any{"personal": false})
		})
	}
}
