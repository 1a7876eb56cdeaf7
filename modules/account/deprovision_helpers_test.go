package account_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/go-jose/go-jose/v4"
	"go.uber.org/fx"
	"golang.org/x/oauth2"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/identity"
)

// logoutReceiver is an app's back-channel logout endpoint on loopback: it keeps the
// logout tokens whose signature verifies against the server's JWKS (go-oidc) and whose
// typ is logout+jwt (Back-Channel Logout 1.0 §2.6), and what it refused.
type logoutReceiver struct {
	srv    *httptest.Server
	keys   *oidc.RemoteKeySet
	mu     sync.Mutex
	tokens []map[string]any
	bad    []string
}

func newLogoutReceiver(t testing.TB, a *apptest.App) *logoutReceiver {
	r := &logoutReceiver{keys: oidc.NewRemoteKeySet(context.Background(), a.Base+"/.well-known/jwks.json")}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		form, _ := url.ParseQuery(string(body))
		claims, why := r.check(form.Get("logout_token"))
		r.mu.Lock()
		defer r.mu.Unlock()
		if why != "" {
			r.bad = append(r.bad, why)
			http.Error(w, why, http.StatusBadRequest)
			return
		}
		r.tokens = append(r.tokens, claims)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *logoutReceiver) check(raw string) (map[string]any, string) {
	payload, err := r.keys.VerifySignature(context.Background(), raw)
	if err != nil {
		return nil, "signature: " + err.Error()
	}
	sig, err := jose.ParseSigned(raw, []jose.SignatureAlgorithm{jose.RS256, jose.EdDSA})
	if err != nil || sig.Signatures[0].Header.ExtraHeaders["typ"] != "logout+jwt" {
		return nil, "typ is not logout+jwt"
	}
	var claims map[string]any
	if err := json.Unmarshal(payload, &claims); err != nil {
		return nil, "claims"
	}
	if events, _ := claims["events"].(map[string]any); events["http://schemas.openid.net/event/backchannel-logout"] == nil {
		return nil, "not a logout token"
	}
	return claims, ""
}

func (r *logoutReceiver) got() ([]map[string]any, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]map[string]any(nil), r.tokens...), append([]string(nil), r.bad...)
}

// waitFor waits for cond: a bound on liveness (it returns as soon as cond holds), wide
// enough for a loaded CI machine under -race; it measures nothing.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(45 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("never: %s", what)
}

// deprovWorld is a project with an org, a person of its tenant who is one of its admins, a
// resource server (its auth badge introspects) and the app the person signs in to, whose
// back-channel logout endpoint is a receiver on loopback.
type deprovWorld struct {
	a            *apptest.App
	dep          identity.Deprovisioning
	admin        *apptest.Session
	project, org string
	person       *apptest.Session
	introspector apptest.AuthClient
	resource     string
	appID        string
	redirect     string
	logout       *logoutReceiver
}

func deprovOptions(dep *identity.Deprovisioning, more ...apptest.Option) []apptest.Option {
	return append([]apptest.Option{
		apptest.WithConfig(func(c *config.Config) { c.WebhookAllowHTTP = true }),
		apptest.WithFx(fx.Populate(dep)),
	}, more...)
}

func newDeprovWorld(t *testing.T, st apptest.Store) *deprovWorld {
	t.Helper()
	w := &deprovWorld{}
	w.a = apptest.Start(t, st, deprovOptions(&w.dep)...)
	w.setUp(t)
	return w
}

// setUp makes the project, org, person, resource and app on w.a.
func (w *deprovWorld) setUp(t testing.TB) {
	t.Helper()
	a := w.a
	w.admin = a.SignUp(t)
	w.project = a.CreateProject(t, w.admin)
	w.person = a.SignUpIn(t, w.project)
	orgs := "/v1/projects/" + w.project + "/orgs"
	w.org = a.Do(apptest.Req{Method: http.MethodPost, Path: orgs, Body: map[string]any{"name": "Acme"}, Header: w.admin.Bearer()}).Expect(t, 201, nil)["id"].(string)
	a.Do(apptest.Req{Method: http.MethodPost, Path: orgs + "/" + w.org + "/members", Body: map[string]any{"userId": w.person.UserID, "role": "admin"},
		Header: w.admin.Bearer()}).Expect(t, 201, nil)
	w.introspector = a.MintAuthClient(t, w.admin, w.project, nil)
	w.resource = "https://api-" + strings.ToLower(w.project) + ".example/"
	a.RegisterResource(t, w.admin, w.project, w.resource, []string{"mail:read"})
	w.logout = newLogoutReceiver(t, a)
	w.redirect = "http://127.0.0.1:9/cb"
	w.appID = a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + w.project + "/apps", Header: w.admin.Bearer(),
		Body: map[string]any{"name": "Mail", "type": "spa", "redirectUris": []string{w.redirect}, "backchannelLogoutUri": w.logout.srv.URL + "/logout",
			"grantTypes": []string{"authorization_code", "refresh_token"}}}).
		Expect(t, 201, nil)["app"].(map[string]any)["clientId"].(string)
}

