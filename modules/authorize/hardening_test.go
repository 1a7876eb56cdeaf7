package authorize_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"
	"go.uber.org/fx"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/internal/browser"
	"github.com/authcore/authcore/internal/testkit"
	authz "github.com/authcore/authcore/modules/authorize"
	"github.com/authcore/authcore/platform/config"
)

// The third review's findings on consent and grants (SPEC §9b), each written as the attack
// was tried.

// A client that calls itself Claude and claims claude.ai, but sends codes to its own
// server: the consent page in Chromium shows the attacker's host large, the name and
// site only as claims, and the grant keeps the same host.
func TestConsentShowsWhereTheCodeGoes(t *testing.T) {
	w := newWorld(t, apptest.Stores(t)[0])
	var got atomic.Pointer[url.URL]
	evil := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/cb" {
			http.NotFound(rw, r)
			return
		}
		u := *r.URL
		got.Store(&u)
		_, _ = rw.Write([]byte("thanks"))
	}))
	t.Cleanup(evil.Close)
	redirect := evil.URL + "/cb"
	client := w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/register", Body: map[string]any{
		"client_name": "Claude", "client_uri": "https://claude.ai", "redirect_uris": []string{redirect}}}).Expect(t, 201, nil)["client_id"].(string)
	f := newFlow(client, redirect)
	f.extra.Set("resource", w.mcp.URL)
	f.extra.Set("scope", "tools:call")

	p := browser.NewPage(t, browser.Tab(t, nil))
	p.Do(chromedp.Navigate(w.a.Base+"/oauth/authorize?"+f.query().Encode()),
		browser.WaitFor("button", "Sign in"),
		browser.TypeInto("textbox", "Email", w.admin.Email), browser.TypeInto("textbox", "Password", w.admin.Password), browser.Click("button", "Sign in"),
		browser.WaitFor("button", "Approve"))
	p.Shot("consent-lying-client")
	evilHost := strings.TrimPrefix(evil.URL, "http://")
	text := func(label string) string {
		return p.Eval(`(document.querySelector('[aria-label="` + label + `"]') || {textContent: ''}).textContent`)
	}
	if shown := text("Application host"); shown != evilHost {
		t.Fatalf("the consent page's host is %q, want where the code goes, %q", shown, evilHost)
	}
	if name, site := text("Claimed name"), text("Claimed site"); name != "Claude" || site != "https://claude.ai" {
		t.Fatalf("claims shown as %q and %q", name, site)
	}
	if heading := p.Eval(`document.querySelector('h1').textContent`); strings.Contains(heading, "Claude") {
		t.Fatalf("the heading repeats the client's claim: %q", heading)
	}
	p.Do(browser.Click("button", "Approve"))
	for deadline := time.Now().Add(15 * time.Second); got.Load() == nil && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
	}
	if got.Load() == nil || got.Load().Query().Get("code") == "" {
		t.Fatal("the approval did not reach the client's redirect URI")
	}
	grants := w.a.Get("/v1/auth-core/oauth/grants", "Authorization", "Bearer "+w.admin.AccessToken).Expect(t, 200, nil)["grants"].([]any)
	g := grants[0].(map[string]any)
	if g["clientHost"] != evilHost || g["clientName"] != "Claude" || g["clientIdHost"] != nil {
		t.Fatalf("the grant keeps %v", g)
	}
}

