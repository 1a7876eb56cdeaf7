package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/authcore/authcore/cmd/authcore/app"
	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/internal/template/deploykey"
	"github.com/authcore/authcore/internal/template/mail"
	"github.com/authcore/authcore/internal/testkit"
	"github.com/authcore/authcore/platform/config"
)

var (
	browserOnce sync.Once
	browser     context.Context // one Chromium for every test of the package
	browserErr  error
	stopBrowser = func() {}
)

func TestMain(m *testing.M) { apptest.Main(m, func() { stopBrowser() }) }

// chromium finds the browser: CHROMIUM, else Debian's chromium. The tests skip, saying so,
// only when there is none; .ci/run installs it.
func chromium(t *testing.T) string {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no Chromium installed (Debian: apt-get install chromium; or set CHROMIUM): the console's browser tests did not run")
	return ""
}

// tab opens a new tab in the shared browser; events go to listen.
func tab(t *testing.T, listen func(ev any)) context.Context {
	path := chromium(t)
	browserOnce.Do(func() {
		dir, err := os.MkdirTemp("", "authcore-chromium-")
		if err != nil {
			browserErr = err
			return
		}
		alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
			chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
			chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(dir), chromedp.WindowSize(1280, 900),
			// This machine's network is closed: no background traffic to fail.
			chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
			chromedp.Flag("disable-sync", true), chromedp.Flag("disable-quic", true))
		ctx, cancel := chromedp.NewContext(alloc)
		if err := chromedp.Do(ctx); err != nil { // starts the browser for ctx's lifetime
			browserErr = err
		}
		browser = ctx
		stopBrowser = func() { cancel(); cancelAlloc(); os.RemoveAll(dir) }
	})
	if browserErr != nil {
		t.Fatalf("starting Chromium: %v", browserErr)
	}
	var opts []chromedp.ContextOption
	if listen != nil {
		opts = append(opts, chromedp.WithListener(listen))
	}
	ctx, cancel := chromedp.NewContext(browser, opts...)
	t.Cleanup(cancel)
	// The tab lives as long as the context of its first Run: make that this one, not a
	// step's shorter timeout.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("opening a tab: %v", err)
	}
	return ctx
}

// byRole finds elements by their computed accessible role and name, as assistive
// technology sees them: the console's names are part of its contract (SPEC §10).
func byRole(role, name string) chromedp.QueryOption {
	return chromedp.ByFunc(func(ctx context.Context, t *chromedp.Target, n *chromedp.Node) ([]cdp.NodeID, error) {
		res, err := cdp.Call(ctx, t, accessibility.QueryAXTree, accessibility.QueryAXTreeParams{NodeID: n.NodeID, AccessibleName: name, Role: role})
		if err != nil {
			return nil, err
		}
		var ids []cdp.BackendNodeID
		for _, ax := range res.Nodes {
			if !ax.Ignored && ax.BackendDOMNodeID != 0 {
				ids = append(ids, ax.BackendDOMNodeID)
			}
		}
		if len(ids) == 0 {
			return nil, nil
		}
		pushed, err := cdp.Call(ctx, t, dom.PushNodesByBackendIDsToFrontend, dom.PushNodesByBackendIDsToFrontendParams{BackendNodeIDs: ids})
		return pushed.NodeIDs, err
	})
}

func label(role, name string) string { return role + " " + name }

func click(role, name string) chromedp.Action[chromedp.Void] {
	return chromedp.Click(label(role, name), byRole(role, name), chromedp.NodeVisible)
}

func typeInto(role, name, text string) chromedp.Action[chromedp.Void] {
	return chromedp.SendKeys(label(role, name), text, byRole(role, name), chromedp.NodeVisible)
}

func waitFor(role, name string) chromedp.Action[chromedp.Void] {
	return chromedp.WaitVisible(label(role, name), byRole(role, name))
}

// page is one console session in a tab, with screenshots into the artifacts folder.
type page struct {
	t   *testing.T
	ctx context.Context
	dir string
	n   int
}

