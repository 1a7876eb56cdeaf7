package approval_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/internal/browser"
)

// What stock clients tripped on: the approval card named an auth badge's client by its id
// (ac_…). The card names whoever asks by the name a person knows it by: the auth badge's,
// the agent's; by the id only when there is no name (a request stored without one). The
// name is the badge owner's text and stands as text: markup in it is never markup.
func TestApprovalCardNamesTheClient(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		const badgeName = `<b>Billing</b> service`
		got := w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + w.project + "/service-badges",
			Body: map[string]any{"name": badgeName, "product": "auth", "role": "developer"}, Header: w.admin.Bearer()}).Expect(t, 201, nil)
		badge := got["auth"].(map[string]any)
		badgeClient := badge["clientId"].(string)
		w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/bc-authorize",
			Body:   url.Values{"scope": {"openid"}, "login_hint": {w.person.Email}, "binding_message": {"From the badge"}, "authorization_details": {invoice}}.Encode(),
			Header: map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Authorization": basic(badgeClient, badge["clientSecret"].(string))}}).
			Expect(t, 200, nil)
		w.ask(t, url.Values{"binding_message": {"From the agent"}})
		// A request stored with no name (an older one): only the id is left to show.
		w.ask(t, url.Values{"binding_message": {"From nobody named"}})
		res, err := w.a.DB.SQL.ExecContext(t.Context(), "UPDATE backchannel_requests SET client_name = '' WHERE binding_message = 'From nobody named'")
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			t.Fatalf("unnamed %d stored requests, want 1", n)
		}

		page := browser.NewPage(t, browser.Tab(t, nil))
		page.Do(chromedp.Navigate(w.a.Base+"/console?tenant="+url.QueryEscape(w.project)+"#/approvals"),
			browser.WaitFor("button", "Sign in"), browser.TypeInto("textbox", "Email", w.person.Email),
			browser.TypeInto("textbox", "Password", w.person.Password), browser.Click("button", "Sign in"),
			browser.WaitFor("article", "Request from billing-bot"))
		page.Shot("approval-card-names")
		heading := func(binding string) string {
			return page.Eval(`(() => { const a = [...document.querySelectorAll('article.approval')].find((x) => x.querySelector('.binding')?.textContent === '` + binding + `');
				return a ? a.getAttribute('aria-label') + ' | ' + a.querySelector('h2').textContent : 'no card' })()`)
		}
		for binding, who := range map[string]string{"From the badge": badgeName, "From the agent": "billing-bot", "From nobody named": w.agentID} {
			if got, want := heading(binding), "Request from "+who+" | "+who+" asks for your approval"; got != want {
				t.Errorf("the card of %q reads %q, want %q", binding, got, want)
			}
		}
		if n := page.Eval(`String(document.querySelectorAll('article.approval b').length)`); n != "0" {
			t.Errorf("the badge's name was drawn as markup: %s <b> elements", n)
		}
	})
}