// What stock hosts saw on every consent page: "Scopes: [object HTMLUListElement]". The
// scopes a step-up asks for are listed as text, one item each, what the grant holds
// already apart, and nothing on the page reads "[object".
func TestConsentListsScopesAsText(t *testing.T) {
	w := newWorld(t, apptest.Stores(t)[0])
	files := "https://files.example/mcp"
	w.a.RegisterResource(t, w.admin, w.project, files, []string{"files:read", "files:write", "files:delete"})
	client := register(t, w.a, "http://127.0.0.1/callback")
	f := newFlow(client, "http://127.0.0.1/callback")
	f.extra.Set("resource", files)
	f.extra.Set("scope", "files:read")
	approve(t, w.a, w.admin, f)

	f = newFlow(client, "http://127.0.0.1/callback")
	f.extra.Set("resource", files)
	f.extra.Set("scope", "files:read files:write files:delete")
	p := browser.NewPage(t, browser.Tab(t, nil))
	p.Do(chromedp.Navigate(w.a.Base+"/oauth/authorize?"+f.query().Encode()),
		browser.WaitFor("button", "Sign in"),
		browser.TypeInto("textbox", "Email", w.admin.Email), browser.TypeInto("textbox", "Password", w.admin.Password), browser.Click("button", "Sign in"),
		browser.WaitFor("button", "Approve"))
	p.Shot("consent-scopes")
	var items []string
	if err := json.Unmarshal([]byte(p.Eval(`JSON.stringify([...document.querySelectorAll('[aria-label="Requested scopes"] > li')].map((li) => li.textContent))`)), &items); err != nil {
		t.Fatal(err)
	}
	if strings.Join(items, " ") != "files:write files:delete" {
		t.Errorf("the requested scopes are listed as %q, want the items files:write and files:delete", items)
	}
	if got := p.Eval(`(document.querySelector('[aria-label="Scopes already allowed"]') || {textContent: ''}).textContent`); got != "Already allowed: files:read" {
		t.Errorf("what the grant holds reads %q", got)
	}
	if page := p.Eval(`document.querySelector('main').innerText`); strings.Contains(page, "[object") {
		t.Errorf("the consent page shows an object, not its text:\n%s", page)
	}
}

// Hosts are shown in IDNA ASCII, so a look-alike Unicode name reads as the xn-- label it
// is; names and URIs with format characters (U+202E and the like) are refused.
func TestHostsAsPunycodeAndNoFormatCharacters(t *testing.T) {
	w := newWorld(t, apptest.Stores(t)[0])
	a := w.a
	lookalike := "https://\u0430pple.example/cb" // a Cyrillic а
	client := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/register", Body: map[string]any{
		"client_name": "Apple", "redirect_uris": []string{lookalike}}}).Expect(t, 201, nil)["client_id"].(string)
	f := newFlow(client, lookalike)
	f.extra.Set("resource", w.mcp.URL)
	id := requestOf(t, a, f)
	c := consentOf(a, w.admin, id).Expect(t, 200, nil)["client"].(map[string]any)
	if c["host"] != "xn--pple-43d.example" {
		t.Fatalf("host shown as %v", c["host"])
	}

	for name, body := range map[string]map[string]any{
		"a name with U+202E":         {"client_name": "Cla\u202eude", "redirect_uris": []string{"https://app.example/cb"}},
		"a name with U+200B":         {"client_name": "Cla\u200bude", "redirect_uris": []string{"https://app.example/cb"}},
		"a redirect URI with U+202E": {"redirect_uris": []string{"https://app.example\u202e/cb"}},
		"a client_uri with U+2066":   {"client_uri": "https://\u2066claude.ai", "redirect_uris": []string{"https://app.example/cb"}},
		"a host IDNA refuses":        {"redirect_uris": []string{"https://ex_ample.com/cb"}},
	} {
		t.Run(name, func(t *testing.T) {
			got := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/register", Body: body}).Expect(t, 400, nil)
			if e := got["error"]; e != "invalid_client_metadata" && e != "invalid_redirect_uri" {
				t.Fatalf("answered %v", got)
			}
		})
	}

	// A metadata document whose name hides a format character is refused on fetch.
	w.cimdDoc.Store(&map[string]any{"client_id": w.cimd.URL + "/client.json", "client_name": "Test \u202eHost",
		"redirect_uris": []string{"http://127.0.0.1/cb"}})
	g := newFlow(w.cimd.URL+"/client.json", "http://127.0.0.1/cb")
	if res := authorize(t, a, g.query()); res.StatusCode != http.StatusBadRequest || res.Header.Get("Location") != "" {
		t.Fatalf("a document with a format character: %d %q", res.StatusCode, res.Header.Get("Location"))
	}
}