// artifacts is where screenshots go: AUTHCORE_TEST_ARTIFACTS (CI keeps them), else a
// temporary folder named in the log.
func artifacts(t *testing.T) string {
	dir := os.Getenv("AUTHCORE_TEST_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "authcore-console-screenshots")
	}
	dir = filepath.Join(dir, t.Name())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots in %s", dir)
	return dir
}

func (p *page) do(steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 15*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		shot, _ := chromedp.Run(p.ctx, chromedp.CaptureScreenshot())
		_ = os.WriteFile(filepath.Join(p.dir, "failure.png"), shot, 0o644)
		body, _ := chromedp.Run(p.ctx, chromedp.Evaluate[string]("document.body.innerText"))
		p.t.Fatalf("%v\npage text:\n%s", err, body)
	}
}

func (p *page) eval(js string) string {
	p.t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](js))
	if err != nil {
		p.t.Fatalf("%s: %v", js, err)
	}
	return v
}

func (p *page) shot(name string) {
	p.t.Helper()
	time.Sleep(100 * time.Millisecond) // let the last render settle
	b, err := chromedp.Run(p.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		p.t.Fatal(err)
	}
	p.n++
	if err := os.WriteFile(filepath.Join(p.dir, fmt.Sprintf("%02d-%s.png", p.n, name)), b, 0o644); err != nil {
		p.t.Fatal(err)
	}
}

// noSideScroll fails when the page is wider than its viewport.
func (p *page) noSideScroll(where string) {
	p.t.Helper()
	if v := p.eval(`String(document.documentElement.scrollWidth <= window.innerWidth)`); v != "true" {
		p.t.Errorf("%s scrolls sideways at %s px: %s px wide", where, p.eval(`String(window.innerWidth)`), p.eval(`String(document.documentElement.scrollWidth)`))
	}
}

