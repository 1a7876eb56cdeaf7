package federation_test

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"html"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/crewjam/saml/samlidp"

	"github.com/authcore/authcore/ent/identity"
)

// samlIdP is crewjam/saml's own identity provider (samlidp) on loopback, with its own
// store and users: the IdP of SPEC §27's tests. It listens at localhost, the same site as
// the app's public URL, so the browser binding cookie (SameSite=Lax over http) rides
// along on the IdP's cross-origin POST as it does, with SameSite=None, in production.
type samlIdP struct {
	URL  string
	srv  *samlidp.Server
	key  *rsa.PrivateKey
	cert *x509.Certificate
}

// newKeyPair is an RSA key and a self-signed certificate for it.
func newKeyPair(t testing.TB, cn string) (*rsa.PrivateKey, *x509.Certificate) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-24 * time.Hour), NotAfter: time.Now().Add(24 * time.Hour * 365),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return key, cert
}

// startSAMLIdP starts an IdP signing with a new key; extra certificates are published in
// its metadata too (a rollover).
func startSAMLIdP(t testing.TB, extra ...*x509.Certificate) *samlIdP {
	t.Helper()
	key, cert := newKeyPair(t, "samlidp")
	return startSAMLIdPWith(t, key, cert, extra...)
}

func startSAMLIdPWith(t testing.TB, key *rsa.PrivateKey, cert *x509.Certificate, extra ...*x509.Certificate) *samlIdP {
	t.Helper()
	return startSAMLIdPTweaked(t, key, cert, nil, extra...)
}

// startSAMLIdPTweaked is startSAMLIdPWith with tweak applied to the IdP before it serves.
func startSAMLIdPTweaked(t testing.TB, key *rsa.PrivateKey, cert *x509.Certificate, tweak func(*samlidp.Server), extra ...*x509.Certificate) *samlIdP {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(l.Addr().String())
	base := "http://localhost:" + port
	u, _ := url.Parse(base)
	srv, err := samlidp.New(samlidp.Options{URL: *u, Key: key, Certificate: cert, Store: &samlidp.MemoryStore{}, ExtraCertificates: extra})
	if err != nil {
		t.Fatal(err)
	}
	if tweak != nil {
		tweak(srv)
	}
	hs := httptest.NewUnstartedServer(srv)
	hs.Listener.Close()
	hs.Listener = l
	hs.Start()
	t.Cleanup(hs.Close)
	return &samlIdP{URL: base, srv: srv, key: key, cert: cert}
}

func (p *samlIdP) put(t testing.TB, path string, body []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPut, p.URL+path, bytes.NewReader(body))
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

// addUser makes a person at the IdP; their password is "pw-"+name.
func (p *samlIdP) addUser(t testing.TB, name, email string, groups ...string) {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"name": name, "password": "pw-" + name, "email": email, "given_name": "Ada", "surname": "Lovelace", "groups": groups})
	p.put(t, "/users/"+name, b)
}

// trust registers an SP at the IdP by its metadata URL (the SP's own route).
func (p *samlIdP) trust(t testing.TB, spMetadataURL string) []byte {
	t.Helper()
	res, err := http.Get(spMetadataURL)
	if err != nil {
		t.Fatal(err)
	}
	md, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("SP metadata: %d %s", res.StatusCode, md)
	}
	p.put(t, "/services/sp-"+rnd(4), md)
	return md
}

// samlMapping is what the tests' connections read of samlidp's attributes.
var samlMapping = map[string]any{"email": "mail", "firstName": "givenName", "lastName": "sn", "groups": "eduPersonAffiliation"}

// samlConnect adds a SAML connection of idp to org (extra overrides the body) and has the
// IdP trust its SP metadata.
func (w *orgWorld) samlConnect(t testing.TB, org string, idp *samlIdP, extra map[string]any) map[string]any {
	t.Helper()
	body := map[string]any{"type": "saml", "name": "Acme SAML", "metadataUrl": idp.URL + "/metadata", "attributeMapping": samlMapping}
	for k, v := range extra {
		if v == nil {
			delete(body, k)
		} else {
			body[k] = v
		}
	}
	got := w.do(http.MethodPost, w.orgs()+"/"+org+"/connections", body).Expect(t, 201, map[string]any{"type": "saml", "orgId": org})
	idp.trust(t, got["metadataUrl"].(string))
	return got
}

// samlPerson is a browser without a browser for SAML: a cookie jar that fills in the
// IdP's login form and posts its Response form, as the page's script would.
type samlPerson struct {
	t    testing.TB
	http *http.Client
	// Posted is the last form posted to the ACS (for replays).
	Posted url.Values
	ACS    string
}

