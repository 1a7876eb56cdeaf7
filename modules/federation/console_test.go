package federation_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/internal/browser"
)

// Done means (issue 34), tried as people would in a real browser: a project admin adds a
// generic OIDC provider by issuer URL, client id and secret on the console's Sign-in
// methods screen and turns the email code on; an end user of the project signs in with
// the provider (its own login and consent pages), then later with an email code, and
// both land on the same account.
func TestConsoleFederatedSignIn(t *testing.T) {
	w := newWorld(t, apptest.Stores(t)[0])
	p := browser.NewPage(t, browser.Tab(t, nil))
	text := func(s string) chromedp.Action[chromedp.Void] {
		return chromedp.WaitVisible(s, chromedp.ByFunc(browser.Text(s)))
	}

	// The admin configures the project's sign-in.
	p.Do(chromedp.Navigate(w.a.Base+"/console"), browser.WaitFor("button", "Sign in"),
		browser.TypeInto("textbox", "Email", w.admin.Email), browser.TypeInto("textbox", "Password", w.admin.Password),
		browser.Click("button", "Sign in"), browser.WaitFor("link", "Sign-in methods"),
		browser.Click("link", "Sign-in methods"), browser.WaitFor("button", "Add provider"))
	p.Shot("sign-in-methods")
	clientID, secret := "console-"+rnd(4), "console-secret-"+rnd(8)
	p.Do(chromedp.Click(chromedp.CSS("#m-email")), browser.Click("button", "Save methods"), text("Saved."),
		browser.TypeInto("textbox", "Provider name", "Acme SSO"), browser.TypeInto("textbox", "Issuer URL", w.up.Issuer),
		browser.TypeInto("textbox", "Client ID", clientID), chromedp.SendKeys(chromedp.CSS("input[name='Client secret']"), secret),
		chromedp.Click(chromedp.CSS("#p-trust")), browser.Click("button", "Add provider"),
		chromedp.WaitVisible(chromedp.CSS("[data-callback]")))
	p.Shot("provider-added")
	callback := p.Eval(`document.querySelector('[data-callback]').textContent`)
	if !strings.HasPrefix(callback, w.a.Config.PublicURL+"/v1/auth-core/providers/idp_") || strings.Contains(p.Eval(`document.body.innerText`), secret) {
		t.Fatalf("callback %q, or the secret shown", callback)
	}
	w.up.AddClient(t, clientID, secret, callback) // what the admin does at their provider
	p.Do(browser.Click("button", "Sign out"), browser.WaitFor("button", "Sign in"))

	// An end user signs in with the provider, through its own pages.
	email := apptest.UniqueEmail(t)
	acc := w.account(t, email, true)
	p.Do(chromedp.Navigate(w.a.Base+"/console?tenant="+w.project), browser.WaitFor("button", "Sign in with Acme SSO"))
	p.Shot("end-user-sign-in")
	p.Do(browser.Click("button", "Sign in with Acme SSO"),
		chromedp.WaitVisible(chromedp.CSS("input[name=login]")))
	p.Shot("upstream-login")
	p.Do(chromedp.SendKeys(chromedp.CSS("input[name=login]"), acc.Login), chromedp.SendKeys(chromedp.CSS("input[name=password]"), "any password"),
		chromedp.Click(chromedp.CSS("button[type=submit]")), browser.WaitFor("button", "Continue"))
	p.Shot("upstream-consent")
	p.Do(browser.Click("button", "Continue"), browser.WaitFor("link", "Account"), text("Signed in as "+email), text("Linked identities"), text("Acme SSO"))
	p.Shot("signed-in-with-provider")
	if loc := p.Eval(`location.origin`); loc != w.a.Config.PublicURL {
		t.Fatalf("ended at %s", loc)
	}

	// Later, by an email code: the same account, with its linked identity.
	p.Do(browser.Click("button", "Sign out"), browser.WaitFor("button", "Sign in with Acme SSO"),
		browser.Click("link", "Sign in with an email code"), browser.WaitFor("button", "Send code"),
		browser.TypeInto("textbox", "Email", email), browser.Click("button", "Send code"), browser.WaitFor("textbox", "Code"))
	code, _ := w.waitMail(t, email, 1)
	p.Do(browser.TypeInto("textbox", "Code", code), browser.Click("button", "Sign in with code"),
		text("Signed in as "+email), text("Acme SSO"))
	p.Shot("signed-in-with-code")
	// And by the link in a mail: the console page posts its token.
	p.Do(browser.Click("button", "Sign out"), browser.WaitFor("button", "Sign in with Acme SSO"))
	w.mailRequest(t, email).Expect(t, 202, nil)
	_, link := w.waitMail(t, email, 2)
	p.Do(chromedp.Navigate(w.a.Base+"/console/signin-link?token="+link), text("Signed in as "+email))
	if loc := p.Eval(`location.pathname + location.search`); strings.Contains(loc, "token") {
		t.Fatalf("the token stayed in the address bar: %s", loc)
	}
	if n := w.users(t, email); n != 1 {
		t.Fatalf("%d users with %s", n, email)
	}

	// With a second factor, the provider's sign-in continues to the console's second step.
	w.mailRequest(t, email).Expect(t, 202, nil)
	code, _ = w.waitMail(t, email, 3)
	s := w.mailSignIn(t, map[string]any{"email": email, "code": code, "tenantId": w.project}).Expect(t, 200, nil)
	access := s["session"].(map[string]any)["accessToken"].(string)
	pending := w.a.Do(apptest.Req{Method: "POST", Path: "/v1/auth-core/mfa/totp", Body: map[string]any{}, Header: bearer(access)}).Expect(t, 201, nil)
	w.a.Do(apptest.Req{Method: "POST", Path: "/v1/auth-core/mfa/totp/" + pending["id"].(string) + "/confirm",
		Body: map[string]any{"code": totpCode(t, pending["secret"].(string), w.a.Clock.Now())}, Header: bearer(access)}).Expect(t, 200, nil)
	w.a.Clock.Advance(30 * time.Second) // the enrolment spent this step's code
	p.Do(browser.Click("button", "Sign out"), browser.WaitFor("button", "Sign in with Acme SSO"), browser.Click("button", "Sign in with Acme SSO"))
	// The upstream may remember this browser's session and consent; its pages, if shown,
	// are answered as before.
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		state := p.Eval(`document.readyState !== 'complete' ? 'wait' : document.querySelector('input[name=login]') ? 'login' : [...document.querySelectorAll('button')].some(b => b.textContent === 'Continue') ? 'consent' : document.body.innerText.includes('Two-step sign-in') ? 'done' : 'wait'`)
		if state == "done" {
			break
		}
		switch state {
		case "login":
			p.Do(chromedp.SendKeys(chromedp.CSS("input[name=login]"), acc.Login), chromedp.SendKeys(chromedp.CSS("input[name=password]"), "any"),
				chromedp.Click(chromedp.CSS("button[type=submit]")))
		case "consent":
			p.Do(browser.Click("button", "Continue"))
		}
	}
	p.Do(browser.WaitFor("textbox", "Authentication code"))
	if strings.Contains(p.Eval(`document.cookie`), "sAccessToken") {
		t.Fatal("a session before the second factor")
	}
	p.Shot("second-step-after-provider")
	p.Do(browser.TypeInto("textbox", "Authentication code", totpCode(t, pending["secret"].(string), w.a.Clock.Now())),
		browser.Click("button", "Verify"), text("Signed in as "+email))
}
