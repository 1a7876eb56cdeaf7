package federation_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/crewjam/saml/samlidp"
	"golang.org/x/oauth2"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/internal/browser"
	"github.com/authcore/authcore/internal/interop"
	"github.com/authcore/authcore/internal/testkit"
	"github.com/authcore/authcore/platform/config"
)

// acmeIdP is Acme's SAML identity provider: crewjam/saml's samlidp on loopback, with its
// own signing key, its people and the service providers it was given metadata of.
type acmeIdP struct {
	url string
}

func startAcmeIdP(t *testing.T) *acmeIdP {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "Acme IdP"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// localhost, as authcore's public URL: the same site, so the SP's flow cookie (Lax
	// over plain http) goes along with the IdP's POST to the ACS, as SameSite=None does
	// over https in production.
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	u, _ := url.Parse("http://localhost:" + port)
	idp, err := samlidp.New(samlidp.Options{URL: *u, Key: key, Certificate: cert, Store: &samlidp.MemoryStore{}})
	if err != nil {
		t.Fatal(err)
	}
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: idp, ReadHeaderTimeout: 10 * time.Second}}
	srv.Start()
	t.Cleanup(srv.Close)
	return &acmeIdP{url: u.String()}
}

// put is the IdP's admin API (PUT /users/…, /services/…), as its operator uses it.
func (p *acmeIdP) put(t *testing.T, path, contentType string, body []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPut, p.url+path, strings.NewReader(string(body)))
	req.Header.Set("Content-Type", contentType)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode/100 != 2 {
		t.Fatalf("PUT %s at the IdP: %d %s", path, res.StatusCode, b)
	}
}

func (p *acmeIdP) addPerson(t *testing.T, login, email, given, family string, groups ...string) {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"name": login, "password": "hunter2-" + login, "email": email, "given_name": given, "surname": family,
		"common_name": given + " " + family, "groups": groups})
	p.put(t, "/users/"+login, "application/json", b)
}

// metadataFile is the IdP's metadata as its admin exports it: a file on disk.
func (p *acmeIdP) metadataFile(t *testing.T) string {
	t.Helper()
	res, err := http.Get(p.url + "/metadata")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	path := filepath.Join(t.TempDir(), "acme-idp-metadata.xml")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// signIn signs login in at the IdP's own sign-in page, in tab pg, as a person starts
// their working day at Okta: an SP-initiated sign-in then finds their IdP session.
// (samlidp's form shown in the middle of a sign-in posts the AuthnRequest back without its
// HTTP-Redirect signature and then refuses it as unsigned.)
func (p *acmeIdP) signIn(pg *browser.Page, login string) {
	pg.Do(chromedp.Navigate(p.url+"/login"), chromedp.WaitVisible(chromedp.CSS(`input[name=user]`)), chromedp.SendKeys(chromedp.CSS(`input[name=user]`), login),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), "hunter2-"+login), chromedp.Click(chromedp.CSS(`input[type=submit]`)),
		chromedp.WaitVisible(login, chromedp.ByFunc(browser.Text(login))))
}

// scimClient speaks to a directory as Okta's provisioning client does: its bearer token,
// its media type, its request shapes.
type scimClient struct {
	base, token string
}

func (c scimClient) do(t *testing.T, method, path string, body any) (int, map[string]any) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = strings.NewReader(string(b))
	}
	req, _ := http.NewRequest(method, c.base+path, r)
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", "application/scim+json")
	req.Header.Set("User-Agent", "Okta SCIM Client 1.0.0")
	if body != nil {
		req.Header.Set("Content-Type", "application/scim+json; charset=utf-8")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out
}

// oktaRecording is the request sequence Okta's provisioning client sends, as the scim
// module's tests keep it (modules/scim/testdata/okta.json), for its test user at its
// test domain: replayed here for the new hire at Acme's domain.
type oktaRecording struct {
	GroupRoles map[string]string `json:"groupRoles"`
	Steps      []struct {
		Name    string            `json:"name"`
		Method  string            `json:"method"`
		Path    string            `json:"path"`
		Body    any               `json:"body"`
		Status  int               `json:"status"`
		Capture map[string]string `json:"capture"`
	} `json:"steps"`
}

