package console_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/internal/browser"
)

// The Apps screen (SPEC §25), driven as an admin would in headless Chromium: an app is
// registered and its secret shown once, its redirect URIs edited, its secret rotated (a
// new one shown), and it is deleted; the API agrees at each step. "Connected apps" is
// still there beside it.
func TestConsoleProjectApps(t *testing.T) {
	a := apptest.Start(t, apptest.Stores(t)[0])
	admin := a.SignUp(t)
	prj := a.CreateProject(t, admin)
	apps := func() []any {
		return a.Do(apptest.Req{Path: "/v1/projects/" + prj + "/apps", Header: admin.Bearer()}).Expect(t, 200, nil)["apps"].([]any)
	}
	p := browser.NewPage(t, browser.Tab(t, nil))
	p.Do(chromedp.Navigate(a.Base+"/console"), browser.TypeInto("textbox", "Email", admin.Email), browser.TypeInto("textbox", "Password", admin.Password),
		browser.Click("button", "Sign in"), browser.WaitFor("link", "Connected apps"), browser.Click("link", "Apps"), browser.WaitFor("button", "Register app"),
		browser.TypeInto("textbox", "App name", "Billing"), browser.TypeInto("textbox", "Redirect URIs", "https://billing.example/cb"),
		browser.Click("button", "Register app"), chromedp.WaitVisible(chromedp.CSS(`[data-secret="Client secret"]`)))
	first := p.Eval(`document.querySelector('[data-secret="Client secret"]').textContent`)
	id := p.Eval(`document.querySelector('[data-secret="Client ID"]').textContent`)
	if !strings.HasPrefix(first, "ac_rcs_") || !strings.HasPrefix(id, "dcr_") {
		t.Fatalf("secret panel %q %q", id, first)
	}
	if l := apps(); len(l) != 1 || l[0].(map[string]any)["clientId"] != id || l[0].(map[string]any)["type"] != "web" {
		t.Fatalf("apps %v", l)
	}
	p.Shot("apps-registered")

	p.Do(browser.Click("button", "Edit Billing"), browser.WaitFor("button", "Save Billing"))
	p.Eval(`document.querySelector('input[name="Redirect URIs of Billing"]').value = ''`)
	p.Do(browser.TypeInto("textbox", "Redirect URIs of Billing", "https://billing.example/new"), browser.Click("button", "Save Billing"),
		chromedp.WaitVisible("new uri", chromedp.ByFunc(browser.Text("https://billing.example/new"))))
	if r := apps()[0].(map[string]any)["redirectUris"].([]any); len(r) != 1 || r[0] != "https://billing.example/new" {
		t.Fatalf("redirect URIs after the edit: %v", r)
	}

	p.Do(browser.Click("button", "Rotate secret of Billing"), chromedp.Click(chromedp.CSS("dialog[open] #confirm-yes")),
		chromedp.WaitVisible(chromedp.CSS(`[aria-label="New client secret for Billing"] [data-secret="Client secret"]`)))
	second := p.Eval(`document.querySelector('[aria-label="New client secret for Billing"] [data-secret="Client secret"]').textContent`)
	if !strings.HasPrefix(second, "ac_rcs_") || second == first || apps()[0].(map[string]any)["previousSecretExpiresAt"] == nil {
		t.Fatalf("rotated secret %q", second)
	}
	p.Shot("apps-rotated")

	p.Do(browser.Click("button", "Delete Billing"), chromedp.Click(chromedp.CSS("dialog[open] #confirm-yes")),
		chromedp.WaitNotPresent(browser.Label("button", "Delete Billing"), browser.ByRole("button", "Delete Billing")))
	if l := apps(); len(l) != 0 {
		t.Fatalf("still registered: %v", l)
	}
	p.Do(browser.Click("link", "Connected apps"), browser.WaitFor("link", "Apps"))
}
