package federation_test

import (
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/internal/browser"
)

// A person in Chromium signs in to an app through their org's SAML IdP (SPEC §27): the
// app's go-oidc sign-in opens the console's sign-in page, whose home-realm discovery
// sends the org's address (ssoRequired) to the SAML login; the signed AuthnRequest goes
// to crewjam's IdP, where the person has a session; the IdP's page posts the encrypted
// Response to the ACS; the new person, made and enrolled in the org, goes back to the
// authorization and on to the app, whose verified id_token names the org.
func TestSAMLBrowserToApp(t *testing.T) {
	w := newSAMLWorld(t, apptest.Stores(t)[0], nil)
	w.do(http.MethodPut, w.orgs()+"/"+w.org+"/policy", map[string]any{"ssoRequired": true, "mfaRequired": false, "sessionMaxHours": 0,
		"revokeMintedOnDeprovision": false, "autoJoin": map[string]any{"role": "member"}}).Expect(t, 200, nil)
	app := newOIDCApp(t, w.orgWorld)
	employee := "emp-" + rnd(3) + "@" + w.domain
	w.idp.addUser(t, "emp", employee)

	p := tab(t)
	// At work, the person is signed in at their IdP already (see loginAtIdP for why).
	p.Do(chromedp.Navigate(w.idp.URL+"/login"), chromedp.WaitVisible(chromedp.CSS("input[name=user]")),
		chromedp.SendKeys(chromedp.CSS("input[name=user]"), "emp"), chromedp.SendKeys(chromedp.CSS("input[name=password]"), "pw-emp"),
		chromedp.Submit(chromedp.CSS("input[name=password]")), chromedp.WaitVisible(chromedp.CSS("body")))
	p.Do(chromedp.Navigate(app.authURL()), browser.WaitFor("button", "Sign in"),
		browser.TypeInto("textbox", "Email", employee), browser.TypeInto("textbox", "Password", "anything"), browser.Click("button", "Sign in"))
	c := app.next(t)
	if c["error"] != nil || c["email"] != employee || c["org_id"] != w.org || c["org_role"] != "member" {
		t.Fatalf("the app's id_token: %v", c)
	}
	if w.users(t, employee) != 1 || w.samlIdentities(t, w.conn) != 1 {
		t.Fatalf("users %d identities %d", w.users(t, employee), w.samlIdentities(t, w.conn))
	}
}