// The whole flow, as a person would go through it: sign up, create a project, mint an
// agent token and see the API accept it, revoke it and see the API refuse it, mint an s3
// badge, look at sessions, members and the audit trail, sign out and in again. Every
// request the page makes goes to its own origin.
func TestConsoleFlow(t *testing.T) {
	a := apptest.Start(t, apptest.Stores(t)[0])
	var mu sync.Mutex
	var requests []string
	ctx := tab(t, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			mu.Lock()
			requests = append(requests, e.Request.URL)
			mu.Unlock()
		}
	})
	p := &page{t: t, ctx: ctx, dir: artifacts(t)}
	email, password := apptest.UniqueEmail(t), "correct horse battery"

	p.do(chromedp.Navigate(a.Base+"/"), waitFor("button", "Sign in"))
	if loc := p.eval(`location.pathname`); loc != "/console" {
		t.Fatalf("/ led to %s", loc)
	}
	p.shot("sign-in")
	p.do(click("link", "Create an account"), waitFor("button", "Sign up"),
		typeInto("textbox", "Email", email), typeInto("textbox", "Password", password), click("button", "Sign up"),
		waitFor("button", "Create project"))
	p.shot("projects-empty")

	p.do(typeInto("textbox", "Project name", "Acme"), click("button", "Create project"), waitFor("link", "Agent tokens"),
		chromedp.WaitVisible("Acme (current)", chromedp.ByFunc(textLookup("Acme (current)"))))
	p.shot("projects")

	// Agent tokens: mint, see it work, revoke, see it refused.
	p.do(click("link", "Agent tokens"), waitFor("button", "Mint token"),
		typeInto("textbox", "Agent name", "support-bot"), typeInto("textbox", "Scopes", "tickets:read files:*"),
		chromedp.Clear(label("spinbutton", "TTL hours"), byRole("spinbutton", "TTL hours")), typeInto("spinbutton", "TTL hours", "24"),
		click("button", "Mint token"), chromedp.WaitVisible(chromedp.CSS("[data-secret]")), waitFor("button", "Copy"))
	secret := p.eval(`document.querySelector('[data-secret]').textContent`)
	if !strings.HasPrefix(secret, "ac_ai_") || !strings.Contains(p.eval(`document.body.innerText`), "will not be shown again") {
		t.Fatalf("shown secret %q", secret)
	}
	a.Get("/v1/auth-core/ai/me", "Authorization", "Bearer "+secret).Expect(t, 200, map[string]any{"agentName": "support-bot"})
	p.do(chromedp.WaitVisible("in 24 hours", chromedp.ByFunc(textLookup("in 24 hours")))) // expires, relative
	p.shot("agent-token-minted")
	p.do(click("button", "Revoke"), chromedp.WaitVisible(chromedp.CSS("dialog[open]")))
	p.shot("agent-token-confirm")
	p.do(chromedp.Click(chromedp.CSS("dialog[open] #confirm-yes")), chromedp.WaitVisible("No agent tokens yet.", chromedp.ByFunc(textLookup("No agent tokens yet."))))
	a.Get("/v1/auth-core/ai/me", "Authorization", "Bearer "+secret).Expect(t, 401, nil)

	// Service badges: pay is there but not mintable; an s3 badge shows its key pair once.
	p.do(click("link", "Service badges"), waitFor("button", "Mint badge"))
	if v := p.eval(`String([...document.querySelectorAll('option')].find(o => o.value === 'pay')?.disabled)`); v != "true" {
		t.Fatalf("pay option disabled: %s", v)
	}
	p.do(typeInto("textbox", "Badge name", "files"),
		chromedp.SetValue(label("combobox", "Product"), "s3", byRole("combobox", "Product")),
		chromedp.SetValue(label("combobox", "Role"), "developer", byRole("combobox", "Role")),
		click("button", "Mint badge"), chromedp.WaitVisible(chromedp.CSS(`[data-secret="Secret access key"]`)))
	if k := p.eval(`document.querySelector('[data-secret="Access key id"]').textContent`); !strings.HasPrefix(k, "AKAC") {
		t.Fatalf("access key id %q", k)
	}
	p.shot("s3-badge-minted")

	// An end user of the project signs in elsewhere; the admin ends all their sessions.
	prj := p.eval(`localStorage.getItem('authcore.project')`)
	endUser := a.SignUpIn(t, prj)
	p.do(click("link", "Sessions"), chromedp.WaitVisible("(this session)", chromedp.ByFunc(textLookup("(this session)"))),
		waitFor("button", "Revoke all of this user"))
	p.shot("sessions")
	p.do(click("button", "Revoke all of this user"), chromedp.Click(chromedp.CSS("dialog[open] #confirm-yes")),
		chromedp.WaitVisible("No end-user sessions yet.", chromedp.ByFunc(textLookup("No end-user sessions yet."))))
	a.Get("/v1/auth-core/session/me", "Authorization", "Bearer "+endUser.AccessToken).Expect(t, 401, nil)

	// Members: add a dashboard user with a role, then remove them.
	colleague := a.SignUp(t)
	p.do(click("link", "Members"), waitFor("button", "Add member"),
		typeInto("textbox", "Email", colleague.Email), chromedp.SetValue(label("combobox", "Role"), "developer", byRole("combobox", "Role")),
		click("button", "Add member"), waitFor("button", "Remove"))
	a.Get("/v1/projects/"+prj, "Authorization", "Bearer "+colleague.AccessToken).Expect(t, 200, map[string]any{"role": "developer"})
	p.do(click("button", "Remove"), chromedp.Click(chromedp.CSS("dialog[open] #confirm-yes")), chromedp.WaitNotPresent(label("button", "Remove"), byRole("button", "Remove")))
	a.Get("/v1/projects/"+prj, "Authorization", "Bearer "+colleague.AccessToken).Expect(t, 403, nil)
	// A failed action shows the API's message and keeps what was typed.
	p.do(typeInto("textbox", "Email", "nobody@example.com"), click("button", "Add member"), chromedp.WaitVisible(chromedp.CSS(`main [role=alert]:not([hidden])`)))
	if v := p.eval(`document.querySelector('main input[type=email]').value`); v != "nobody@example.com" {
		t.Fatalf("the typed email was lost: %q", v)
	}
	p.shot("members-error")
	p.do(click("link", "Audit"), chromedp.WaitVisible("ai_token.revoke", chromedp.ByFunc(textLookup("ai_token.revoke"))))
	p.shot("audit")

	// Signing in again by keyboard alone: type, then Enter submits.
	p.do(click("button", "Sign out"), waitFor("button", "Sign in"),
		typeInto("textbox", "Email", email), typeInto("textbox", "Password", password+"\r"),
		waitFor("link", "Audit"))
	p.shot("signed-in-again")

	mu.Lock()
	defer mu.Unlock()
	if len(requests) < 10 {
		t.Fatalf("only %d requests seen: the check would pass vacuously", len(requests))
	}
	for _, u := range requests {
		if !strings.HasPrefix(u, a.Base+"/") && !strings.HasPrefix(u, "data:") {
			t.Errorf("request to another origin: %s", u)
		}
	}
}