// A grant lives only while what it was approved on stands: its person an admin of its
// project, its resources registered there, its scopes within the policy; a new password
// ends every grant of its user.
func TestGrantsDieWithWhatTheyStandOn(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		in := testkit.StartInbox(t)
		w := newWorld(t, st, apptest.WithConfig(func(c *config.Config) { c.SMTPURL = in.URL }))
		a := w.a
		refresh := func(app apptest.ConnectedApp) *apptest.Response {
			return a.PostForm("/v1/oauth/token", url.Values{"grant_type": {"refresh_token"}, "client_id": {app.ClientID}, "refresh_token": {app.RefreshToken}}, nil)
		}
		introspect := func(token string) map[string]any {
			return a.PostForm("/v1/oauth/introspect", url.Values{"token": {token}}, apptest.Basic(w.introspector.ID, w.introspector.Secret)).Expect(t, 200, nil)
		}
		dead := func(t *testing.T, app apptest.ConnectedApp, reason string) {
			t.Helper()
			// Before anyone presents the grant's tokens: the change itself ended it.
			if in := introspect(app.AccessToken); in["active"] != false {
				t.Fatalf("its access token introspects %v", in)
			}
			refresh(app).Expect(t, 400, map[string]any{"error": "invalid_grant"})
			trail := a.Do(apptest.Req{Path: "/v1/projects/" + w.project + "/audit?limit=200", Header: w.admin.Bearer()}).Expect(t, 200, nil)["events"].([]any)
			for _, e := range trail {
				e := e.(map[string]any)
				if md, _ := e["metadata"].(map[string]any); e["action"] == "oauth.grant_revoke" && md["grantId"] == app.GrantID && md["reason"] == reason {
					return
				}
			}
			t.Fatalf("no oauth.grant_revoke of %s with reason %s", app.GrantID, reason)
		}

		t.Run("removing a member ends what they approved", func(t *testing.T) {
			b := a.SignUp(t)
			a.AddMember(t, w.admin, w.project, b, "admin")
			app := a.ConnectApp(t, b, w.project, w.mcp.URL)
			mine := a.ConnectApp(t, w.admin, w.project, w.mcp.URL)
			a.Do(apptest.Req{Method: http.MethodDelete, Path: "/v1/projects/" + w.project + "/members/" + b.UserID, Header: w.admin.Bearer()}).Expect(t, 200, nil)
			dead(t, app, "member_removed")
			refresh(mine).Expect(t, 200, nil) // the remaining admin's grant stands
		})
		t.Run("deleting a resource ends its grants, even once another project holds the URI", func(t *testing.T) {
			uri := w.mcp.URL + "/leaving"
			rid := a.RegisterResource(t, w.admin, w.project, uri, nil)["id"].(string)
			app := a.ConnectApp(t, w.admin, w.project, uri)
			stays := a.ConnectApp(t, w.admin, w.project, w.mcp.URL)
			a.Do(apptest.Req{Method: http.MethodDelete, Path: "/v1/projects/" + w.project + "/oauth/resources/" + rid, Header: w.admin.Bearer()}).Expect(t, 200, nil)
			other := a.SignUp(t)
			a.RegisterResource(t, other, a.CreateProject(t, other), uri, nil)
			dead(t, app, "resource_deleted")
			refresh(stays).Expect(t, 200, nil)
		})
		t.Run("a narrower policy narrows the tokens", func(t *testing.T) {
			uri := w.mcp.URL + "/files"
			a.RegisterResource(t, w.admin, w.project, uri, []string{"tools:call", "files:read"})
			f := newFlow(register(t, a, "http://127.0.0.1/callback"), "http://127.0.0.1/callback")
			f.extra.Set("resource", uri)
			f.extra.Set("scope", "tools:call files:read")
			first := redeem(a, f, approve(t, a, w.admin, f), nil).Expect(t, 200, map[string]any{"scope": "tools:call files:read"})
			setPolicy := func(body map[string]any) {
				a.Do(apptest.Req{Method: http.MethodPut, Path: "/v1/projects/" + w.project + "/policy", Header: w.admin.Bearer(), Body: body}).Expect(t, 200, nil)
			}
			setPolicy(map[string]any{"allowedScopes": []string{"files:*"}})
			defer setPolicy(map[string]any{})
			next := a.PostForm("/v1/oauth/token", url.Values{"grant_type": {"refresh_token"}, "client_id": {f.clientID},
				"refresh_token": {first["refresh_token"].(string)}}, nil).Expect(t, 200, map[string]any{"scope": "files:read"})
			if sc := apptest.ClaimsOf(t, next["access_token"].(string))["scope"]; sc != "files:read" {
				t.Fatalf("access token scope %v", sc)
			}
		})
		t.Run("changing the password ends every grant of its user", func(t *testing.T) {
			u := a.SignUp(t)
			prj := a.CreateProject(t, u)
			app := a.ConnectApp(t, u, prj, "")
			a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/password/change", Header: u.Bearer(),
				Body: map[string]any{"currentPassword": u.Password, "password": "another horse battery"}}).Expect(t, 200, nil)
			refresh(app).Expect(t, 400, map[string]any{"error": "invalid_grant"})
		})
		t.Run("a password reset ends every grant of its user", func(t *testing.T) {
			u := a.SignUp(t)
			a.AddMember(t, w.admin, w.project, u, "admin")
			app := a.ConnectApp(t, u, w.project, w.mcp.URL)
			before := len(in.Mails())
			a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/password/reset-request", Body: map[string]any{"email": u.Email}}).Expect(t, 202, nil)
			token := regexp.MustCompile(`ac_rst_[0-9A-Za-z]{38}`).FindString(in.Wait(t, before+1)[before].Text)
			a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/password/reset", Body: map[string]any{"token": token, "password": "a brand new horse"}}).Expect(t, 200, nil)
			dead(t, app, "password_reset")
		})
	})
}

