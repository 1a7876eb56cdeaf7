package console_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/internal/browser"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/guard"
)

// The Organizations screen (SPEC §26), driven as a project admin would in headless
// Chromium: an org is created, a second one with its slug refused with the reason shown;
// a dashboard user is refused as a member, the reason shown;
// one of the project's users is added by email as admin, made a member, and removed; the
// project defines a role "billing", another user is given it, and the role cannot be
// removed while held; the org is closed and opened again; a setup link is made and
// its URL shown once; the org is renamed and re-slugged after a step-up, then deleted. The
// API agrees at each step, and the screen fits a narrow phone.
func TestConsoleOrgs(t *testing.T) {
	// The clock jumps past the step-up window: the test's own tokens stay valid meanwhile.
	a := apptest.Start(t, apptest.Stores(t)[0], apptest.WithConfig(func(c *config.Config) { c.AccessTTL = 24 * time.Hour }))
	admin := a.SignUp(t)
	prj := a.CreateProject(t, admin)
	ann, bob := a.SignUpIn(t, prj), a.SignUpIn(t, prj)
	get := func(path string, status int) map[string]any {
		t.Helper()
		return a.Do(apptest.Req{Path: "/v1/projects/" + prj + path, Header: admin.Bearer()}).Expect(t, status, nil)
	}
	orgs := func() []map[string]any {
		t.Helper()
		var out []map[string]any
		for _, o := range get("/orgs", 200)["orgs"].([]any) {
			out = append(out, o.(map[string]any))
		}
		return out
	}
	// roleOf is each member's role, by email.
	roleOf := func(org string) map[string]string {
		t.Helper()
		out := map[string]string{}
		for _, m := range get("/orgs/"+org+"/members", 200)["members"].([]any) {
			out[m.(map[string]any)["email"].(string)] = m.(map[string]any)["role"].(string)
		}
		return out
	}
	status := func(text string) chromedp.Action[chromedp.Void] {
		return chromedp.WaitVisible(text, chromedp.ByFunc(browser.Text(text)))
	}
	confirmed := chromedp.Click(chromedp.CSS("dialog[open] #confirm-yes"))

	pg := browser.NewPage(t, browser.Tab(t, nil))
	pg.Do(chromedp.Navigate(a.Base+"/console"), browser.TypeInto("textbox", "Email", admin.Email), browser.TypeInto("textbox", "Password", admin.Password),
		browser.Click("button", "Sign in"), browser.WaitFor("link", "Apps"), browser.Click("link", "Organizations"), browser.WaitFor("button", "Create organization"),
		status("No organizations yet."))
	if v := pg.Eval(`[...document.querySelectorAll('main table')].map((t) => t.caption.textContent).join()`); v != "Organization roles" {
		t.Fatalf("tables before any org: %q", v)
	}

	// Created with a slug made from its name; it opens.
	pg.Do(browser.TypeInto("textbox", "Name", "Acme"), browser.Click("button", "Create organization"), browser.WaitFor("region", "Organization Acme"),
		browser.WaitFor("button", "Open Acme"))
	got := orgs()
	if len(got) != 1 || got[0]["name"] != "Acme" || got[0]["slug"] != "acme" {
		t.Fatalf("orgs after the create: %v", got)
	}
	acme := got[0]["id"].(string)
	pg.Shot("org-created")

	// A second org with the same slug is refused: the reason is shown by the form, which
	// keeps what was typed, and nothing is created.
	pg.Do(browser.TypeInto("textbox", "Name", "Acme Two"), browser.TypeInto("textbox", "Slug (optional)", "acme"), browser.Click("button", "Create organization"),
		status("The slug “acme” is taken by another organization of this project: choose another."))
	if v := pg.Eval(`document.querySelector('main input[name="Name"]').value`); v != "Acme Two" {
		t.Fatalf("the refused form holds %q", v)
	}
	if n := len(orgs()); n != 1 {
		t.Fatalf("%d orgs after a refused create", n)
	}
	pg.Shot("org-slug-taken")

	// A dashboard user is not one of the project's people: the panel says so.
	pg.Do(browser.TypeInto("textbox", "Member email", admin.Email), browser.Click("button", "Add member"),
		status("no such user in this project's tenant"))
	if r := roleOf(acme); len(r) != 0 {
		t.Fatalf("members after a refused add: %v", r)
	}
	// The refused form keeps what was typed; it is emptied for the next (SetValue refuses "").
	if v := pg.Eval(`(() => { const i = document.querySelector('main input[name="Member email"]'); const v = i.value; i.value = ''; return v; })()`); v != admin.Email {
		t.Fatalf("the refused add kept %q", v)
	}

	// Ann, a user of the project, added by email as admin; made a member; removed.
	pg.Do(browser.TypeInto("textbox", "Member email", ann.Email), chromedp.SetValue(browser.Label("combobox", "Member role"), "admin", browser.ByRole("combobox", "Member role")),
		browser.Click("button", "Add member"), status("Added "+ann.Email+" to Acme as admin."), browser.WaitFor("combobox", "Role of "+ann.Email))
	if r := roleOf(acme); r[ann.Email] != "admin" || len(r) != 1 {
		t.Fatalf("members after the add: %v", r)
	}
	pg.Do(chromedp.SetValue(browser.Label("combobox", "Role of "+ann.Email), "member", browser.ByRole("combobox", "Role of "+ann.Email)),
		browser.Click("button", "Change role of "+ann.Email), status(ann.Email+" is now member of Acme."))
	if r := roleOf(acme); r[ann.Email] != "member" {
		t.Fatalf("members after the role change: %v", r)
	}
	pg.Shot("org-member")
	pg.Do(browser.Click("button", "Remove "+ann.Email), confirmed, status("Removed "+ann.Email+" from Acme."),
		chromedp.WaitNotPresent(browser.Label("button", "Remove "+ann.Email), browser.ByRole("button", "Remove "+ann.Email)))
	if r := roleOf(acme); len(r) != 0 {
		t.Fatalf("members after the removal: %v", r)
	}

	// The project defines "billing"; the role selects offer it at once, and Bob gets it.
	pg.Do(browser.Click("button", "Add a role"), browser.TypeInto("textbox", "Name of role 1", "billing"),
		browser.TypeInto("textbox", "Permissions of role 1", "invoices:read, invoices:write payments:*"), browser.Click("button", "Save roles"),
		status("Saved 1 role of the project."))
	var billing []any
	for _, r := range get("/org-roles", 200)["roles"].([]any) {
		if r := r.(map[string]any); r["name"] == "billing" {
			billing = r["permissions"].([]any)
		}
	}
	if !slices.Equal(billing, []any{"invoices:read", "invoices:write", "payments:*"}) {
		t.Fatalf("billing's permissions: %v", billing)
	}
	pg.Do(browser.TypeInto("textbox", "Member email", bob.Email), browser.Click("button", "Add member"), status("Added "+bob.Email+" to Acme as member."),
		chromedp.SetValue(browser.Label("combobox", "Role of "+bob.Email), "billing", browser.ByRole("combobox", "Role of "+bob.Email)),
		browser.Click("button", "Change role of "+bob.Email), status(bob.Email+" is now billing of Acme."))
	if r := roleOf(acme); r[bob.Email] != "billing" {
		t.Fatalf("members after billing was given: %v", r)
	}
	// A role held by someone cannot be taken away: the reason is shown and the role stays.
	pg.Do(browser.Click("button", "Remove role 1"), browser.Click("button", "Save roles"),
		status("members of the project's orgs hold a role this would remove"))
	if n := len(get("/org-roles", 200)["roles"].([]any)); n != 4 {
		t.Fatalf("%d roles after a refused removal", n)
	}
	pg.Shot("org-roles")

	// Closed and opened again from the list: the org is read back from the server.
	pg.Do(browser.Click("button", "Close"), chromedp.WaitNotPresent(browser.Label("region", "Organization Acme"), browser.ByRole("region", "Organization Acme")),
		browser.Click("button", "Open Acme"), browser.WaitFor("combobox", "Role of "+bob.Email))
	if v := pg.Eval(`document.querySelector('[aria-label="Organization Acme"] td select').value`); v != "billing" {
		t.Fatalf("Bob's role shown after opening Acme: %q", v)
	}

	// A setup link for domains and SSO: its URL is shown once, with a Copy button.
	pg.Do(browser.Click("checkbox", "Verify domains"), browser.Click("checkbox", "Single sign-on (SAML or OIDC)"), browser.Click("button", "Create setup link"),
		browser.WaitFor("region", "Setup link for Acme"), browser.WaitFor("button", "Copy"))
	link := pg.Eval(`document.querySelector('[aria-label="Setup link for Acme"] code').textContent`)
	if !strings.HasPrefix(link, a.Base+"/") || !strings.Contains(link, "/console/setup#ac_stl_") {
		t.Fatalf("the setup link shown is %q", link)
	}
	// The link shown is the one the server made: it opens, for Acme, with those intents.
	opened := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/orgs/setup/open", Body: map[string]any{"token": strings.SplitN(link, "#", 2)[1]}}).Expect(t, 200, nil)
	if opened["org"].(map[string]any)["id"] != acme || !slices.Equal(opened["intents"].([]any), []any{"domains", "sso"}) {
		t.Fatalf("the link opened %v", opened)
	}
	pg.Shot("org-setup-link")

	// Renamed and re-slugged after confirming it is the admin: the sign-in is older than the
	// step-up window.
	key := enrolAuthenticator(t, a, admin)
	a.Clock.Advance(guard.StepUpWindow + time.Minute)
	pg.Do(chromedp.SetValue(browser.Label("textbox", "Name of Acme"), "Acme Corp", browser.ByRole("textbox", "Name of Acme")),
		chromedp.SetValue(browser.Label("textbox", "Slug of Acme"), "acme-corp", browser.ByRole("textbox", "Slug of Acme")),
		browser.Click("button", "Save organization"),
		browser.WaitFor("heading", "Confirm it is you"), browser.TypeInto("textbox", "Authentication code", code(t, key, a.Clock.Now())),
		browser.Click("button", "Verify"), browser.WaitFor("region", "Organization Acme Corp"), browser.WaitFor("button", "Open Acme Corp"))
	if o := get("/orgs/"+acme, 200); o["name"] != "Acme Corp" || o["slug"] != "acme-corp" {
		t.Fatalf("after the rename: %v", o)
	}

	// At 360 px the screen, an org open, does not scroll sideways.
	pg.Do(chromedp.EmulateViewport(360, 780))
	time.Sleep(200 * time.Millisecond)
	pg.NoSideScroll("Organizations")
	pg.Shot("narrow-organizations")
	pg.Eval(`(document.querySelector('[aria-label="Organization Acme Corp"] table').scrollIntoView(), '')`)
	pg.Shot("narrow-organization-members")
	pg.Do(chromedp.EmulateViewport(1280, 900))

	// Deleted, after a confirm: its member goes with it.
	pg.Do(browser.Click("button", "Delete Acme Corp"), confirmed, status("Deleted Acme Corp; 1 member removed."),
		chromedp.WaitNotPresent(browser.Label("region", "Organization Acme Corp"), browser.ByRole("region", "Organization Acme Corp")),
		status("No organizations yet."))
	get("/orgs/"+acme, 404)
	if n := len(orgs()); n != 0 {
		t.Fatalf("%d orgs after the delete", n)
	}
}