// textLookup finds the innermost elements whose text contains s.
func textLookup(s string) func(context.Context, *chromedp.Target, *chromedp.Node) ([]cdp.NodeID, error) {
	return func(ctx context.Context, t *chromedp.Target, n *chromedp.Node) ([]cdp.NodeID, error) {
		search, err := cdp.Call(ctx, t, dom.PerformSearch, dom.PerformSearchParams{Query: fmt.Sprintf(`//*[contains(normalize-space(.), %q) and not(*[contains(normalize-space(.), %q)])]`, s, s)})
		if err != nil || search.ResultCount == 0 {
			return nil, err
		}
		defer cdp.Call(ctx, t, dom.DiscardSearchResults, dom.DiscardSearchResultsParams{SearchID: search.SearchID})
		res, err := cdp.Call(ctx, t, dom.GetSearchResults, dom.GetSearchResultsParams{SearchID: search.SearchID, FromIndex: 0, ToIndex: search.ResultCount})
		return res.NodeIDs, err
	}
}

// At 360 px every screen fits without sideways scrolling, and an expired access token is
// refreshed without the user noticing.
func TestConsoleNarrowAndSilentRefresh(t *testing.T) {
	a := apptest.Start(t, apptest.Stores(t)[0])
	admin := a.SignUp(t)
	prj := a.CreateProject(t, admin)
	for range 22 { // more audit records than one page holds
		a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/projects/" + prj + "/ai/agents", Body: map[string]any{"agentName": "a-rather-long-agent-name-for-a-narrow-screen", "scopes": []string{"tickets:read", "files:write"}}, Header: admin.Bearer()}).Expect(t, 200, nil)
	}
	a.SignUpIn(t, prj) // an end user, so the sessions screen has both tables
	p := &page{t: t, ctx: tab(t, nil), dir: artifacts(t)}
	p.do(chromedp.EmulateViewport(360, 780), chromedp.Navigate(a.Base+"/console"),
		typeInto("textbox", "Email", admin.Email), typeInto("textbox", "Password", admin.Password), click("button", "Sign in"),
		waitFor("button", "Mint token"), chromedp.WaitVisible(chromedp.CSS("table")))
	p.noSideScroll("Agent tokens")
	p.shot("narrow-agent-tokens")
	for _, screen := range []string{"Service badges", "Sessions", "Members", "Audit", "Resources", "Projects"} {
		p.do(click("link", screen), chromedp.WaitVisible(chromedp.CSS("h1")))
		time.Sleep(200 * time.Millisecond)
		p.noSideScroll(screen)
		p.shot("narrow-" + strings.ReplaceAll(strings.ToLower(screen), " ", "-"))
	}
	// The access token runs out (the server's clock moves on); the next screen still loads.
	a.Clock.Advance(2 * time.Hour)
	p.do(click("link", "Audit"), chromedp.WaitVisible("project.create", chromedp.ByFunc(textLookup("Audit trail"))))
	if v := p.eval(`String(!!document.querySelector('#nav:not([hidden])'))`); v != "true" {
		t.Fatal("the console went back to sign-in instead of refreshing the session")
	}
	// The trail pages with nextBefore: 20 on the first page, the rest on the next.
	rows := func() string { return p.eval(`String(document.querySelectorAll('main tbody tr').length)`) }
	if n := rows(); n != "20" {
		t.Fatalf("first audit page: %s rows", n)
	}
	p.do(click("button", "Older"), waitFor("button", "Newest"))
	if n := rows(); n == "20" || n == "0" {
		t.Fatalf("second audit page: %s rows", n)
	}
	p.do(click("button", "Newest"), waitFor("button", "Older"))

	// When the session cannot be refreshed any more, the next screen is the sign-in form.
	a.Clock.Advance(31 * 24 * time.Hour)
	p.do(click("link", "Service badges"), waitFor("button", "Sign in"))
	if v := p.eval(`String(document.getElementById('nav').hidden)`); v != "true" {
		t.Fatal("the navigation stays after the session ended")
	}
}