// Consent follows the rules of the project's admin routes (SPEC §9b): an admin without a
// factor on a project that requires one cannot approve (mfa_required), an admin with a
// factor needs a recent authentication, and so do policy changes and resource
// registration.
func TestConsentFollowsTheAdminRules(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st, apptest.WithConfig(func(c *config.Config) { c.AccessTTL = 24 * time.Hour }))
		a := w.a
		secret := enrolTOTP(t, a, w.admin)
		a.Do(apptest.Req{Method: http.MethodPut, Path: "/v1/projects/" + w.project + "/policy", Header: w.admin.Bearer(),
			Body: map[string]any{"requireMfa": true}}).Expect(t, 200, nil)
		flow := func() *flow {
			f := newFlow(register(t, a, "http://127.0.0.1/callback"), "http://127.0.0.1/callback")
			f.extra.Set("resource", w.mcp.URL)
			return f
		}

		t.Run("an admin without a factor on a project that requires one", func(t *testing.T) {
			plain := a.SignUp(t)
			// Added before the policy required a factor: they are an admin, without one.
			a.Do(apptest.Req{Method: http.MethodPut, Path: "/v1/projects/" + w.project + "/policy", Header: w.admin.Bearer(), Body: map[string]any{}}).Expect(t, 200, nil)
			a.AddMember(t, w.admin, w.project, plain, "admin")
			a.Do(apptest.Req{Method: http.MethodPut, Path: "/v1/projects/" + w.project + "/policy", Header: w.admin.Bearer(),
				Body: map[string]any{"requireMfa": true}}).Expect(t, 200, nil)
			id := requestOf(t, a, flow())
			c := consentOf(a, plain, id).Expect(t, 200, map[string]any{"canApprove": false})
			if !strings.Contains(c["reason"].(string), "second factor") {
				t.Fatalf("reason %v", c["reason"])
			}
			decideAs(a, plain, id, map[string]any{"decision": "approve", "csrfToken": c["csrfToken"]}).Expect(t, 403, map[string]any{"code": "mfa_required"})
			consentOf(a, plain, id).Expect(t, 200, nil) // nothing was decided
		})
		t.Run("an admin with a factor needs a recent authentication", func(t *testing.T) {
			a.Clock.Advance(guardWindow)
			defer a.Clock.Advance(-guardWindow)
			id := requestOf(t, a, flow())
			c := consentOf(a, w.admin, id).Expect(t, 200, map[string]any{"canApprove": true})
			decideAs(a, w.admin, id, map[string]any{"decision": "approve", "csrfToken": c["csrfToken"]}).Expect(t, 403, map[string]any{"code": "reauthentication_required"})
			a.Do(apptest.Req{Method: http.MethodPut, Path: "/v1/projects/" + w.project + "/policy", Header: w.admin.Bearer(), Body: map[string]any{"requireMfa": false}}).
				Expect(t, 403, map[string]any{"code": "reauthentication_required"})
			a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + w.project + "/oauth/resources", Header: w.admin.Bearer(),
				Body: map[string]any{"uri": "https://late.example/mcp", "name": "late"}}).Expect(t, 403, map[string]any{"code": "reauthentication_required"})
			// A step-up makes all three possible again.
			up := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/mfa/step-up", Header: w.admin.Bearer(),
				Body: map[string]any{"code": totpCode(t, secret, a.Clock.Now())}}).Expect(t, 200, nil)
			fresh := &apptest.Session{AccessToken: up["accessToken"].(string)}
			headers := opener(fresh, id)
			a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/authorizations/" + id, Header: headers,
				Body: map[string]any{"decision": "approve", "csrfToken": c["csrfToken"]}}).Expect(t, 200, nil)
			a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + w.project + "/oauth/resources", Header: fresh.Bearer(),
				Body: map[string]any{"uri": "https://late.example/mcp", "name": "late"}}).Expect(t, 201, nil)
		})
	})
}

