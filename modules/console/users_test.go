package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/internal/browser"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/guard"
)

// The Users screen (SPEC §25 "The project's people"), driven as an admin would in headless
// Chromium: the list pages with More, a search finds a user by email prefix and another by
// name, a user is created, their metadata edited (a merge patch: a key removed on the page
// is removed) and their email changed (a taken one refused, the panel kept), a user is
// blocked after a step-up (their session ends and their sign-in is refused), a user is
// deleted, and a JSON Lines file with a malformed line is imported and its report shown.
// The API agrees at each step.
func TestConsoleUsers(t *testing.T) {
	// The clock jumps past the step-up window: the test's own tokens stay valid meanwhile.
	a := apptest.Start(t, apptest.Stores(t)[0], apptest.WithConfig(func(c *config.Config) { c.AccessTTL = 24 * time.Hour }))
	admin := a.SignUp(t)
	prj := a.CreateProject(t, admin)
	base := "/v1/projects/" + prj + "/users"
	// Two of the project's people sign up themselves; their emails and names differ, so a
	// search by one is not a search by the other.
	signUp := func(email, name string) string {
		got := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signup", Body: map[string]any{
			"email": email, "password": "correct horse battery", "name": name, "tenantId": prj}}).Expect(t, 201, nil)
		return got["session"].(map[string]any)["accessToken"].(string)
	}
	signUp("ada.l@example.com", "Augusta King")
	graceToken := signUp("rear.admiral@example.com", "Grace Hopper")
	// More than a page (50) of imported people, so the list has a More.
	var lines strings.Builder
	for i := range 50 {
		fmt.Fprintf(&lines, "{\"email\":\"bulk%02d@example.com\"}\n", i)
	}
	a.Do(apptest.Req{Method: http.MethodPost, Path: base + "/import", Body: lines.String(),
		Header: map[string]string{"Authorization": "Bearer " + admin.AccessToken, "Content-Type": "application/x-ndjson"}}).
		Expect(t, 200, map[string]any{"imported": 50, "failed": 0})
	users := func(query string) []map[string]any {
		var out []map[string]any
		for _, u := range a.Do(apptest.Req{Path: base + "?limit=100&query=" + url.QueryEscape(query), Header: admin.Bearer()}).Expect(t, 200, nil)["users"].([]any) {
			out = append(out, u.(map[string]any))
		}
		return out
	}
	one := func(email string) map[string]any {
		t.Helper()
		got := users(strings.Split(email, "@")[0])
		for _, u := range got {
			if u["email"] == email {
				return u
			}
		}
		t.Fatalf("no user %s among %v", email, got)
		return nil
	}
	pg := browser.NewPage(t, browser.Tab(t, nil))
	// find searches the list as a person would, replacing what the box held (SetValue
	// refuses an empty value, and a search for everyone is one).
	find := func(text string) chromedp.Action[chromedp.Void] {
		return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
			box, _ := json.Marshal(text)
			if _, err := chromedp.Evaluate[bool](`(document.querySelector('main input[type=search]').value = `+string(box)+`) !== null`)(ctx, tg); err != nil {
				return chromedp.Void{}, err
			}
			return browser.Click("button", "Search")(ctx, tg)
		}
	}
	// rows counts the rows of a table of the screen, by its caption.
	rows := func(caption string) string {
		return pg.Eval(`String([...document.querySelectorAll('main table')].find((t) => t.caption && t.caption.textContent === '` + caption + `')?.tBodies[0].rows.length ?? 0)`)
	}

	pg.Do(chromedp.Navigate(a.Base+"/console"), browser.TypeInto("textbox", "Email", admin.Email), browser.TypeInto("textbox", "Password", admin.Password),
		browser.Click("button", "Sign in"), browser.WaitFor("link", "Apps"), browser.Click("link", "Users"), browser.WaitFor("button", "Create user"),
		browser.WaitFor("button", "More"))
	if n := rows("Users"); n != "50" {
		t.Fatalf("the first page has %s users", n)
	}
	pg.Do(browser.Click("button", "More"), chromedp.WaitNotPresent(browser.Label("button", "More"), browser.ByRole("button", "More")))
	if n := rows("Users"); n != "52" {
		t.Fatalf("after More, %s users", n)
	}
	pg.Shot("users")

	// Search by email prefix, then by name.
	pg.Do(find("ada."),
		chromedp.WaitNotPresent("bulk", chromedp.ByFunc(browser.Text("bulk00@example.com"))),
		chromedp.WaitVisible("ada", chromedp.ByFunc(browser.Text("ada.l@example.com"))))
	if n := rows("Users"); n != "1" {
		t.Fatalf("a search by email prefix found %s users", n)
	}
	pg.Do(find("Grace Hopper"),
		chromedp.WaitVisible("grace", chromedp.ByFunc(browser.Text("rear.admiral@example.com"))),
		chromedp.WaitNotPresent("ada", chromedp.ByFunc(browser.Text("ada.l@example.com"))))
	if n := rows("Users"); n != "1" {
		t.Fatalf("a search by name found %s users", n)
	}
	pg.Shot("users-search")

	// Create one, with a password, verified, with metadata: it opens.
	pg.Do(browser.TypeInto("textbox", "Email", "new.person@example.com"), browser.TypeInto("textbox", "Password (optional)", "a long enough passphrase"),
		browser.Click("checkbox", "Email verified"), browser.TypeInto("textbox", "Metadata (JSON object, optional)", `{"plan":"free","seats":3}`),
		browser.Click("button", "Create user"), browser.WaitFor("region", "User new.person@example.com"))
	created := one("new.person@example.com")
	if created["emailVerified"] != true || created["hasPassword"] != true || fmt.Sprint(created["metadata"]) != "map[plan:free seats:3]" {
		t.Fatalf("created %v", created)
	}
	a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signin", Body: map[string]any{
		"email": "new.person@example.com", "password": "a long enough passphrase", "tenantId": prj}}).Expect(t, 200, nil)

	// Its metadata edited as it is: seats removed, plan changed, a key added.
	meta := browser.ByRole("textbox", "Metadata of new.person@example.com")
	pg.Do(chromedp.SetValue(browser.Label("textbox", "Metadata of new.person@example.com"), `{"plan":"pro","team":{"size":4}}`, meta),
		browser.Click("button", "Save metadata"), chromedp.WaitVisible("saved", chromedp.ByFunc(browser.Text("Metadata of new.person@example.com saved."))))
	if m := fmt.Sprint(one("new.person@example.com")["metadata"]); m != "map[plan:pro team:map[size:4]]" {
		t.Fatalf("metadata after the edit: %s", m)
	}
	if v := pg.Eval(`document.querySelector('[aria-label="Metadata JSON of new.person@example.com"]').textContent`); !strings.Contains(v, `"pro"`) || strings.Contains(v, "seats") {
		t.Fatalf("metadata shown: %s", v)
	}
	pg.Shot("user-metadata")

	// A refused change shows the API's message and keeps the panel: a taken email.
	email := browser.ByRole("textbox", "Email of new.person@example.com")
	pg.Do(chromedp.SetValue(browser.Label("textbox", "Email of new.person@example.com"), "ada.l@example.com", email), browser.Click("button", "Save email"),
		chromedp.WaitVisible(chromedp.CSS(`[aria-label="User new.person@example.com"] [role=alert]:not([hidden])`)))
	if u := one("new.person@example.com"); u["id"] != created["id"] {
		t.Fatalf("the email changed: %v", u)
	}
	pg.Do(chromedp.SetValue(browser.Label("textbox", "Email of new.person@example.com"), "renamed.person@example.com", email), browser.Click("button", "Save email"),
		browser.WaitFor("region", "User renamed.person@example.com"))
	if u := one("renamed.person@example.com"); u["id"] != created["id"] {
		t.Fatalf("renamed %v", u)
	}

	// The admin has a second factor and signed in longer ago than the step-up window:
	// blocking asks to confirm it is them, then blocks. The blocked user's session ends and
	// their sign-in is refused.
	key := enrolAuthenticator(t, a, admin)
	a.Clock.Advance(guard.StepUpWindow + time.Minute)
	pg.Do(find("rear."),
		browser.Click("button", "Open rear.admiral@example.com"), browser.WaitFor("region", "User rear.admiral@example.com"),
		browser.Click("button", "Block rear.admiral@example.com"), chromedp.Click(chromedp.CSS("dialog[open] #confirm-yes")),
		browser.WaitFor("heading", "Confirm it is you"), browser.TypeInto("textbox", "Authentication code", code(t, key, a.Clock.Now())),
		browser.Click("button", "Verify"), browser.WaitFor("button", "Unblock rear.admiral@example.com"))
	if u := one("rear.admiral@example.com"); u["blocked"] != true || u["blockedAt"] == nil {
		t.Fatalf("blocked %v", u)
	}
	a.Get("/v1/auth-core/session/me", "Authorization", "Bearer "+graceToken).Expect(t, 401, nil)
	a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signin", Body: map[string]any{
		"email": "rear.admiral@example.com", "password": "correct horse battery", "tenantId": prj}}).Expect(t, 403, map[string]any{"code": "user_blocked"})
	pg.Shot("user-blocked")

	// Deleted, after a confirm.
	pg.Do(find("ada."), browser.Click("button", "Open ada.l@example.com"), browser.WaitFor("region", "User ada.l@example.com"),
		browser.Click("button", "Delete ada.l@example.com"), chromedp.Click(chromedp.CSS("dialog[open] #confirm-yes")),
		chromedp.WaitVisible("deleted", chromedp.ByFunc(browser.Text("Deleted ada.l@example.com: 1 session revoked"))),
		chromedp.WaitNotPresent(browser.Label("button", "Open ada.l@example.com"), browser.ByRole("button", "Open ada.l@example.com")))
	pg.Do(chromedp.WaitVisible("no match", chromedp.ByFunc(browser.Text("No user's email or name starts with “ada.”."))))
	if got := users("ada."); len(got) != 0 {
		t.Fatalf("still there: %v", got)
	}

	// A JSON Lines file with a malformed second line: two imported, the second line's error shown.
	file := filepath.Join(t.TempDir(), "people.jsonl")
	if err := os.WriteFile(file, []byte(`{"email":"imported.one@example.com","emailVerified":true,"metadata":{"source":"legacy"}}`+"\n"+
		`{"email": "broken@example.com",`+"\n"+
		`{"email":"imported.two@example.com","password":"another long passphrase"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	pg.Do(chromedp.SetUploadFiles(chromedp.CSS(`main input[type=file]`), []string{file}), browser.Click("button", "Import users"),
		chromedp.WaitVisible("report", chromedp.ByFunc(browser.Text("Imported 2 users from people.jsonl; 1 line failed."))))
	if n := rows("Failed lines"); n != "1" {
		t.Fatalf("%s failed lines shown", n)
	}
	if v := pg.Eval(`document.querySelector('[aria-label="Import report"] tbody td').textContent`); v != "2" {
		t.Fatalf("the failed line is shown as line %q", v)
	}
	pg.Shot("users-imported")
	if u := one("imported.one@example.com"); u["emailVerified"] != true || fmt.Sprint(u["metadata"]) != "map[source:legacy]" {
		t.Fatalf("imported %v", u)
	}
	a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signin", Body: map[string]any{
		"email": "imported.two@example.com", "password": "another long passphrase", "tenantId": prj}}).Expect(t, 200, nil)
	if got := users("broken"); len(got) != 0 {
		t.Fatalf("the malformed line made a user: %v", got)
	}
}

// enrolAuthenticator gives s a TOTP app through the API and returns its key.
func enrolAuthenticator(t *testing.T, a *apptest.App, s *apptest.Session) string {
	t.Helper()
	pending := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/mfa/totp", Body: map[string]any{"name": "phone"}, Header: s.Bearer()}).Expect(t, 201, nil)
	key := pending["secret"].(string)
	a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/mfa/totp/" + pending["id"].(string) + "/confirm",
		Body: map[string]any{"code": code(t, key, a.Clock.Now())}, Header: s.Bearer()}).Expect(t, 200, nil)
	return key
}
