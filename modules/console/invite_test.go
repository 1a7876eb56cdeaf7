package console_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/internal/browser"
	"github.com/authcore/authcore/internal/testkit"
	"github.com/authcore/authcore/platform/config"
)

// SPEC §9b (N19) in a real browser: an admin invites an address on the Members screen and
// sees it pending; the person, who has no account, opens the mailed link, signs up with
// that address, is told to verify it, verifies it by its own mailed link, opens the
// invitation again and accepts; the API then counts them a member and nothing is pending.
func TestConsoleInvitation(t *testing.T) {
	in := testkit.StartInbox(t)
	a := apptest.Start(t, apptest.Stores(t)[0], apptest.WithConfig(func(c *config.Config) { c.SMTPURL = in.URL }))
	admin := a.SignUp(t)
	prj := a.CreateProject(t, admin)
	invitee := apptest.UniqueEmail(t)
	p := browser.NewPage(t, browser.Tab(t, nil))
	p.Do(chromedp.Navigate(a.Base+"/console"), browser.TypeInto("textbox", "Email", admin.Email), browser.TypeInto("textbox", "Password", admin.Password),
		browser.Click("button", "Sign in"), browser.Click("link", "Members"), browser.WaitFor("button", "Send invitation"),
		browser.TypeInto("textbox", "Email to invite", invitee),
		chromedp.SetValue(browser.Label("combobox", "Role of the invitee"), "developer", browser.ByRole("combobox", "Role of the invitee")),
		browser.Click("button", "Send invitation"),
		chromedp.WaitVisible("Invitation sent", chromedp.ByFunc(browser.Text("Invitation sent to "+invitee))),
		browser.WaitFor("button", "Revoke the invitation of "+invitee))
	p.Shot("invitation-pending")
	pending := a.Do(apptest.Req{Path: "/v1/projects/" + prj + "/invitations", Header: admin.Bearer()}).Expect(t, 200, nil)["invitations"].([]any)
	if len(pending) != 1 || pending[0].(map[string]any)["email"] != invitee || pending[0].(map[string]any)["role"] != "developer" {
		t.Fatalf("pending: %v", pending)
	}
	link := regexp.MustCompile(`https?://\S+/console/invite\?token=ac_inv_[0-9A-Za-z]+`).FindString(in.Wait(t, 1)[0].Text)
	if link == "" {
		t.Fatalf("no invitation link in the mail:\n%s", in.Mails()[0].Text)
	}

	// The admin signs out; the person follows the link and signs up with the address.
	p.Do(browser.Click("button", "Sign out"), browser.WaitFor("button", "Sign in"),
		chromedp.Navigate(link), chromedp.WaitVisible("invited address", chromedp.ByFunc(browser.Text("Sign in with the invited address"))),
		browser.Click("link", "Create an account"), browser.WaitFor("button", "Sign up"),
		browser.TypeInto("textbox", "Email", invitee), browser.TypeInto("textbox", "Password", "correct horse battery"), browser.Click("button", "Sign up"),
		browser.WaitFor("button", "Accept invitation"), browser.Click("button", "Accept invitation"),
		chromedp.WaitVisible("verify", chromedp.ByFunc(browser.Text("verify your email address first"))))
	p.Shot("invitation-unverified")

	// Verified by its own mail, the invitation is accepted.
	p.Do(browser.Click("button", "Send verification mail"), chromedp.WaitVisible("follow the link", chromedp.ByFunc(browser.Text("follow the link"))))
	verify := regexp.MustCompile(`https?://\S+/console/verify\?token=[0-9A-Za-z_]+`).FindString(in.Wait(t, 2)[1].Text)
	p.Do(chromedp.Navigate(verify), chromedp.WaitVisible("verified", chromedp.ByFunc(browser.Text("your address is verified"))),
		chromedp.Navigate(link), browser.Click("button", "Accept invitation"),
		chromedp.WaitVisible("member", chromedp.ByFunc(browser.Text("You are now a member of"))))
	p.Shot("invitation-accepted")
	if strings.Contains(p.Eval(`location.href`), "ac_inv_") {
		t.Fatal("the invitation's secret stays in the address bar")
	}
	members := a.Do(apptest.Req{Method: http.MethodGet, Path: "/v1/projects/" + prj + "/members", Header: admin.Bearer()}).Expect(t, 200, nil)["members"].([]any)
	var roles []string
	for _, m := range members {
		if m.(map[string]any)["email"] == invitee {
			roles = append(roles, m.(map[string]any)["role"].(string))
		}
	}
	if len(roles) != 1 || roles[0] != "developer" {
		t.Fatalf("members: %v", members)
	}
	if pending := a.Do(apptest.Req{Path: "/v1/projects/" + prj + "/invitations", Header: admin.Bearer()}).Expect(t, 200, nil)["invitations"].([]any); len(pending) != 0 {
		t.Fatalf("still pending: %v", pending)
	}
}