func loadOkta(t *testing.T, email string) oktaRecording {
	t.Helper()
	raw, err := os.ReadFile("../scim/testdata/okta.json")
	if err != nil {
		t.Fatal(err)
	}
	local, domain, _ := strings.Cut(email, "@")
	raw = []byte(strings.NewReplacer("test.user@okta.local", email, "test.user%40okta.local", url.QueryEscape(email), "test.user", local, "okta.local", domain).Replace(string(raw)))
	var rec oktaRecording
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatal(err)
	}
	return rec
}

// replay sends the recording's steps from the one named from up to (not including) the
// one named to, filling in and capturing the ids Okta keeps, each answered as recorded.
func (c scimClient) replay(t *testing.T, rec oktaRecording, vars map[string]string, from, to string) {
	t.Helper()
	fill := func(s string) string {
		for k, v := range vars {
			s = strings.ReplaceAll(s, "{{"+k+"}}", v)
		}
		return s
	}
	on := false
	for _, step := range rec.Steps {
		on = on || step.Name == from
		if step.Name == to {
			return
		}
		if !on {
			continue
		}
		var body any
		if step.Body != nil {
			b, _ := json.Marshal(step.Body)
			body = json.RawMessage(fill(string(b)))
		}
		status, got := c.do(t, step.Method, fill(step.Path), body)
		if status != step.Status {
			t.Fatalf("Okta's %q: %d, want %d: %v", step.Name, status, step.Status, got)
		}
		for name, field := range step.Capture {
			vars[name], _ = got[field].(string)
		}
	}
	if to != "" {
		t.Fatalf("Okta's recording has no step %q", to)
	}
}

// appOf is Acme Portal, the project's app as a stock relying party runs it (go-oidc and
// x/oauth2, PKCE, a nonce): it keeps the tokens it was issued and hears back-channel
// logout tokens.
type appOf struct {
	conf     oauth2.Config
	verifier *oidc.IDTokenVerifier
	pkce     sync.Map // state → PKCE verifier
	got      chan signedIn
	logouts  chan time.Time
}

type signedIn struct {
	claims map[string]any
	token  *oauth2.Token
	err    error
}

