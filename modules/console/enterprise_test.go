package console_test

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/crewjam/saml/samlidp"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/internal/browser"
	"github.com/authcore/authcore/platform/config"
)

// samlIdP is a SAML identity provider on loopback (crewjam/saml's samlidp) whose metadata
// the page is given by URL.
func samlIdP(t *testing.T) string {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "Globex IdP"},
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
	u, _ := url.Parse("http://" + ln.Addr().String())
	idp, err := samlidp.New(samlidp.Options{URL: *u, Key: key, Certificate: cert, Store: &samlidp.MemoryStore{}})
	if err != nil {
		t.Fatal(err)
	}
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: idp, ReadHeaderTimeout: 10 * time.Second}}
	srv.Start()
	t.Cleanup(srv.Close)
	return u.String() + "/metadata"
}

// scimStatus is what a directory's SCIM endpoint answers token at its base URL.
func scimStatus(t *testing.T, base, token string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/Users?count=1", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// The setup page's directory section (SPEC §26, §27), driven as a customer's IT admin
// would in headless Chromium. A link for the directory shows only that section. A
// directory is created: its base URL and token are shown once and the token works at the
// SCIM endpoint; a group is mapped to a role and unmapped; the token is rolled (the old one refused,
// the new shown once and working); after a reload nothing secret is shown; the directory
// is deleted and its token refused; the list fits a phone. The project admin creates one
// on the org's screen.
func TestConsoleSetupDirectory(t *testing.T) {
	a, admin, prj, acme := enterpriseWorld(t)
	api := func(method, path string, body any, status int) map[string]any {
		t.Helper()
		return a.Do(apptest.Req{Method: method, Path: "/v1/projects/" + prj + path, Body: body, Header: admin.Bearer()}).Expect(t, status, nil)
	}
	status := func(text string) chromedp.Action[chromedp.Void] {
		return chromedp.WaitVisible(text, chromedp.ByFunc(browser.Text(text)))
	}
	confirmed := chromedp.Click(chromedp.CSS("dialog[open] #confirm-yes"))
	shown := func(pg *browser.Page, label string) string {
		return pg.Eval(`(document.querySelector('code[data-secret="` + label + `"]') || {}).textContent || ''`)
	}

	// Only what the link covers.
	link := api(http.MethodPost, "/orgs/"+acme+"/setup-links", map[string]any{"intents": []string{"directory"}}, 201)["url"].(string)
	pg := browser.NewPage(t, browser.Tab(t, nil))
	pg.Do(chromedp.Navigate(link), browser.WaitFor("heading", "Set up Acme"), browser.WaitFor("heading", "Directory sync (SCIM)"),
		status("No directories yet."))
	if got := pg.Eval(`[...document.querySelectorAll('main h2')].map((e) => e.textContent).join()`); got != "Directory sync (SCIM)" {
		t.Fatalf("a directory link's page shows sections %q", got)
	}

	// Created: base URL and token shown once, and they work.
	pg.Do(browser.TypeInto("textbox", "Directory name", "Okta"), browser.Click("button", "Create directory"),
		browser.WaitFor("region", "Directory Okta"), browser.WaitFor("button", "Roll token of Okta"), status("Copy it now: it will not be shown again."))
	base, token := shown(pg, "SCIM base URL"), shown(pg, "SCIM token")
	if !strings.Contains(base, "/scim/v2/") || !strings.HasPrefix(token, "ac_scim_") {
		t.Fatalf("shown: base URL %q, token %q", base, token)
	}
	if s := scimStatus(t, base, token); s != http.StatusOK {
		t.Fatalf("the token shown: SCIM answers %d", s)
	}
	dirs := api(http.MethodGet, "/orgs/"+acme+"/directories", nil, 200)["directories"].([]any)
	if len(dirs) != 1 || dirs[0].(map[string]any)["name"] != "Okta" || strings.Contains(string(a.Do(apptest.Req{Path: "/v1/projects/" + prj + "/orgs/" + acme + "/directories", Header: admin.Bearer()}).Body), token) {
		t.Fatalf("directories after the create: %v", dirs)
	}
	pg.Shot("directory-created")

	// A group gives a role.
	pg.Do(browser.Click("button", "Add a group to Okta"), browser.TypeInto("textbox", "Group 1 of Okta", "Engineering"))
	pg.Eval(`document.querySelector('input[name="Role of group 1 of Okta"]').value = 'admin', document.querySelector('input[name="Role of group 1 of Okta"]').dispatchEvent(new Event('input')), 'ok'`)
	pg.Do(browser.Click("button", "Save group roles of Okta"), status("Saved the group roles of Okta: Engineering → admin."),
		chromedp.WaitVisible(chromedp.CSS(`input[name="Group 1 of Okta"][value="Engineering"]`)))
	roles := api(http.MethodGet, "/orgs/"+acme+"/directories", nil, 200)["directories"].([]any)[0].(map[string]any)["groupRoles"]
	if m, _ := roles.(map[string]any); len(m) != 1 || m["Engineering"] != "admin" {
		t.Fatalf("group roles after the save: %v", roles)
	}
	// And removed again.
	pg.Do(browser.Click("button", "Remove group 1 of Okta"), browser.Click("button", "Save group roles of Okta"),
		status("Saved the group roles of Okta: none."))
	roles = api(http.MethodGet, "/orgs/"+acme+"/directories", nil, 200)["directories"].([]any)[0].(map[string]any)["groupRoles"]
	if m, _ := roles.(map[string]any); len(m) != 0 {
		t.Fatalf("group roles after the removal: %v", roles)
	}

	// Rolled: the old token is refused at once, the new one is shown once and works.
	pg.Do(browser.Click("button", "Roll token of Okta"), confirmed, browser.WaitFor("region", "New token for Okta"))
	rolled := shown(pg, "SCIM token")
	if rolled == token || !strings.HasPrefix(rolled, "ac_scim_") || shown(pg, "SCIM base URL") != base {
		t.Fatalf("after the roll: token %q (was %q), base URL %q", rolled, token, shown(pg, "SCIM base URL"))
	}
	if old, now := scimStatus(t, base, token), scimStatus(t, base, rolled); old != http.StatusUnauthorized || now != http.StatusOK {
		t.Fatalf("after the roll SCIM answers the old token %d, the new %d", old, now)
	}

	// Shown once: a reload lists the directory, and no token.
	pg.Do(chromedp.Reload(), browser.WaitFor("button", "Roll token of Okta"))
	if s := shown(pg, "SCIM token"); s != "" || strings.Contains(pg.Eval(`document.body.innerText`), rolled) {
		t.Fatal("the token is shown again after a reload")
	}
	pg.Shot("directory-listed")
	// A phone's width: the list and its group roles fit without scrolling sideways.
	pg.Do(chromedp.EmulateViewport(360, 780))
	pg.NoSideScroll("the setup page's directories")
	pg.Shot("narrow-directory")
	pg.Do(chromedp.EmulateViewport(1280, 900))

	// Deleted: its token is refused.
	pg.Do(browser.Click("button", "Delete Okta"), confirmed, status("No directories yet."))
	if s := scimStatus(t, base, rolled); s != http.StatusUnauthorized && s != http.StatusNotFound {
		t.Fatalf("a deleted directory's token: SCIM answers %d", s)
	}

	// The project admin creates one on the org's screen.
	ad := adminOrgScreen(t, a, admin)
	ad.Do(browser.TypeInto("textbox", "Directory name", "Entra"), browser.Click("button", "Create directory"), browser.WaitFor("region", "Directory Entra"))
	if s := scimStatus(t, shown(ad, "SCIM base URL"), shown(ad, "SCIM token")); s != http.StatusOK {
		t.Fatalf("the admin's directory: SCIM answers %d", s)
	}
	ad.Shot("org-enterprise")
}

func enterpriseWorld(t *testing.T) (a *apptest.App, admin *apptest.Session, prj, acme string) {
	t.Helper()
	a = apptest.Start(t, apptest.Stores(t)[0], apptest.WithConfig(func(c *config.Config) {
		c.WebhookAllowHTTP = true // the IdP's metadata is on loopback, over http
	}))
	admin = a.SignUp(t)
	prj = a.CreateProject(t, admin)
	acme = a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + prj + "/orgs", Body: map[string]any{"name": "Acme"}, Header: admin.Bearer()}).Expect(t, 201, nil)["id"].(string)
	return a, admin, prj, acme
}