// Account recovery in the browser, over real SMTP: "Forgot password?" mails a link to
// /console/reset, where a new password is set; the old one stops working.
func TestConsolePasswordReset(t *testing.T) {
	in := testkit.StartInbox(t)
	a := apptest.Start(t, apptest.Stores(t)[0], apptest.WithConfig(func(c *config.Config) { c.SMTPURL = in.URL }))
	u := a.SignUp(t)
	p := &page{t: t, ctx: tab(t, nil), dir: artifacts(t)}
	p.do(chromedp.Navigate(a.Base+"/console"), click("link", "Forgot password?"), waitFor("button", "Send reset link"),
		typeInto("textbox", "Email", u.Email), click("button", "Send reset link"),
		chromedp.WaitVisible("on its way", chromedp.ByFunc(textLookup("on its way"))))
	link := regexp.MustCompile(`https?://\S+/console/reset\?token=ac_rst_[0-9A-Za-z]+`).FindString(in.Wait(t, 1)[0].Text)
	if link == "" {
		t.Fatal("no reset link in the mail")
	}
	p.do(chromedp.Navigate(link), typeInto("textbox", "New password", "a brand new passphrase"), click("button", "Set password"),
		chromedp.WaitVisible("Your password is changed", chromedp.ByFunc(textLookup("Your password is changed"))))
	p.shot("password-reset")
	a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signin", Body: map[string]any{"email": u.Email, "password": u.Password}}).Expect(t, 401, nil)
	p.do(click("link", "Sign in"), typeInto("textbox", "Email", u.Email), typeInto("textbox", "Password", "a brand new passphrase"),
		click("button", "Sign in"), waitFor("link", "Audit"))
}

// Email verification: the banner's button mails a link to /console/verify, which verifies
// the address, and the banner goes.
func TestConsoleEmailVerification(t *testing.T) {
	in := testkit.StartInbox(t)
	a := apptest.Start(t, apptest.Stores(t)[0], apptest.WithConfig(func(c *config.Config) { c.SMTPURL = in.URL }))
	u := a.SignUp(t)
	p := &page{t: t, ctx: tab(t, nil), dir: artifacts(t)}
	p.do(chromedp.Navigate(a.Base+"/console"), typeInto("textbox", "Email", u.Email), typeInto("textbox", "Password", u.Password),
		click("button", "Sign in"), click("button", "Send verification mail"),
		chromedp.WaitVisible("follow the link", chromedp.ByFunc(textLookup("follow the link"))))
	link := regexp.MustCompile(`https?://\S+/console/verify\?token=[0-9A-Za-z_]+`).FindString(in.Wait(t, 1)[0].Text)
	if link == "" {
		t.Fatalf("no verification link in the mail:\n%s", in.Mails()[0].Text)
	}
	p.do(chromedp.Navigate(link), chromedp.WaitVisible("your address is verified", chromedp.ByFunc(textLookup("your address is verified"))))
	if v := p.eval(`String(document.getElementById('banner').textContent === '')`); v != "true" {
		t.Fatal("the unverified banner stays after verification")
	}
	a.Get("/v1/auth-core/session/me", "Authorization", "Bearer "+u.AccessToken).Expect(t, 200, map[string]any{"user": map[string]any{"id": u.UserID, "email": u.Email, "name": "Test User", "emailVerified": true}})
}

