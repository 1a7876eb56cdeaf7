package console_test

import (
	"net/http"
	"regexp"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/authcore/authcore/ent/session"
	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/internal/browser"
	"github.com/authcore/authcore/internal/testkit"
	"github.com/authcore/authcore/platform/config"
)

// SPEC §26 in a real browser: a person of a project opens the mailed invitation of an
// org, signs in to the project (the link names it), joins, and on their account switches
// the organization their session acts in; session/me then says so.
func TestConsoleOrgInvitationAndSwitch(t *testing.T) {
	in := testkit.StartInbox(t)
	a := apptest.Start(t, apptest.Stores(t)[0], apptest.WithConfig(func(c *config.Config) { c.SMTPURL = in.URL }))
	admin := a.SignUp(t)
	project := a.CreateProject(t, admin)
	do := func(method, path string, body any) *apptest.Response {
		return a.Do(apptest.Req{Method: method, Path: "/v1/projects/" + project + path, Body: body, Header: admin.Bearer()})
	}
	acme := do(http.MethodPost, "/orgs", map[string]any{"name": "Acme"}).Expect(t, 201, nil)["id"].(string)
	globex := do(http.MethodPost, "/orgs", map[string]any{"name": "Globex"}).Expect(t, 201, nil)["id"].(string)
	email, password := apptest.UniqueEmail(t), "correct horse battery"
	person := do(http.MethodPost, "/users", map[string]any{"email": email, "password": password, "emailVerified": true}).Expect(t, 201, nil)["id"].(string)
	do(http.MethodPost, "/orgs/"+globex+"/members", map[string]any{"userId": person, "role": "admin"}).Expect(t, 201, nil)
	do(http.MethodPost, "/orgs/"+acme+"/invitations", map[string]any{"email": email, "role": "member"}).Expect(t, 201, nil)
	link := regexp.MustCompile(`https?://\S+/console/org-invite\?token=ac_oinv_[0-9A-Za-z]+&tenant=\S+`).FindString(in.Wait(t, 1)[0].Text)
	if link == "" {
		t.Fatalf("no org invitation link in the mail:\n%s", in.Mails()[0].Text)
	}

	p := browser.NewPage(t, browser.Tab(t, nil))
	p.Do(chromedp.Navigate(link), chromedp.WaitVisible("invited address", chromedp.ByFunc(browser.Text("Sign in with the invited address"))),
		browser.TypeInto("textbox", "Email", email), browser.TypeInto("textbox", "Password", password), browser.Click("button", "Sign in"),
		browser.WaitFor("button", "Join the organization"), browser.Click("button", "Join the organization"),
		chromedp.WaitVisible("member", chromedp.ByFunc(browser.Text("You are now a member of Acme, as member."))))
	p.Shot("org-invitation-accepted")
	members := do(http.MethodGet, "/orgs/"+acme+"/members", nil).Expect(t, 200, nil)["members"].([]any)
	if len(members) != 1 || members[0].(map[string]any)["userId"] != person {
		t.Fatalf("Acme's members after the accept: %v", members)
	}

	p.Do(browser.Click("link", "Continue"), browser.WaitFor("combobox", "Active organization"),
		chromedp.SetValue(browser.Label("combobox", "Active organization"), globex, browser.ByRole("combobox", "Active organization")),
		browser.Click("button", "Switch"), chromedp.WaitVisible("acting", chromedp.ByFunc(browser.Text("Now acting in Globex as admin."))))
	sessions := a.Ent.Session.Query().Where(session.UserID(person)).AllX(t.Context())
	if len(sessions) != 1 || sessions[0].OrgID == nil || *sessions[0].OrgID != globex {
		t.Fatalf("the browser's session after the switch: %+v", sessions)
	}
}
