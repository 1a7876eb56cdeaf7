package console_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"
	"go.uber.org/fx"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/internal/browser"
	"github.com/authcore/authcore/modules/usage"
)

// The console draws the project's usage and each token's, and says the same numbers in
// their text alternatives (SPEC §19): what a person sees at a glance, the test reads.
func TestConsoleUsage(t *testing.T) {
	var rec *usage.Recorder
	a := apptest.Start(t, apptest.Stores(t)[0], apptest.WithFx(fx.Populate(&rec)))
	admin := a.SignUp(t)
	prj := a.CreateProject(t, admin)
	mint := func(name string) (string, string) {
		got := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/projects/" + prj + "/ai/agents", Body: map[string]any{"agentName": name}, Header: admin.Bearer()}).Expect(t, 200, nil)
		return got["agent"].(map[string]any)["id"].(string), got["plaintext"].(string)
	}
	_, busy := mint("busy-bot")
	id, refused := mint("refused-bot")
	for range 3 {
		a.Get("/v1/auth-core/ai/me", "Authorization", "Bearer "+busy).Expect(t, 200, nil)
	}
	a.Get("/v1/auth-core/ai/me", "Authorization", "Bearer "+refused).Expect(t, 200, nil)
	a.Do(apptest.Req{Method: http.MethodDelete, Path: "/v1/auth-core/projects/" + prj + "/ai/agents/" + id, Header: admin.Bearer()}).Expect(t, 200, nil)
	for range 2 {
		a.Get("/v1/auth-core/ai/me", "Authorization", "Bearer "+refused).Expect(t, 401, nil)
	}
	if err := rec.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}

	p := browser.NewPage(t, browser.Tab(t, nil))
	p.Do(chromedp.Navigate(a.Base+"/console"), browser.TypeInto("textbox", "Email", admin.Email), browser.TypeInto("textbox", "Password", admin.Password),
		browser.Click("button", "Sign in"), browser.Click("link", "Usage"),
		browser.WaitFor("image", "Verifications by hour: 4 ok, 2 denied, 0 rate limited"))
	if got := p.Eval(`[...document.querySelectorAll('table')].map(t => t.innerText).join('\n')`); got == "" {
		t.Fatal("no table beside the chart")
	}
	p.Shot("usage")
	p.NoSideScroll("Usage")
	p.Do(browser.Click("link", "Agent tokens"), browser.WaitFor("image", "Last 24 hours: 3 ok · 0 denied"),
		chromedp.Click(chromedp.CSS("table summary")),
		browser.WaitFor("image", "Verifications of busy-bot by hour: 3 ok, 0 denied, 0 rate limited"))
	p.Shot("agent-usage")
}