// guardWindow is just past the step-up window of SPEC §17.
const guardWindow = 15*time.Minute + time.Second

func enrolTOTP(t *testing.T, a *apptest.App, s *apptest.Session) string {
	t.Helper()
	pending := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/mfa/totp", Header: s.Bearer(), Body: map[string]any{}}).Expect(t, 201, nil)
	secret := pending["secret"].(string)
	a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/mfa/totp/" + pending["id"].(string) + "/confirm", Header: s.Bearer(),
		Body: map[string]any{"code": totpCode(t, secret, a.Clock.Now())}}).Expect(t, 200, nil)
	return secret
}

func totpCode(t testing.TB, secret string, at time.Time) string {
	c, err := totp.GenerateCodeCustom(secret, at, totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// An authorization request belongs to the browser that opened it and to the session that
// first looked at it there: another person — or the same one elsewhere — finds nothing.
func TestAuthorizationRequestIsTheOpeners(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		a := w.a
		f := newFlow(register(t, a, "http://127.0.0.1/callback"), "http://127.0.0.1/callback")
		f.extra.Set("resource", w.mcp.URL)
		id := requestOf(t, a, f)
		other := a.SignUp(t)
		a.AddMember(t, w.admin, w.project, other, "admin")

		// Without the browser's mark, nobody sees it: not even its person.
		a.Get("/v1/oauth/authorizations/"+id, "Authorization", "Bearer "+w.admin.AccessToken).Expect(t, 404, map[string]any{"code": "authorization_not_found"})
		// The first session to look at it in that browser holds it.
		c := consentOf(a, w.admin, id).Expect(t, 200, nil)
		consentOf(a, other, id).Expect(t, 404, map[string]any{"code": "authorization_not_found"})
		decideAs(a, other, id, map[string]any{"decision": "approve", "csrfToken": c["csrfToken"]}).Expect(t, 404, nil)
		second := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signin", Body: map[string]any{"email": w.admin.Email, "password": w.admin.Password}}).Expect(t, 200, nil)
		elsewhere := &apptest.Session{AccessToken: second["session"].(map[string]any)["accessToken"].(string)}
		consentOf(a, elsewhere, id).Expect(t, 404, nil)
		// Its person, in its browser, decides it.
		decideAs(a, w.admin, id, map[string]any{"decision": "deny", "csrfToken": c["csrfToken"]}).Expect(t, 200, nil)
	})
}