// Credential lifecycle in the console: the policy edited, a token rolled (both secrets then
// work), a webhook added (its signing secret shown once) and its deliveries listed.
func TestConsoleLifecycle(t *testing.T) {
	got := make(chan string, 10)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("webhook-id")
		w.WriteHeader(204)
	}))
	defer receiver.Close()
	a := apptest.Start(t, apptest.Stores(t)[0], apptest.WithConfig(func(c *config.Config) { c.WebhookAllowHTTP = true }))
	admin := a.SignUp(t)
	prj := a.CreateProject(t, admin)
	p := &page{t: t, ctx: tab(t, nil), dir: artifacts(t)}
	p.do(chromedp.Navigate(a.Base+"/console"), typeInto("textbox", "Email", admin.Email), typeInto("textbox", "Password", admin.Password),
		click("button", "Sign in"), click("link", "Projects"), waitFor("button", "Save policy"),
		chromedp.Sleep(300*time.Millisecond), waitFor("button", "Save policy"), // the Projects screen stays put
		typeInto("spinbutton", "Max agent-token TTL hours", "48"), typeInto("textbox", "Allowed scopes", "tickets:*"),
		click("button", "Save policy"), chromedp.WaitVisible("Policy saved.", chromedp.ByFunc(textLookup("Policy saved."))))
	a.Do(apptest.Req{Path: "/v1/projects/" + prj + "/policy", Header: admin.Bearer()}).
		Expect(t, 200, map[string]any{"agentTokenMaxTtlHours": 48, "badgeMaxExpiresInDays": nil, "allowedScopes": []any{"tickets:*"}})
	p.shot("policy")

	p.do(click("link", "Agent tokens"), waitFor("button", "Mint token"),
		chromedp.WaitVisible("max 48", chromedp.ByFunc(textLookup("agent tokens live at most 48 hours"))),
		typeInto("textbox", "Agent name", "bot"), typeInto("textbox", "Scopes", "tickets:read"),
		chromedp.Clear(label("spinbutton", "TTL hours"), byRole("spinbutton", "TTL hours")), typeInto("spinbutton", "TTL hours", "24"),
		click("button", "Mint token"), chromedp.WaitVisible(chromedp.CSS("[data-secret]")))
	first := p.eval(`document.querySelector('[data-secret]').textContent`)
	p.do(click("button", "Roll"), chromedp.WaitVisible("keeps working", chromedp.ByFunc(textLookup("keeps working until"))))
	second := p.eval(`document.querySelector('[data-secret]').textContent`)
	if second == first || !strings.HasPrefix(second, "ac_ai_") {
		t.Fatalf("rolled secret %q (was %q)", second, first)
	}
	for _, s := range []string{first, second} {
		a.Get("/v1/auth-core/ai/me", "Authorization", "Bearer "+s).Expect(t, 200, nil)
	}
	p.shot("rolled")

	p.do(click("link", "Webhooks"), waitFor("button", "Add webhook"), typeInto("textbox", "Webhook URL", receiver.URL+"/hook"),
		click("button", "Add webhook"), chromedp.WaitVisible(chromedp.CSS(`[data-secret="Signing secret"]`)))
	if s := p.eval(`document.querySelector('[data-secret]').textContent`); !strings.HasPrefix(s, "whsec_") {
		t.Fatalf("signing secret %q", s)
	}
	a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/projects/" + prj + "/ai/agents", Body: map[string]any{"ttlHours": 1}, Header: admin.Bearer()}).Expect(t, 200, nil)
	select {
	case <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("the webhook added in the console got nothing")
	}
	time.Sleep(100 * time.Millisecond) // the worker records the answer after the receiver has it
	p.do(click("button", "Deliveries"), chromedp.WaitVisible("succeeded", chromedp.ByFunc(textLookup("succeeded"))))
	p.shot("webhooks")
}