func newPortal(t *testing.T, a *apptest.App, admin *apptest.Session, project string) *appOf {
	t.Helper()
	app := &appOf{got: make(chan signedIn, 1), logouts: make(chan time.Time, 4)}
	mux := http.NewServeMux()
	mux.HandleFunc("/callback", func(rw http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		v, _ := app.pkce.Load(q.Get("state"))
		verifier, _ := v.(string)
		tok, err := app.conf.Exchange(r.Context(), q.Get("code"), oauth2.VerifierOption(verifier))
		var c map[string]any
		if err == nil {
			raw, _ := tok.Extra("id_token").(string)
			var idt *oidc.IDToken
			if idt, err = app.verifier.Verify(r.Context(), raw); err == nil {
				err = idt.Claims(&c)
			}
		}
		if err == nil && c["nonce"] != "n-"+q.Get("state") {
			err = fmt.Errorf("nonce %v", c["nonce"])
		}
		app.got <- signedIn{claims: c, token: tok, err: err}
		_, _ = fmt.Fprint(rw, "signed in to Acme Portal")
	})
	mux.HandleFunc("/logout", func(rw http.ResponseWriter, r *http.Request) {
		if r.ParseForm() == nil && r.PostForm.Get("logout_token") != "" {
			app.logouts <- time.Now()
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	created := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + project + "/apps", Header: admin.Bearer(),
		Body: map[string]any{"name": "Acme Portal", "type": "spa", "redirectUris": []string{srv.URL + "/callback"},
			"backchannelLogoutUri": srv.URL + "/logout"}}).Expect(t, 201, nil)
	clientID := created["app"].(map[string]any)["clientId"].(string)
	issuer := a.Get("/.well-known/openid-configuration").Expect(t, 200, nil)["issuer"].(string)
	prov, err := oidc.NewProvider(context.Background(), issuer)
	if err != nil {
		t.Fatal(err)
	}
	app.conf = oauth2.Config{ClientID: clientID, Endpoint: prov.Endpoint(), RedirectURL: srv.URL + "/callback", Scopes: []string{oidc.ScopeOpenID, "email"}}
	app.conf.Endpoint.AuthStyle = oauth2.AuthStyleInParams
	app.verifier = prov.Verifier(&oidc.Config{ClientID: clientID})
	return app
}

func (app *appOf) authURL() string {
	v := oauth2.GenerateVerifier()
	state := "s" + v[:10]
	app.pkce.Store(state, v)
	return app.conf.AuthCodeURL(state, oauth2.S256ChallengeOption(v), oauth2.SetAuthURLParam("nonce", "n-"+state))
}

func (app *appOf) next(t *testing.T) signedIn {
	t.Helper()
	select {
	case s := <-app.got:
		return s
	case <-time.After(30 * time.Second):
		t.Fatal("Acme Portal's callback was never reached")
		return signedIn{}
	}
}

// front brings a tab to the front: a background tab's accessibility tree is not kept.
var front = chromedp.Action[chromedp.Void](func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
	_, err := cdp.Call(ctx, tg, page.BringToFront, cdp.Empty{})
	return chromedp.Void{}, err
})

// replicaCheck is one credential of the person, asked on one replica: alive until
// deprovisioning ends it.
type replicaCheck struct {
	name  string
	alive func() bool
}

// refused is an answer that refuses a credential: not a rate limit or a server error,
// which would only make deprovisioning look faster than it is.
func refused(r *apptest.Response) bool {
	return r.Status == http.StatusBadRequest || r.Status == http.StatusUnauthorized || r.Status == http.StatusForbidden
}