// A client metadata document is fetched only within the address's budget, and once per
// minute at most however its server asks not to be cached: the review saw 80 of 80
// requests reach an outside server.
func TestMetadataDocumentFetchesAreBounded(t *testing.T) {
	w := newWorld(t, apptest.Stores(t)[0], apptest.WithConfig(func(c *config.Config) { c.RateLimit = 20 }))
	var fetches sync.Map
	count := func(path string) int {
		n, _ := fetches.Load(path)
		v, _ := n.(*atomic.Int32)
		if v == nil {
			return 0
		}
		return int(v.Load())
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		n, _ := fetches.LoadOrStore(r.URL.Path, new(atomic.Int32))
		n.(*atomic.Int32).Add(1)
		rw.Header().Set("Cache-Control", "no-store")
		_ = json.NewEncoder(rw).Encode(map[string]any{"client_id": "https://" + r.Host + r.URL.Path, "redirect_uris": []string{"http://127.0.0.1/cb"}})
	}))
	srv.TLS = w.cimd.TLS
	srv.StartTLS()
	t.Cleanup(srv.Close)
	for range 80 {
		authorize(t, w.a, newFlow(srv.URL+"/same.json", "http://127.0.0.1/cb").query())
	}
	if n := count("/same.json"); n != 1 {
		t.Fatalf("one document asked for 80 times was fetched %d times", n)
	}
	w.a.Clock.Advance(time.Minute + time.Second) // the budget refills; the document is stale
	defer w.a.Clock.Advance(-(time.Minute + time.Second))
	for i := range 80 {
		authorize(t, w.a, newFlow(srv.URL+"/doc-"+string(rune('a'+i%26))+string(rune('a'+i/26))+".json", "http://127.0.0.1/cb").query())
	}
	total := 0
	fetches.Range(func(k, v any) bool {
		if k != "/same.json" {
			total += int(v.(*atomic.Int32).Load())
		}
		return true
	})
	if total > 20 {
		t.Fatalf("80 different documents from one address with a budget of 20: %d fetched", total)
	}
}