func newSAMLPerson(t testing.TB) *samlPerson {
	jar, _ := cookiejar.New(nil)
	return &samlPerson{t: t, http: &http.Client{Jar: jar, Transport: browserAccept{}, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if strings.HasSuffix(via[len(via)-1].URL.Path, "/acs") {
			return http.ErrUseLastResponse
		}
		return nil
	}}}
}

var (
	samlFormAction = regexp.MustCompile(`<form method="post" action="([^"]+)"`)
	samlField      = regexp.MustCompile(`name="(SAMLRequest|SAMLResponse|RelayState)" value="([^"]*)"`)
)

// form reads a samlidp page's form: where it posts and its hidden fields.
func (p *samlPerson) form(res *http.Response) (string, url.Values) {
	p.t.Helper()
	b := body(p.t, res)
	m := samlFormAction.FindStringSubmatch(b)
	if m == nil {
		p.t.Fatalf("no form at %s (%d):\n%s", res.Request.URL, res.StatusCode, b)
	}
	v := url.Values{}
	for _, f := range samlField.FindAllStringSubmatch(b, -1) {
		v.Set(f[1], html.UnescapeString(f[2]))
	}
	action, _ := res.Request.URL.Parse(html.UnescapeString(m[1]))
	return action.String(), v
}

// loginAtIdP signs in at the IdP first, so the SP-initiated sign-in finds the person's IdP
// session. samlidp's own login form, shown in the middle of a sign-in, posts the
// AuthnRequest back without its HTTP-Redirect signature, and then refuses it as unsigned
// (the SP's metadata says it signs them): with a session the signed request is checked on
// its way in and answered at once.
func (p *samlPerson) loginAtIdP(idp *samlIdP, user string) {
	p.t.Helper()
	res, err := p.http.PostForm(idp.URL+"/login", url.Values{"user": {user}, "password": {"pw-" + user}})
	if err != nil {
		p.t.Fatal(err)
	}
	if b := body(p.t, res); res.StatusCode != 200 {
		p.t.Fatalf("login at the IdP: %d %s", res.StatusCode, b)
	}
}

// response signs in at the IdP from start (a /saml/{id}/login URL, or the IdP's own URL
// for an IdP-initiated sign-in) and returns the ACS's form, not yet posted.
func (p *samlPerson) response(start, user string) (string, url.Values) {
	p.t.Helper()
	res, err := p.http.Get(start)
	if err != nil {
		p.t.Fatalf("GET %s: %v", start, err)
	}
	action, v := p.form(res)
	if v.Get("SAMLResponse") == "" { // the login form
		v.Set("user", user)
		v.Set("password", "pw-"+user)
		if res, err = p.http.PostForm(action, v); err != nil {
			p.t.Fatal(err)
		}
		action, v = p.form(res)
	}
	if v.Get("SAMLResponse") == "" {
		p.t.Fatalf("the IdP sent no Response to %s", action)
	}
	return action, v
}

// post posts a Response form to the ACS and returns its answer.
func (p *samlPerson) post(acs string, v url.Values) *http.Response {
	p.t.Helper()
	p.ACS, p.Posted = acs, v
	res, err := p.http.PostForm(acs, v)
	if err != nil {
		p.t.Fatal(err)
	}
	return res
}

// signIn is response then post.
func (p *samlPerson) signIn(start, user string) *http.Response {
	p.t.Helper()
	return p.post(p.response(start, user))
}

func (w *orgWorld) samlIdentities(t testing.TB, conn string) int {
	t.Helper()
	return w.a.Ent.Identity.Query().Where(identity.ProviderID(conn)).CountX(t.Context())
}

// idpInitiated makes a shortcut at the IdP that starts an IdP-initiated sign-in to the SP
// with entity id sp and relayState, and returns its URL.
func (p *samlIdP) idpInitiated(t testing.TB, sp, relayState string) string {
	t.Helper()
	name := "to-" + rnd(4)
	b, _ := json.Marshal(map[string]any{"name": name, "service_provider": sp, "relay_state": relayState})
	p.put(t, "/shortcuts/"+name, b)
	return p.URL + "/login/" + name
}

// metadata is the IdP's metadata document.
func (p *samlIdP) metadata(t testing.TB) string {
	t.Helper()
	res, err := http.Get(p.URL + "/metadata")
	if err != nil {
		t.Fatal(err)
	}
	return body(t, res)
}
