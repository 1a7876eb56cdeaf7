package federation_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
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

// oidcApp is an app of the project as a stock relying party runs it: go-oidc and
// x/oauth2 with PKCE and a nonce, its callback on loopback verifying the id_token.
type oidcApp struct {
	conf       oauth2.Config
	verifier   *oidc.IDTokenVerifier
	verifierOf sync.Map // state → PKCE verifier
	claims     chan map[string]any
}

func newOIDCApp(t *testing.T, w *orgWorld) *oidcApp {
	t.Helper()
	app := &oidcApp{claims: make(chan map[string]any, 1)}
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if e := q.Get("error"); e != "" {
			app.claims <- map[string]any{"error": e}
			return
		}
		v, _ := app.verifierOf.Load(q.Get("state"))
		verifier, _ := v.(string)
		tok, err := app.conf.Exchange(r.Context(), q.Get("code"), oauth2.VerifierOption(verifier))
		if err != nil {
			app.claims <- map[string]any{"error": err.Error()}
			return
		}
		raw, _ := tok.Extra("id_token").(string)
		idt, err := app.verifier.Verify(r.Context(), raw)
		var c map[string]any
		if err == nil {
			err = idt.Claims(&c)
		}
		if err != nil || c["nonce"] != "n-"+q.Get("state") {
			app.claims <- map[string]any{"error": fmt.Sprintf("%v %v", err, c)}
			return
		}
		app.claims <- c
		_, _ = fmt.Fprint(rw, "signed in to the app")
	}))
	t.Cleanup(srv.Close)
	created := w.do(http.MethodPost, "/v1/projects/"+w.project+"/apps", map[string]any{"name": "Acme Portal", "type": "spa",
		"redirectUris": []string{srv.URL + "/callback"}}).Expect(t, 201, nil)
	clientID := created["app"].(map[string]any)["clientId"].(string)
	issuer := w.a.Get("/.well-known/openid-configuration").Expect(t, 200, nil)["issuer"].(string)
	prov, err := oidc.NewProvider(context.Background(), issuer)
	if err != nil {
		t.Fatal(err)
	}
	app.conf = oauth2.Config{ClientID: clientID, Endpoint: prov.Endpoint(), RedirectURL: srv.URL + "/callback", Scopes: []string{oidc.ScopeOpenID, "email"}}
	app.conf.Endpoint.AuthStyle = oauth2.AuthStyleInParams
	app.verifier = prov.Verifier(&oidc.Config{ClientID: clientID})
	return app
}

func (app *oidcApp) authURL() string {
	v := oauth2.GenerateVerifier()
	state := "s" + v[:10]
	app.verifierOf.Store(state, v)
	return app.conf.AuthCodeURL(state, oauth2.S256ChallengeOption(v), oauth2.SetAuthURLParam("nonce", "n-"+state))
}

func (app *oidcApp) next(t *testing.T) map[string]any {
	t.Helper()
	select {
	case c := <-app.claims:
		return c
	case <-time.After(30 * time.Second):
		t.Fatal("the app's callback was never reached")
		return nil
	}
}

// tab is a Chromium tab in a browser context of its own: no cookie of another tab.
func tab(t *testing.T) *browser.Page {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browser.Tab(t, nil), chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatal(err)
	}
	return browser.NewPage(t, ctx)
}