// deprovision deprovisions the person as the org's directory.
func (w *deprovWorld) deprovision(t testing.TB) {
	t.Helper()
	if err := w.dep.Deprovision(context.Background(), identity.Deprovision{TenantID: w.project, UserID: w.person.UserID, OrgID: w.org,
		Actor: "directory:test"}); err != nil {
		t.Fatal(err)
	}
}

// grant is an OAuth grant of the person to the app, for the resource, with its tokens.
type grant struct{ access, refresh string }

// connect runs the app's authorization code flow for the person (their session approves
// on the consent page, as the console does) and redeems the code.
func (w *deprovWorld) connect(t testing.TB, s *apptest.Session) grant {
	t.Helper()
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	verifier := oauth2.GenerateVerifier()
	q := url.Values{"response_type": {"code"}, "client_id": {w.appID}, "redirect_uri": {w.redirect}, "state": {"st"},
		"code_challenge": {oauth2.S256ChallengeFromVerifier(verifier)}, "code_challenge_method": {"S256"},
		"resource": {w.resource}, "scope": {"openid mail:read offline_access"}}
	res, err := noFollow.Get(w.a.Base + "/oauth/authorize?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	loc, _ := url.Parse(res.Header.Get("Location"))
	if loc == nil || loc.Query().Get("request") == "" {
		t.Fatalf("authorize answered %d, Location %q", res.StatusCode, res.Header.Get("Location"))
	}
	path := "/v1/oauth/authorizations/" + loc.Query().Get("request")
	browser := s.Bearer()
	for _, c := range res.Cookies() {
		browser["Cookie"] = c.Name + "=" + c.Value
	}
	csrf := w.a.Do(apptest.Req{Path: path, Header: browser}).Expect(t, 200, nil)["csrfToken"].(string)
	to := w.a.Do(apptest.Req{Method: http.MethodPost, Path: path, Header: browser, Body: map[string]any{"decision": "approve", "csrfToken": csrf}}).
		Expect(t, 200, nil)["redirectTo"].(string)
	back, _ := url.Parse(to)
	tok := w.a.PostForm("/v1/oauth/token", url.Values{"grant_type": {"authorization_code"}, "client_id": {w.appID}, "code": {back.Query().Get("code")},
		"redirect_uri": {w.redirect}, "code_verifier": {verifier}}, nil).Expect(t, 200, nil)
	return grant{access: tok["access_token"].(string), refresh: tok["refresh_token"].(string)}
}

// active is whether the resource server's introspection finds token active on a.
func (w *deprovWorld) active(t testing.TB, a *apptest.App, token string) bool {
	t.Helper()
	return a.PostForm("/v1/oauth/introspect", url.Values{"token": {token}}, apptest.Basic(w.introspector.ID, w.introspector.Secret)).
		Expect(t, 200, nil)["active"] == true
}

// signIn is the person's password sign-in on a.
func (w *deprovWorld) signIn(a *apptest.App) *apptest.Response {
	return a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signin",
		Body: map[string]any{"email": w.person.Email, "password": w.person.Password, "tenantId": w.project}})
}

// refreshSession is the person's session refresh with token on a.
func refreshSession(a *apptest.App, token string) *apptest.Response {
	return a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/session/refresh", Body: map[string]any{"refreshToken": token}})
}

// auditOf is the project's audit records of action, newest first.
func auditOf(t testing.TB, w *deprovWorld, action string) []map[string]any {
	t.Helper()
	r := w.a.Do(apptest.Req{Path: "/v1/projects/" + w.project + "/audit?limit=200", Header: w.admin.Bearer()}).Expect(t, 200, nil)
	var out []map[string]any
	for _, e := range r["events"].([]any) {
		if ev := e.(map[string]any); ev["action"] == action {
			out = append(out, ev)
		}
	}
	return out
}

// mintAgent is an agent token the person mints as an admin of the org.
func (w *deprovWorld) mintAgent(t testing.TB) string {
	t.Helper()
	return w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/orgs/" + w.org + "/ai/agents", Body: map[string]any{"agentName": "helper"},
		Header: w.person.Bearer()}).Expect(t, 200, nil)["plaintext"].(string)
}

// revokeMinted turns the org's revokeMintedOnDeprovision on.
func (w *deprovWorld) revokeMinted(t testing.TB) {
	t.Helper()
	w.a.Do(apptest.Req{Method: http.MethodPut, Path: "/v1/projects/" + w.project + "/orgs/" + w.org + "/policy", Header: w.admin.Bearer(),
		Body: map[string]any{"ssoRequired": false, "mfaRequired": false, "sessionMaxHours": 0, "revokeMintedOnDeprovision": true}}).Expect(t, 200, nil)
}
