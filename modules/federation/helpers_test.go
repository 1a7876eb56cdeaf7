package federation_test

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

	"github.com/authcore/authcore/ent/user"
	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/internal/browser"
	"github.com/authcore/authcore/internal/interop"
	"github.com/authcore/authcore/internal/testkit"
	"github.com/authcore/authcore/platform/config"
)

func TestMain(m *testing.M) { apptest.Main(m, browser.Stop, interop.StopUpstream, interop.StopSAMLIdP) }

// world is one authcore whose outbound calls may reach loopback, the package's upstream
// provider (oidc-provider), and a project whose admin configures sign-in.
type world struct {
	a       *apptest.App
	up      *interop.Upstream
	admin   *apptest.Session
	project string
	inbox   *testkit.Inbox
}

func newWorld(t testing.TB, st apptest.Store, opts ...apptest.Option) *world {
	t.Helper()
	w := &world{up: interop.StartUpstream(t), inbox: testkit.StartInbox(t)}
	w.a = apptest.Start(t, st, append([]apptest.Option{apptest.WithConfig(func(c *config.Config) {
		c.WebhookAllowHTTP = true // the upstream listens on loopback, over http
		c.SMTPURL = w.inbox.URL
	})}, opts...)...)
	w.admin = w.a.SignUp(t)
	w.project = w.a.CreateProject(t, w.admin)
	return w
}

func rnd(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// provider is one configured upstream: its id in authcore and its client at the upstream.
type provider struct {
	ID, ClientID, Start string
}

// addProvider adds an OIDC provider of the upstream to the project (extra overrides the
// body) and registers its client, with the callback URL authcore gave, at the upstream.
func (w *world) addProvider(t testing.TB, extra map[string]any) provider {
	t.Helper()
	clientID, secret := "client-"+rnd(6), "secret-"+rnd(16)
	body := map[string]any{"type": "oidc", "name": "Acme SSO", "issuer": w.up.Issuer, "clientId": clientID, "clientSecret": secret, "trustEmail": true}
	for k, v := range extra {
		if v == nil {
			delete(body, k)
		} else {
			body[k] = v
		}
	}
	r := w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + w.project + "/auth/providers", Body: body, Header: w.admin.Bearer()})
	if r.Status != http.StatusCreated {
		t.Fatalf("add provider: %d %s", r.Status, r.Body)
	}
	got := r.JSON(t)
	if _, leaked := got["clientSecret"]; leaked || strings.Contains(string(r.Body), secret) {
		t.Fatalf("the secret came back: %s", r.Body)
	}
	w.up.AddClient(t, clientID, secret, got["callbackUrl"].(string))
	id := got["id"].(string)
	return provider{ID: id, ClientID: clientID, Start: w.a.Base + "/v1/auth-core/providers/" + id + "/start"}
}

// account makes an upstream account; login is also its subject.
func (w *world) account(t testing.TB, email string, verified bool) interop.Account {
	t.Helper()
	acc := interop.Account{Login: "u-" + rnd(6), Email: email, EmailVerified: verified, Name: "Upstream Person", Username: "person-" + rnd(3)}
	w.up.AddAccount(t, acc)
	return acc
}

// person is a browser without a browser: an HTTP client with its own cookie jar that
// fills in the upstream's own login and consent forms. The last exchange it stops at is
// authcore's callback, whose answer it returns.
type person struct {
	t    testing.TB
	http *http.Client
	// Callback is the last callback URL it was sent to (for replays).
	Callback string
}

func newPerson(t testing.TB) *person {
	jar, _ := cookiejar.New(nil)
	p := &person{t: t}
	p.http = &http.Client{Jar: jar, Transport: browserAccept{}, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if strings.HasSuffix(via[len(via)-1].URL.Path, "/callback") {
			return http.ErrUseLastResponse
		}
		if strings.HasSuffix(req.URL.Path, "/callback") {
			p.Callback = req.URL.String()
		}
		return nil
	}}
	return p
}

var formAction = regexp.MustCompile(`<form[^>]*action="([^"]+)"`)
var promptValue = regexp.MustCompile(`name="prompt" value="([a-z]+)"`)

// get follows u (a start URL) through the upstream as login, and returns the answer of
// the callback (or of whatever stopped the way).
func (p *person) via(u, login string) *http.Response {
	p.t.Helper()
	res, err := p.http.Get(u)
	if err != nil {
		p.t.Fatalf("GET %s: %v", u, err)
	}
	return p.through(res, login)
}

func (p *person) through(res *http.Response, login string) *http.Response {
	p.t.Helper()
	for range 4 {
		if strings.HasSuffix(res.Request.URL.Path, "/callback") || !strings.Contains(res.Header.Get("Content-Type"), "html") ||
			!strings.Contains(res.Request.URL.Path, "/interaction/") {
			return res
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		action, prompt := formAction.FindSubmatch(body), promptValue.FindSubmatch(body)
		if action == nil || prompt == nil {
			p.t.Fatalf("no form at %s:\n%s", res.Request.URL, body)
		}
		form := url.Values{"prompt": {string(prompt[1])}}
		if string(prompt[1]) == "login" {
			form.Set("login", login)
			form.Set("password", "any")
		}
		next, _ := res.Request.URL.Parse(string(action[1]))
		if res, _ = p.http.PostForm(next.String(), form); res == nil {
			p.t.Fatalf("posting the %s form failed", prompt[1])
		}
	}
	p.t.Fatalf("the upstream kept asking")
	return nil
}

// cookie is the named cookie the callback set, or "".
func cookie(res *http.Response, name string) string {
	for _, c := range res.Cookies() {
		if c.Name == name && c.MaxAge >= 0 && c.Value != "" {
			return c.Value
		}
	}
	return ""
}

func body(t testing.TB, res *http.Response) string {
	t.Helper()
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	return string(b)
}

func bearer(token string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + token}
}

// verifyEmail marks an address proven, as a verification mail would (SPEC §14).
func (w *world) verifyEmail(t testing.TB, userID string) {
	t.Helper()
	if err := w.a.Ent.User.UpdateOneID(userID).SetEmailVerified(true).Exec(t.Context()); err != nil {
		t.Fatal(err)
	}
}

func (w *world) users(t testing.TB, email string) int {
	t.Helper()
	n, err := w.a.Ent.User.Query().Where(user.Email(email)).Count(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// browserAccept asks for pages as a browser does: refusals then come as pages.
type browserAccept struct{}

func (browserAccept) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Header.Get("Accept") == "" {
		r = r.Clone(r.Context())
		r.Header.Set("Accept", "text/html,application/xhtml+xml,*/*;q=0.8")
	}
	return http.DefaultTransport.RoundTrip(r)
}
