package vault_test

import (
	"crypto/rand"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/internal/browser"
	"github.com/authcore/authcore/internal/interop"
	"github.com/authcore/authcore/platform/config"
)

func TestMain(m *testing.M) { apptest.Main(m, browser.Stop, interop.StopUpstream) }

// world is one authcore (or several replicas on one database) with a project whose
// people sign in with the package's upstream (oidc-provider) asking for offline access,
// two agent tokens, and one person who signed in there.
type world struct {
	a        *apptest.App
	up       *interop.Upstream
	admin    *apptest.Session
	project  string
	provider string
	client   string // the provider's client id at the upstream
	login    string // the person's login (and subject) at the upstream
	person   string // their authcore session's access token
	userID   string
	email    string
	agentA   [2]string // id, secret: chosen for the connection
	agentB   [2]string // not chosen
}

func rnd(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func appOptions() apptest.Option {
	return apptest.WithConfig(func(c *config.Config) {
		c.WebhookAllowHTTP = true    // the upstream is on loopback, over http
		c.AccessTTL = 24 * time.Hour // the clock jumps past upstream expiries; the person stays signed in
	})
}

func newWorld(t testing.TB, a *apptest.App) *world {
	t.Helper()
	w := newSignedOutWorld(t, a)
	w.signIn(t)
	return w
}

// newSignedOutWorld is the world before its person first signs in.
func newSignedOutWorld(t testing.TB, a *apptest.App) *world {
	t.Helper()
	w := &world{a: a, up: interop.StartUpstream(t)}
	w.admin = a.SignUp(t)
	w.project = a.CreateProject(t, w.admin)
	w.client = "client-" + rnd(6)
	secret := "secret-" + rnd(16)
	got := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + w.project + "/auth/providers", Header: w.admin.Bearer(),
		Body: map[string]any{"type": "oidc", "name": "Acme Mail", "issuer": w.up.Issuer, "clientId": w.client, "clientSecret": secret,
			"trustEmail": true, "offline": true, "scopes": []string{"openid", "email", "profile", "offline_access"}}}).Expect(t, 201, nil)
	w.provider = got["id"].(string)
	w.up.AddClient(t, w.client, secret, got["callbackUrl"].(string))
	w.agentA = w.mintAgent(t, "mail-agent")
	w.agentB = w.mintAgent(t, "other-agent")
	return w
}

func (w *world) mintAgent(t testing.TB, name string) [2]string {
	t.Helper()
	got := w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/projects/" + w.project + "/ai/agents",
		Body: map[string]any{"agentName": name, "scopes": []string{"mail:read"}}, Header: w.admin.Bearer()}).Expect(t, 200, nil)
	return [2]string{got["agent"].(map[string]any)["id"].(string), got["plaintext"].(string)}
}

// signIn signs the person in with the upstream (a new account the first time): the
// sign-in leaves the upstream's tokens on their identity.
func (w *world) signIn(t testing.TB) {
	t.Helper()
	if w.login == "" {
		w.login = "u-" + rnd(6)
		w.email = apptest.UniqueEmail(t)
		w.up.AddAccount(t, interop.Account{Login: w.login, Email: w.email, EmailVerified: true, Name: "Upstream Person"})
	}
	res := browse(t, w.a.Base+"/v1/auth-core/providers/"+w.provider+"/start", w.login)
	for _, c := range res.Cookies() {
		if c.Name == "sAccessToken" && c.Value != "" {
			w.person = c.Value
		}
	}
	if w.person == "" {
		b, _ := io.ReadAll(res.Body)
		t.Fatalf("no session after the upstream sign-in: %d %s", res.StatusCode, b)
	}
	me := w.a.Do(apptest.Req{Path: "/v1/auth-core/session/me", Header: w.bearer()}).Expect(t, 200, nil)
	w.userID = me["userId"].(string)
}

func (w *world) bearer() map[string]string {
	return map[string]string{"Authorization": "Bearer " + w.person}
}

var (
	formAction  = regexp.MustCompile(`<form[^>]*action="([^"]+)"`)
	promptValue = regexp.MustCompile(`name="prompt" value="([a-z]+)"`)
)

// browse goes from start through the upstream's own login and consent forms as login,
// and returns authcore's callback answer (a person without a browser: cookies and forms).
func browse(t testing.TB, start, login string) *http.Response {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if strings.HasSuffix(via[len(via)-1].URL.Path, "/callback") {
			return http.ErrUseLastResponse
		}
		return nil
	}}
	res, err := c.Get(start)
	for range 4 {
		if err != nil {
			t.Fatalf("browsing: %v", err)
		}
		if !strings.Contains(res.Request.URL.Path, "/interaction/") {
			return res
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		action, prompt := formAction.FindSubmatch(body), promptValue.FindSubmatch(body)
		if action == nil || prompt == nil {
			t.Fatalf("no form at %s", res.Request.URL)
		}
		form := url.Values{"prompt": {string(prompt[1])}}
		if string(prompt[1]) == "login" {
			form.Set("login", login)
			form.Set("password", "any")
		}
		next, _ := res.Request.URL.Parse(string(action[1]))
		res, err = c.PostForm(next.String(), form)
	}
	t.Fatal("the upstream kept asking")
	return nil
}

// connect connects the person's account for agents.
func (w *world) connect(t testing.TB, agents ...string) *apptest.Response {
	t.Helper()
	return w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/connections/" + w.provider, Body: map[string]any{"agents": agents}, Header: w.bearer()})
}

// exchange trades an agent's credential for the person's upstream access token on app a.
func exchangeOn(a *apptest.App, subject, provider, hint string) *apptest.Response {
	form := url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"}, "subject_token": {subject},
		"subject_token_type": {"urn:ietf:params:oauth:token-type:access_token"}, "requested_token_type": {"urn:authcore:token-type:upstream-access-token"},
		"resource": {provider}}
	if hint != "" {
		form.Set("login_hint", hint)
	}
	return a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/token", Body: form.Encode(),
		Header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}})
}

func (w *world) exchange(t testing.TB, agent [2]string) *apptest.Response {
	t.Helper()
	return exchangeOn(w.a, agent[1], w.provider, w.email)
}

// userinfo calls the upstream's API with token: what an agent does with it.
func (w *world) userinfo(t testing.TB, token string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, w.up.Issuer+"/me", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}