// Issue #43's "done means", as a new user would try it: a project admin creates the org
// "Acme" and sends its IT admin a setup link; the IT admin, in a browser and without an
// account, proves acme's domain by DNS, adds Acme's OIDC provider, tests it, and turns on
// SSO-required (with people joining as members); an Acme employee can then no longer
// sign in with a password, signs in through Acme's provider into an app, and the app's
// verified id_token names Acme in org_id.
func TestOrgSetupLinkToSSO(t *testing.T) {
	w := newOrgWorld(t, apptest.Stores(t)[0])
	domain := "acme-" + rnd(3) + ".example"
	acme := w.do(http.MethodPost, w.orgs(), map[string]any{"name": "Acme"}).Expect(t, 201, nil)["id"].(string)
	link := w.do(http.MethodPost, w.orgs()+"/"+acme+"/setup-links", map[string]any{"intents": []string{"domains", "sso"}}).Expect(t, 201, nil)["url"].(string)
	// An employee who signed up with a password before their company set anything up.
	employee := "erin-" + rnd(3) + "@" + domain
	w.do(http.MethodPost, "/v1/projects/"+w.project+"/users", map[string]any{"email": employee, "password": "correct horse battery", "emailVerified": true}).Expect(t, 201, nil)
	app := newOIDCApp(t, w)

	// The IT admin: the domain by its TXT record.
	it := tab(t)
	it.Do(chromedp.Navigate(link), browser.WaitFor("heading", "Set up Acme"),
		browser.TypeInto("textbox", "Domain", domain), browser.Click("button", "Add domain"),
		browser.WaitFor("button", "Verify "+domain))
	name, value := it.Eval(`document.querySelector('[aria-label="DNS name for `+domain+`"]').textContent`),
		it.Eval(`document.querySelector('[aria-label="DNS value for `+domain+`"]').textContent`)
	if name != "_authcore-challenge."+domain || value == "" {
		t.Fatalf("the page asks for TXT %q = %q", name, value)
	}
	w.zone.mu.Lock()
	w.zone.txt[name] = value
	w.zone.mu.Unlock()
	it.Do(browser.Click("button", "Verify "+domain), chromedp.WaitVisible("verified", chromedp.ByFunc(browser.Text("verified"))))

	// Acme's provider, registered upstream with the redirect URI the page shows.
	clientID, secret := "acme-"+rnd(4), "secret-"+rnd(12)
	it.Do(browser.TypeInto("textbox", "Connection name", "Acme IdP"), browser.TypeInto("textbox", "Issuer URL", w.up.Issuer),
		browser.TypeInto("textbox", "Client ID", clientID), chromedp.SendKeys(chromedp.CSS("input[name='Client secret']"), secret),
		browser.Click("button", "Add OIDC connection"), browser.WaitFor("button", "Test Acme IdP"))
	callback := it.Eval(`document.querySelector('[aria-label="Redirect URI to register"]').textContent`)
	if !strings.HasPrefix(callback, w.a.Config.PublicURL+"/v1/auth-core/providers/") {
		t.Fatalf("redirect URI to register %q", callback)
	}
	w.up.AddClient(t, clientID, secret, callback)

	// Tested by signing in once upstream; the page shows what the connection maps.
	it.Do(browser.Click("button", "Test Acme IdP"), chromedp.WaitVisible("this address", chromedp.ByFunc(browser.Text("this address"))))
	testURL := it.Eval(`document.querySelector('a[target=_blank]').href`)
	tester := w.account(t, "it-"+rnd(3)+"@"+domain, true)
	if res := newPerson(t).via(testURL, tester.Login); res.StatusCode != http.StatusOK || cookie(res, "sAccessToken") != "" {
		t.Fatalf("the connection test's callback: %d %s", res.StatusCode, body(t, res))
	}
	it.Do(chromedp.WaitVisible("mapped", chromedp.ByFunc(browser.Text(tester.Email))))
	if got := it.Eval(`document.querySelector('[aria-label="Test result"]').innerText`); !strings.Contains(got, "emailTrusted\ttrue") {
		t.Fatalf("the test result shows %q", got)
	}
	it.Shot("setup-tested")

	// SSO required, people of the domain joining as members.
	it.Do(chromedp.Click(chromedp.CSS(`input[aria-label="Require SSO for our domains"]`)))
	it.Do(chromedp.SetValue(`select[name="People who sign in with our domains join as"]`, "member"))
	// The test's window.open left the page a background tab, whose accessibility tree
	// Chromium does not keep: the button is pressed by script.
	it.Eval(`[...document.querySelectorAll('button')].find(b => b.textContent === 'Save policy').click(), 'ok'`)
	it.Do(chromedp.WaitVisible("saved", chromedp.ByFunc(browser.Text("Policy saved."))))
	w.do(http.MethodGet, w.orgs()+"/"+acme+"/policy", nil).Expect(t, 200, map[string]any{"ssoRequired": true, "autoJoin": map[string]any{"role": "member"}})

	// The employee: no password any more.
	w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signin",
		Body: map[string]any{"email": employee, "password": "correct horse battery", "tenantId": w.project}}).Expect(t, 403, map[string]any{"code": "sso_required", "orgId": acme})

	// Through Acme's provider into the app: the sign-in page sends the address there.
	up := w.account(t, employee, true)
	p := tab(t)
	p.Do(chromedp.Navigate(app.authURL()), browser.WaitFor("button", "Sign in"),
		browser.TypeInto("textbox", "Email", employee), browser.TypeInto("textbox", "Password", "anything"), browser.Click("button", "Sign in"),
		chromedp.WaitVisible(chromedp.CSS("input[name=login]")))
	p.Do(chromedp.SendKeys(chromedp.CSS("input[name=login]"), up.Login), chromedp.SendKeys(chromedp.CSS("input[name=password]"), "any password"),
		chromedp.Click(chromedp.CSS("button[type=submit]")), browser.WaitFor("button", "Continue"), browser.Click("button", "Continue"))
	c := app.next(t)
	if c["error"] != nil || c["email"] != employee || c["org_id"] != acme || c["org_role"] != "member" {
		t.Fatalf("the app's id_token: %v", c)
	}
}