// Resources in the console (SPEC §11): registered, listed and removed by an admin; the API
// agrees at each step, and a token can be exchanged for the resource only while it is there.
func TestConsoleResources(t *testing.T) {
	a := apptest.Start(t, apptest.Stores(t)[0])
	admin := a.SignUp(t)
	prj := a.CreateProject(t, admin)
	uri := "https://mcp.example.com/" + strings.ToLower(prj)
	p := &page{t: t, ctx: tab(t, nil), dir: artifacts(t)}
	p.do(chromedp.Navigate(a.Base+"/console"), typeInto("textbox", "Email", admin.Email), typeInto("textbox", "Password", admin.Password),
		click("button", "Sign in"), click("link", "Resources"), waitFor("button", "Register resource"),
		typeInto("textbox", "Resource URI", uri), typeInto("textbox", "Resource name", "Files MCP"), typeInto("textbox", "Resource scopes", "files:read files:write"),
		click("button", "Register resource"), chromedp.WaitVisible("Files MCP", chromedp.ByFunc(textLookup("files:read files:write"))))
	list := a.Do(apptest.Req{Path: "/v1/projects/" + prj + "/oauth/resources", Header: admin.Bearer()}).Expect(t, 200, nil)["resources"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["uri"] != uri || list[0].(map[string]any)["name"] != "Files MCP" {
		t.Fatalf("%v", list)
	}
	p.shot("resources")
	// A refused registration shows the API's message and keeps what was typed.
	p.do(typeInto("textbox", "Resource URI", uri), typeInto("textbox", "Resource name", "Again"),
		click("button", "Register resource"), chromedp.WaitVisible("taken", chromedp.ByFunc(textLookup("registered already"))))
	if v := p.eval(`document.querySelector('input[type=url]').value`); v != uri {
		t.Fatalf("the typed URI is gone: %q", v)
	}
	p.do(click("button", "Remove"), chromedp.Click(chromedp.CSS("dialog[open] #confirm-yes")),
		chromedp.WaitNotPresent(label("button", "Remove"), byRole("button", "Remove")))
	if list := a.Do(apptest.Req{Path: "/v1/projects/" + prj + "/oauth/resources", Header: admin.Bearer()}).Expect(t, 200, nil)["resources"].([]any); len(list) != 0 {
		t.Fatalf("still registered: %v", list)
	}
}

// SPEC §15: a product added as a plugin shows its credentials once with no console change:
// every field its Mint returned, labelled from its name; a kind added as a module has its
// events offered on the webhooks screen.
func TestConsoleShowsAPluginsCredentials(t *testing.T) {
	a := apptest.Start(t, apptest.Stores(t)[0], apptest.WithProducts(append(app.Products(), mail.Plugin)...), apptest.WithFx(deploykey.Module))
	admin := a.SignUp(t)
	a.CreateProject(t, admin)
	p := &page{t: t, ctx: tab(t, nil), dir: artifacts(t)}
	p.do(chromedp.Navigate(a.Base+"/console"), typeInto("textbox", "Email", admin.Email), typeInto("textbox", "Password", admin.Password),
		click("button", "Sign in"), click("link", "Service badges"), waitFor("button", "Mint badge"),
		typeInto("textbox", "Badge name", "newsletter"),
		chromedp.SetValue(label("combobox", "Product"), "mail", byRole("combobox", "Product")),
		click("button", "Mint badge"), chromedp.WaitVisible(chromedp.CSS(`[data-secret="Relay"]`)))
	if v := p.eval(`document.querySelector('[data-secret="Relay"]').textContent`); v != "smtp.example.com:587" {
		t.Fatalf("relay %q", v)
	}
	if v := p.eval(`document.querySelector('[data-secret="Username"]').textContent`); !strings.HasPrefix(v, "bdg_") {
		t.Fatalf("username %q", v)
	}
	if v := p.eval(`document.querySelector('[data-secret="Badge secret"]').textContent`); !strings.HasPrefix(v, "ac_mail_") {
		t.Fatalf("badge secret %q", v)
	}
	p.shot("plugin-credentials")
	// Once: after a reload the list shows the badge, never its secrets.
	p.do(chromedp.Reload(), waitFor("button", "Mint badge"), chromedp.WaitVisible("newsletter", chromedp.ByFunc(textLookup("newsletter"))))
	if n := p.eval(`String(document.querySelectorAll('[data-secret]').length)`); n != "0" {
		t.Fatalf("%s secrets still shown after a reload", n)
	}
	p.do(click("link", "Webhooks"), waitFor("button", "Add webhook"),
		chromedp.WaitVisible("deploy_key.revoke", chromedp.ByFunc(textLookup("deploy_key.revoke"))))
	if v := p.eval(`document.querySelector('[aria-label="Event types"]').textContent`); !strings.Contains(v, "service_badge.roll") {
		t.Fatalf("event types %q", v)
	}
}
