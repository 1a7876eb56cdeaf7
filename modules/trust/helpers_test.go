package trust_test

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"golang.org/x/oauth2"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/internal/testkit"
	"github.com/authcore/authcore/platform/config"
)

func TestMain(m *testing.M) { apptest.Main(m) }

// platform is a workload platform on loopback, as a Kubernetes API server is one: it
// serves OIDC discovery and its JWKS, and signs service-account tokens with its key.
type platform struct {
	*httptest.Server
	key    *rsa.PrivateKey
	signer jose.Signer
}

func newPlatform(t *testing.T) *platform {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	p := &platform{key: key}
	p.Server = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/.well-known/openid-configuration":
			_ = json.NewEncoder(rw).Encode(map[string]any{"issuer": p.URL, "jwks_uri": p.URL + "/openid/v1/jwks"})
		case "/openid/v1/jwks":
			_ = json.NewEncoder(rw).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k8s-1", Algorithm: "RS256", Use: "sig"}}})
		default:
			http.NotFound(rw, r)
		}
	}))
	t.Cleanup(p.Close)
	p.signer, err = jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", "k8s-1"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// token is a service-account token of sub for aud; change edits its claims.
func (p *platform) token(t *testing.T, sub, aud string, change func(map[string]any)) string {
	t.Helper()
	now := time.Now()
	c := map[string]any{"iss": p.URL, "sub": sub, "aud": []string{aud}, "iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(),
		"jti": "sa-" + oauth2.GenerateVerifier()[:16], "kubernetes.io": map[string]any{"namespace": "payments"}}
	if change != nil {
		change(c)
	}
	s, err := jwt.Signed(p.signer).Claims(c).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// startApp is an authcore that may fetch from loopback (the test's issuers).
func startApp(t *testing.T, st apptest.Store) *apptest.App {
	t.Helper()
	return apptest.Start(t, st, apptest.WithConfig(func(c *config.Config) { c.WebhookAllowHTTP = true }))
}

// idp is an authcore acting as an enterprise's identity provider, mailing to an inbox.
type idp struct {
	*apptest.App
	inbox *testkit.Inbox
}

func startIdP(t *testing.T, st apptest.Store) idp {
	t.Helper()
	in := testkit.StartInbox(t)
	return idp{App: apptest.Start(t, st, apptest.WithConfig(func(c *config.Config) { c.WebhookAllowHTTP, c.SMTPURL = true, in.URL })), inbox: in}
}

var verifyLink = regexp.MustCompile(`ac_evf_[0-9A-Za-z]{38}`)

// person signs up at the IdP and proves their address by the mailed link: an ID-JAG
// carries only a proven address.
func (p idp) person(t *testing.T) *apptest.Session {
	t.Helper()
	s := p.SignUp(t)
	seen := len(p.inbox.Mails())
	p.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/email/verify-request", Header: s.Bearer()}).Expect(t, 202, nil)
	token := verifyLink.FindString(p.inbox.Wait(t, seen+1)[seen].Text)
	p.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/email/verify", Body: map[string]any{"token": token}, Header: s.Bearer()}).Expect(t, 200, map[string]any{"emailVerified": true})
	return s
}

func issuerOf(t *testing.T, a *apptest.App) string {
	t.Helper()
	return a.Get("/.well-known/oauth-authorization-server").Expect(t, 200, nil)["issuer"].(string)
}

// jwtBearer asks a for a token with assertion for resource; more adds to the form.
func jwtBearer(a *apptest.App, assertion, resource string, more url.Values, header map[string]string) *apptest.Response {
	form := url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:jwt-bearer"}, "assertion": {assertion}, "resource": {resource}}
	for k, v := range more {
		form[k] = v
	}
	return a.PostForm("/v1/oauth/token", form, header)
}

// trustIssuer adds an issuer to project's trust, as its admin.
func trustIssuer(t *testing.T, a *apptest.App, admin *apptest.Session, project string, body map[string]any) map[string]any {
	t.Helper()
	return a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + project + "/trust/issuers", Header: admin.Bearer(), Body: body}).Expect(t, 201, nil)
}

// idToken signs admin in to client (a confidential one registered on a) with scope and
// returns the id_token the code flow gives.
func idToken(t *testing.T, a *apptest.App, admin *apptest.Session, project, clientID, secret, redirect, scope string) string {
	t.Helper()
	v := oauth2.GenerateVerifier()
	code := a.ApproveCode(t, admin, project, url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {redirect}, "state": {"s"},
		"nonce": {"n"}, "code_challenge": {oauth2.S256ChallengeFromVerifier(v)}, "code_challenge_method": {"S256"}, "scope": {scope}})
	got := a.PostForm("/v1/oauth/token", url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirect},
		"code_verifier": {v}}, apptest.Basic(clientID, secret)).Expect(t, 200, nil)
	return got["id_token"].(string)
}

// register registers a confidential client on a with client_secret_basic.
func register(t *testing.T, a *apptest.App, redirect string) (string, string) {
	t.Helper()
	got := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/register", Body: map[string]any{"client_name": "agent host",
		"redirect_uris": []string{redirect}, "token_endpoint_auth_method": "client_secret_basic"}}).Expect(t, 201, nil)
	return got["client_id"].(string), got["client_secret"].(string)
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
