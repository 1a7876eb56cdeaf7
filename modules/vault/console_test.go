package vault_test

import (
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/internal/browser"
	"github.com/authcore/authcore/internal/interop"
)

// The person's side in Chromium (SPEC §23): they sign in with the provider through its own
// pages, connect their account for one agent on the console's Connected accounts screen,
// the agent gets the upstream's token, and revoking on the same screen ends it here and
// at the upstream.
func TestConsoleConnectedAccounts(t *testing.T) {
	interop.Dir(t)
	w := newSignedOutWorld(t, apptest.Start(t, apptest.Stores(t)[0], appOptions()))
	w.login, w.email = "u-"+rnd(6), apptest.UniqueEmail(t)
	w.up.AddAccount(t, interop.Account{Login: w.login, Email: w.email, EmailVerified: true, Name: "Upstream Person"})
	p := browser.NewPage(t, browser.Tab(t, nil))
	text := func(s string) chromedp.Action[chromedp.Void] {
		return chromedp.WaitVisible(s, chromedp.ByFunc(browser.Text(s)))
	}

	p.Do(chromedp.Navigate(w.a.Base+"/console?tenant="+w.project), browser.Click("button", "Sign in with Acme Mail"),
		chromedp.WaitVisible(chromedp.CSS("input[name=login]")),
		chromedp.SendKeys(chromedp.CSS("input[name=login]"), w.login), chromedp.SendKeys(chromedp.CSS("input[name=password]"), "any password"),
		chromedp.Click(chromedp.CSS("button[type=submit]")), browser.WaitFor("button", "Continue"), browser.Click("button", "Continue"),
		browser.WaitFor("link", "Connected accounts"), browser.Click("link", "Connected accounts"), browser.WaitFor("button", "Connect"))
	p.Do(browser.Click("checkbox", "mail-agent ("+w.agentA[0]+")"), browser.Click("button", "Connect"),
		browser.WaitFor("button", "Revoke Acme Mail"))
	p.Shot("connected")
	tok := w.exchange(t, w.agentA).Expect(t, 200, nil)["access_token"].(string)
	if w.userinfo(t, tok) != 200 {
		t.Fatal("the upstream refuses the token")
	}
	oauthError(t, w.exchange(t, w.agentB), 400, "invalid_grant")

	p.Do(browser.Click("button", "Revoke Acme Mail"), chromedp.Click(chromedp.CSS("#confirm-yes")), text("Revoked here and at Acme Mail."))
	p.Shot("revoked")
	oauthError(t, w.exchange(t, w.agentA), 400, "invalid_grant")
	if w.userinfo(t, tok) == 200 {
		t.Fatal("the upstream still takes the token")
	}
}