// Issue #44's "done means", as a new user would try it, on two replicas sharing one
// PostgreSQL database: Acme's IT admin, on a setup link in Chromium and without an
// account, proves acme's domain by DNS, uploads the metadata file of Acme's SAML IdP
// (crewjam/saml's samlidp), registers the SP values the page shows there, tests the
// connection by signing in once, and creates a SCIM directory whose base URL and token
// go into the IdP's provisioning client. That client (Okta's requests, over HTTP)
// provisions a new hire, who signs in through SAML into Acme Portal (go-oidc; its
// id_token names Acme), links the mail account an agent reads for them (the token
// vault) and is asked by another agent to approve a payment. Then the directory
// deactivates them, and within a second every one of those — the session, the portal's
// refresh token and access token, the vault connection and the pending approval — is
// refused on both replicas; the portal hears a back-channel logout.
func TestEnterpriseSetupToDeprovisioning(t *testing.T) {
	if apptest.PostgresAdminURL() == "" {
		t.Skip("two replicas share a PostgreSQL database: " + apptest.EnvDatabaseURL + " is not set")
	}
	interop.Dir(t)
	st := apptest.Stores(t)[1]
	dbURL := st.FreshURL(t)
	zone, up, inbox, idp := startTXTZone(t), interop.StartUpstream(t), testkit.StartInbox(t), startAcmeIdP(t)
	settings := func(public func(c *config.Config)) apptest.Option {
		return apptest.WithConfig(func(c *config.Config) {
			c.WebhookAllowHTTP = true // the upstream, the IdP and the portal listen on loopback, over http
			c.SMTPURL = inbox.URL
			c.DNSResolver = zone.addr
			public(c)
		})
	}
	// One public URL for both, as behind a load balancer: the browser reaches the first;
	// the second serves the same tokens to whoever asks it. localhost: WebAuthn takes no IP.
	a := apptest.StartURL(t, st.Name, dbURL, settings(func(c *config.Config) {
		_, port, _ := net.SplitHostPort(c.Addr)
		c.PublicURL = "http://localhost:" + port
	}))
	b := apptest.StartURL(t, st.Name, dbURL, settings(func(c *config.Config) { c.PublicURL = a.Config.PublicURL }))
	// The replicas' clocks are the tests' (standing still); the IdP's is the machine's
	// and refuses a request issued more than 90 s ago: they catch up before each sign-in.
	catchUp := func() {
		for _, r := range []*apptest.App{a, b} {
			r.Clock.Advance(time.Since(r.Clock.Now()))
		}
	}
	admin := a.SignUp(t)
	project := a.CreateProject(t, admin)
	do := func(method, path string, body any) *apptest.Response {
		return a.Do(apptest.Req{Method: method, Path: path, Body: body, Header: admin.Bearer()})
	}
	orgs := "/v1/projects/" + project + "/orgs"
	domain := "acme-" + rnd(3) + ".example"
	acme := do(http.MethodPost, orgs, map[string]any{"name": "Acme"}).Expect(t, 201, nil)["id"].(string)
	link := do(http.MethodPost, orgs+"/"+acme+"/setup-links", map[string]any{"intents": []string{"domains", "sso", "directory"}}).Expect(t, 201, nil)["url"].(string)
	portal := newPortal(t, a, admin, project)

	// The IT admin proves the domain by its TXT record.
	it := tab(t)
	it.Do(chromedp.Navigate(link), browser.WaitFor("heading", "Set up Acme"),
		browser.TypeInto("textbox", "Domain", domain), browser.Click("button", "Add domain"), browser.WaitFor("button", "Verify "+domain))
	name := it.Eval(`document.querySelector('[aria-label="DNS name for ` + domain + `"]').textContent`)
	zone.mu.Lock()
	zone.txt[name] = it.Eval(`document.querySelector('[aria-label="DNS value for ` + domain + `"]').textContent`)
	zone.mu.Unlock()
	it.Do(browser.Click("button", "Verify "+domain), chromedp.WaitVisible("verified", chromedp.ByFunc(browser.Text("verified"))))

	// Acme's IdP: its metadata file uploaded through the page, its attributes mapped by
	// the (friendly) names samlidp gives them; then the SP values the page shows go to
	// the IdP.
	it.Do(browser.TypeInto("textbox", "SAML connection name", "Acme SAML"),
		chromedp.SetUploadFiles(chromedp.CSS(`input[name="IdP metadata file"]`), []string{idp.metadataFile(t)}),
		browser.TypeInto("textbox", "Email attribute", "mail"), browser.TypeInto("textbox", "First name attribute", "givenName"),
		browser.TypeInto("textbox", "Last name attribute", "sn"), browser.TypeInto("textbox", "Groups attribute", "eduPersonAffiliation"),
		browser.Click("button", "Add SAML connection"), browser.WaitFor("region", "Values for your identity provider"), browser.WaitFor("button", "Test Acme SAML"))
	spValue := func(what string) string {
		return it.Eval(`document.querySelector('[aria-label="Values for your identity provider"] [aria-label="` + what + ` of Acme SAML"]').textContent`)
	}
	metadataURL, acsURL := spValue("SP metadata URL"), spValue("ACS URL")
	if !strings.HasPrefix(metadataURL, a.Config.PublicURL+"/saml/") || !strings.HasSuffix(acsURL, "/acs") || spValue("SP entity ID") == "" {
		t.Fatalf("the page shows SP metadata %q, ACS %q", metadataURL, acsURL)
	}
	res, err := http.Get(metadataURL)
	if err != nil {
		t.Fatal(err)
	}
	spMetadata, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(string(spMetadata), acsURL) {
		t.Fatalf("SP metadata %d:\n%s", res.StatusCode, spMetadata)
	}
	idp.put(t, "/services/authcore", "application/samlmetadata+xml", spMetadata)
	it.Shot("saml-added")

	// Tested by one sign-in at the IdP; the page shows what the connection maps.
	tester := "it-" + rnd(3)
	idp.addPerson(t, tester, tester+"@"+domain, "Ida", "Tester", "it")
	t.Logf("%s the connection added; testing it", time.Now().Format(time.TimeOnly))
	catchUp()
	it.Do(browser.Click("button", "Test Acme SAML"), chromedp.WaitVisible("this address", chromedp.ByFunc(browser.Text("this address"))))
	testURL := it.Eval(`document.querySelector('a[target=_blank]').href`)
	tp := tab(t)
	idp.signIn(tp, tester)
	tp.Do(chromedp.Navigate(testURL))
	// The page's window.open left it a background tab, whose timers Chromium slows.
	it.Do(front, chromedp.WaitVisible("mapped", chromedp.ByFunc(browser.Text(tester+"@"+domain))))
	if got := it.Eval(`document.querySelector('[aria-label="Test result"]').innerText`); !strings.Contains(got, "Ida") {
		t.Fatalf("the test result shows %q", got)
	}
	it.Shot("saml-tested")
	t.Logf("%s tested", time.Now().Format(time.TimeOnly))

	// SSO required: the sign-in page sends Acme's addresses to Acme's IdP.
	it.Do(chromedp.Click(chromedp.CSS(`input[aria-label="Require SSO for our domains"]`)), browser.Click("button", "Save policy"),
		chromedp.WaitVisible("saved", chromedp.ByFunc(browser.Text("Policy saved."))))

	// A directory: its base URL and token are shown once; they go into the IdP's
	// provisioning settings.
	it.Do(browser.TypeInto("textbox", "Directory name", "Okta"), browser.Click("button", "Create directory"),
		chromedp.WaitVisible(chromedp.CSS(`code[data-secret="SCIM token"]`)))
	scim := scimClient{base: it.Eval(`document.querySelector('code[data-secret="SCIM base URL"]').textContent`),
		token: it.Eval(`document.querySelector('code[data-secret="SCIM token"]').textContent`)}
	if !strings.HasPrefix(scim.base, a.Config.PublicURL+"/scim/v2/") || !strings.HasPrefix(scim.token, "ac_scim_") {
		t.Fatalf("the page shows base URL %q, token %q", scim.base, scim.token)
	}
	it.Shot("directory-created")

	// Okta pushes a group whose members are Acme's admins: mapped on the page.
	for group, role := range loadOkta(t, "x@"+domain).GroupRoles {
		it.Do(browser.Click("button", "Add a group to Okta"), browser.TypeInto("textbox", "Group 1 of Okta", group))
		it.Eval(`(i => { i.value = '` + role + `'; i.dispatchEvent(new Event('input')); return 'ok' })(document.querySelector('input[name="Role of group 1 of Okta"]'))`)
		it.Do(browser.Click("button", "Save group roles of Okta"), chromedp.WaitVisible(chromedp.CSS(`input[name="Role of group 1 of Okta"][value="`+role+`"]`)))
	}

	// Okta provisions the new hire, as its recording says: it looks them up, creates
	// them, updates them, pushes the group the IT admin mapped to admin and puts them in.
	hire := "nia-" + rnd(3)
	hireEmail := hire + "@" + domain
	okta := loadOkta(t, hireEmail)
	vars := map[string]string{}
	scim.replay(t, okta, vars, okta.Steps[0].Name, "deactivate the user")
	// The IT admin sees the directory's last sync (a reload keeps the hour's session).
	it.Do(chromedp.Reload(), browser.WaitFor("heading", "Set up Acme"), browser.WaitFor("button", "Roll token of Okta"))
	if got := it.Eval(`document.querySelector('[aria-label="Last sync of Okta"]').textContent`); got == "not yet" || got == "" {
		t.Fatalf("the directory's last sync after Okta's create: %q", got)
	}

	// The new hire signs in to Acme Portal: the sign-in page sends their address to
	// Acme's IdP, whose answer comes back to the portal with Acme in its id_token.
	idp.addPerson(t, hire, hireEmail, "Nia", "Hire", "staff")
	p := tab(t)
	idp.signIn(p, hire)
	t.Logf("%s provisioned; the new hire signs in", time.Now().Format(time.TimeOnly))
	catchUp()
	p.Do(chromedp.Navigate(portal.authURL()), browser.WaitFor("button", "Sign in"),
		browser.TypeInto("textbox", "Email", hireEmail), browser.TypeInto("textbox", "Password", "anything"), browser.Click("button", "Sign in"))
	in := portal.next(t) // a first-party app: no consent asked
	if in.err != nil || in.claims["email"] != hireEmail || in.claims["org_id"] != acme || in.claims["org_role"] != "admin" || in.token.RefreshToken == "" {
		t.Fatalf("Acme Portal's sign-in: %v %v", in.err, in.claims)
	}
	session := p.Cookie(a.Config.PublicURL, "sAccessToken")
	if session == "" {
		t.Fatal("the new hire's browser holds no session")
	}
	hireBearer := bearer(session)
	if me := a.Do(apptest.Req{Path: "/v1/auth-core/session/me", Header: hireBearer}).Expect(t, 200, nil); me["user"].(map[string]any)["email"] != hireEmail {
		t.Fatalf("the new hire's session is %v's", me["user"])
	}

	// An agent reads the new hire's mail through the token vault: they link their mail
	// account (the upstream, with offline access) and connect it for the agent.
	mailClient, mailSecret := "mail-"+rnd(4), "secret-"+rnd(12)
	mail := do(http.MethodPost, "/v1/projects/"+project+"/auth/providers", map[string]any{"type": "oidc", "name": "Acme Mail", "issuer": up.Issuer,
		"clientId": mailClient, "clientSecret": mailSecret, "trustEmail": true, "offline": true,
		"scopes": []string{"openid", "email", "profile", "offline_access"}}).Expect(t, 201, nil)
	up.AddClient(t, mailClient, mailSecret, mail["callbackUrl"].(string))
	mailbox := interop.Account{Login: "m-" + rnd(6), Email: hireEmail, EmailVerified: true, Name: "Nia Hire"}
	up.AddAccount(t, mailbox)
	// The link binds its flow to the browser by a cookie of the public URL's host.
	linking := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/identities/link/" + mail["id"].(string), Header: hireBearer})
	linking.Expect(t, 200, nil)
	person := newPerson(t)
	public, _ := url.Parse(a.Config.PublicURL)
	person.http.Jar.SetCookies(public, (&http.Response{Header: linking.Header}).Cookies())
	if res := person.via(linking.JSON(t)["redirectTo"].(string), mailbox.Login); res.StatusCode/100 != 3 && res.StatusCode != 200 {
		t.Fatalf("linking the mail account: %d %s", res.StatusCode, body(t, res))
	}
	mint := func(name string, scopes ...string) [2]string {
		got := do(http.MethodPost, "/v1/auth-core/projects/"+project+"/ai/agents", map[string]any{"agentName": name, "scopes": scopes}).Expect(t, 200, nil)
		return [2]string{got["agent"].(map[string]any)["id"].(string), got["plaintext"].(string)}
	}
	reader, payer := mint("mail-reader", "mail:read"), mint("payer", "payments:write")
	a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/connections/" + mail["id"].(string), Body: map[string]any{"agents": []string{reader[0]}},
		Header: hireBearer}).Expect(t, 201, nil)

	// Another agent asks them to approve a payment (CIBA): pending.
	form := func(on *apptest.App, v url.Values) *apptest.Response {
		return on.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/token", Body: v.Encode(), Header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}})
	}
	asked := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/bc-authorize", Header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"},
		Body: url.Values{"client_id": {payer[0]}, "client_secret": {payer[1]}, "scope": {"openid payments:write"}, "login_hint": {hireEmail},
			"binding_message": {"Pay INV-1042"}}.Encode()}).Expect(t, 200, nil)["auth_req_id"].(string)

	// Every credential, on each replica: alive now.
	refresh := in.token.RefreshToken
	var refreshMu sync.Mutex
	var checks []replicaCheck
	for _, r := range []struct {
		name string
		app  *apptest.App
	}{{"first", a}, {"second", b}} {
		on := r.app
		checks = append(checks,
			replicaCheck{"session on the " + r.name, func() bool {
				return !refused(on.Do(apptest.Req{Path: "/v1/auth-core/session/me", Header: hireBearer}))
			}},
			replicaCheck{"portal's access token on the " + r.name, func() bool {
				return !refused(on.Do(apptest.Req{Path: "/v1/oauth/userinfo", Header: bearer(in.token.AccessToken)}))
			}},
			// A refresh that still works rotates the token: the next ask uses the new one.
			replicaCheck{"portal's refresh token on the " + r.name, func() bool {
				refreshMu.Lock()
				defer refreshMu.Unlock()
				got := form(on, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}, "client_id": {portal.conf.ClientID}})
				var next struct {
					RefreshToken string `json:"refresh_token"`
				}
				if got.Status == 200 && json.Unmarshal(got.Body, &next) == nil && next.RefreshToken != "" {
					refresh = next.RefreshToken
				}
				return !refused(got)
			}},
			replicaCheck{"vault connection on the " + r.name, func() bool {
				return !refused(on.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/token", Header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"},
					Body: url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"}, "subject_token": {reader[1]},
						"subject_token_type": {"urn:ietf:params:oauth:token-type:access_token"}, "requested_token_type": {"urn:authcore:token-type:upstream-access-token"},
						"resource": {mail["id"].(string)}, "login_hint": {hireEmail}}.Encode()}))
			}},
			// Pending answers authorization_pending (or slow_down, asked this often); a
			// denied request access_denied, whatever the interval.
			replicaCheck{"pending approval on the " + r.name, func() bool {
				got := form(on, url.Values{"grant_type": {"urn:openid:params:grant-type:ciba"}, "auth_req_id": {asked}, "client_id": {payer[0]}, "client_secret": {payer[1]}})
				var e struct{ Error string }
				_ = json.Unmarshal(got.Body, &e)
				return e.Error != "access_denied"
			}},
		)
	}
	for _, c := range checks {
		if !c.alive() { // each can fail: a credential that never worked proves nothing
			t.Fatalf("before deprovisioning, the %s is refused", c.name)
		}
	}

	// Okta deactivates the new hire. From the request on, each credential is asked on
	// its replica until refused.
	start := time.Now()
	scim.replay(t, okta, vars, "deactivate the user", "reactivate the user")
	answered := time.Since(start)
	gone := make([]time.Duration, len(checks))
	var wg sync.WaitGroup
	for i, c := range checks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c.alive() {
				if time.Since(start) > 10*time.Second {
					gone[i] = -1
					return
				}
				time.Sleep(10 * time.Millisecond)
			}
			gone[i] = time.Since(start)
		}()
	}
	wg.Wait()
	var slowest time.Duration
	for i, c := range checks {
		t.Logf("%s: refused %v after the deactivation was sent", c.name, gone[i])
		if gone[i] < 0 {
			t.Errorf("the %s still works 10 s after the deactivation", c.name)
		}
		slowest = max(slowest, gone[i])
	}
	t.Logf("deprovisioning on two replicas: SCIM answered in %v; every credential refused within %v", answered, slowest)
	if slowest >= time.Second {
		t.Errorf("deprovisioning took %v on two replicas, more than the 1 s bound", slowest)
	}
	select {
	case at := <-portal.logouts:
		t.Logf("Acme Portal heard the back-channel logout %v after the deactivation", at.Sub(start))
	case <-time.After(30 * time.Second):
		t.Error("Acme Portal never heard a back-channel logout")
	}
}