// Registered clients nobody used for 30 days, with no live grant, are pruned; a client in
// use stays.
func TestIdleClientsArePruned(t *testing.T) {
	var pruner *authz.Pruner
	w := newWorld(t, apptest.Stores(t)[0], apptest.WithFx(fx.Populate(&pruner)), apptest.WithConfig(func(c *config.Config) { c.AccessTTL = 60 * 24 * time.Hour }))
	a := w.a
	idle := register(t, a, "http://127.0.0.1/idle")
	// A project's app is its admins' to delete, however idle (SPEC §25).
	app := createApp(t, a, w.admin, w.project, map[string]any{"name": "Idle app", "type": "cli", "redirectUris": []string{"http://127.0.0.1/app"}})["app"].(map[string]any)["clientId"].(string)
	granted := a.ConnectApp(t, w.admin, w.project, w.mcp.URL) // a live grant keeps it
	revoked := a.ConnectApp(t, w.admin, w.project, w.mcp.URL)
	a.Do(apptest.Req{Method: http.MethodDelete, Path: "/v1/auth-core/oauth/grants/" + revoked.GrantID, Header: w.admin.Bearer()}).Expect(t, 200, nil)
	a.Clock.Advance(29 * 24 * time.Hour)
	recent := newFlow(register(t, a, "http://127.0.0.1/recent"), "http://127.0.0.1/recent")
	recent.extra.Set("resource", w.mcp.URL)
	a.Clock.Advance(2 * 24 * time.Hour)
	defer a.Clock.Advance(-31 * 24 * time.Hour)
	approve(t, a, w.admin, recent) // a code a day ago keeps it, though it is 2 days old
	if _, err := pruner.Prune(context.Background()); err != nil {
		t.Fatal(err)
	}
	known := func(id string) bool { return !strings.Contains(readPage(t, a, id), "no client is registered") }
	for id, want := range map[string]bool{idle: false, revoked.ClientID: false, granted.ClientID: true, recent.clientID: true, app: true} {
		if got := known(id); got != want {
			t.Errorf("client %s known after pruning: %v, want %v", id, got, want)
		}
	}
}

// readPage is the error page an authorization request for client id shows.
func readPage(t *testing.T, a *apptest.App, id string) string {
	t.Helper()
	res, err := http.Get(a.Base + "/oauth/authorize?" + url.Values{"client_id": {id}, "redirect_uri": {"http://127.0.0.1/not-registered"}}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusBadRequest {
		t.Fatalf("authorize answered %d: %v", res.StatusCode, err)
	}
	return string(body)
}

// Two refreshes racing with one refresh token from the same client (two tabs, a retry)
// get the same new pair; after the grace, the old token is theft as before.
func TestParallelRefreshesShareOnePair(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		g := newGrant(t, st)
		const racers = 4
		answers := make([]map[string]any, racers)
		var wg sync.WaitGroup
		for i := range racers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				answers[i] = g.refreshWith(g.refresh, nil).Expect(t, 200, nil)
			}()
		}
		wg.Wait()
		for _, a := range answers[1:] {
			if a["refresh_token"] != answers[0]["refresh_token"] || a["access_token"] != answers[0]["access_token"] {
				t.Fatalf("racing refreshes got different pairs: %v / %v", answers[0], a)
			}
		}
		next := answers[0]["refresh_token"].(string)
		// Another client presenting it within the grace is refused, and ends nothing.
		g.a.PostForm("/v1/oauth/token", url.Values{"grant_type": {"refresh_token"}, "client_id": {register(t, g.a, "http://127.0.0.1/cb")}, "refresh_token": {g.refresh}}, nil).
			Expect(t, 400, map[string]any{"error": "invalid_grant"})
		// Once the new token has rotated too, the first is no longer the previous one.
		newest := g.refreshWith(next, nil).Expect(t, 200, nil)["refresh_token"].(string)
		g.refreshWith(g.refresh, nil).Expect(t, 400, map[string]any{"error": "invalid_grant"})
		g.refreshWith(newest, nil).Expect(t, 400, map[string]any{"error": "invalid_grant"}) // the grant ended
	})
	t.Run("after the grace it is theft", func(t *testing.T) {
		g := newGrant(t, apptest.Stores(t)[0])
		next := g.refreshWith(g.refresh, nil).Expect(t, 200, nil)["refresh_token"].(string)
		g.a.Clock.Advance(2 * time.Second)
		defer g.a.Clock.Advance(-2 * time.Second)
		g.refreshWith(g.refresh, nil).Expect(t, 400, map[string]any{"error": "invalid_grant"})
		g.refreshWith(next, nil).Expect(t, 400, map[string]any{"error": "invalid_grant"})
		if in := g.introspect(t, g.access); in["active"] != false {
			t.Fatalf("the grant's access token is %v after reuse", in)
		}
	})
}