// adminOrgScreen is the project admin, signed in to the console, on Acme's screen.
func adminOrgScreen(t *testing.T, a *apptest.App, admin *apptest.Session) *browser.Page {
	t.Helper()
	ad := browser.NewPage(t, browser.Tab(t, nil))
	ad.Do(chromedp.Navigate(a.Base+"/console"), browser.TypeInto("textbox", "Email", admin.Email), browser.TypeInto("textbox", "Password", admin.Password),
		browser.Click("button", "Sign in"), browser.WaitFor("link", "Apps"), browser.Click("link", "Organizations"), browser.Click("button", "Open Acme"),
		browser.WaitFor("region", "Organization Acme"), browser.WaitFor("button", "Create directory"))
	return ad
}

// The setup page's SAML section (SPEC §27): a link for SSO shows only that section; a
// metadata URL that answers no metadata is refused with the reason shown and nothing
// created; the IdP's metadata URL adds the connection, and the page shows the SP values
// the IdP needs (its ACS URL the connection's), on a phone too, and reads the metadata
// again on demand; the project admin's org screen lists it and removes it.
func TestConsoleSetupSAML(t *testing.T) {
	a, admin, prj, acme := enterpriseWorld(t)
	api := func(method, path string, body any, status int) map[string]any {
		t.Helper()
		return a.Do(apptest.Req{Method: method, Path: "/v1/projects/" + prj + path, Body: body, Header: admin.Bearer()}).Expect(t, status, nil)
	}
	status := func(text string) chromedp.Action[chromedp.Void] {
		return chromedp.WaitVisible(text, chromedp.ByFunc(browser.Text(text)))
	}
	link := api(http.MethodPost, "/orgs/"+acme+"/setup-links", map[string]any{"intents": []string{"sso"}}, 201)["url"].(string)
	sso := browser.NewPage(t, browser.Tab(t, nil))
	sso.Do(chromedp.Navigate(link), browser.WaitFor("heading", "Single sign-on"), browser.WaitFor("button", "Add SAML connection"))
	if got := sso.Eval(`[...document.querySelectorAll('main h2')].map((e) => e.textContent).join()`); got != "Single sign-on" {
		t.Fatalf("an SSO link's page shows sections %q", got)
	}
	metadata := samlIdP(t)
	sso.Do(browser.TypeInto("textbox", "SAML connection name", "Globex"), browser.TypeInto("textbox", "Email attribute", "mail"),
		browser.TypeInto("textbox", "IdP metadata URL", strings.TrimSuffix(metadata, "/metadata")+"/nothing"),
		browser.Click("button", "Add SAML connection"), chromedp.WaitVisible(chromedp.CSS(`section[aria-label="SAML"] [role=alert]:not([hidden])`)))
	if n := len(api(http.MethodGet, "/orgs/"+acme+"/connections", nil, 200)["connections"].([]any)); n != 0 {
		t.Fatalf("a refused metadata URL made %d connections", n)
	}
	sso.Do(chromedp.SetValue(chromedp.CSS(`input[name="IdP metadata URL"]`), metadata), browser.Click("button", "Add SAML connection"),
		browser.WaitFor("region", "Values for your identity provider"), browser.WaitFor("button", "Test Globex"))
	acs := sso.Eval(`document.querySelector('[aria-label="Values for your identity provider"] [aria-label="ACS URL of Globex"]').textContent`)
	conns := api(http.MethodGet, "/orgs/"+acme+"/connections", nil, 200)["connections"].([]any)
	if len(conns) != 1 || !strings.HasSuffix(acs, "/saml/"+conns[0].(map[string]any)["id"].(string)+"/acs") {
		t.Fatalf("the page shows ACS %q for connections %v", acs, conns)
	}
	sso.Shot("saml-by-url")
	// A URL's metadata is read again on demand (after a key rollover at the IdP).
	sso.Do(browser.Click("button", "Read metadata of Globex again"), status("Read the metadata of Globex again."))
	sso.Do(chromedp.EmulateViewport(360, 780))
	sso.NoSideScroll("the setup page's SAML connections")
	sso.Shot("narrow-saml")

	ad := adminOrgScreen(t, a, admin)
	ad.Do(browser.WaitFor("button", "Test Globex"))
	if got := ad.Eval(`document.querySelector('[aria-label="ACS URL of Globex"]').textContent`); got != acs {
		t.Fatalf("the org screen shows ACS %q, the setup page %q", got, acs)
	}
	ad.Do(browser.Click("button", "Remove Globex"), chromedp.Click(chromedp.CSS("dialog[open] #confirm-yes")),
		chromedp.WaitVisible("none", chromedp.ByFunc(browser.Text("No SAML connection yet."))))
	if n := len(api(http.MethodGet, "/orgs/"+acme+"/connections", nil, 200)["connections"].([]any)); n != 0 {
		t.Fatalf("%d connections after the removal", n)
	}
}
