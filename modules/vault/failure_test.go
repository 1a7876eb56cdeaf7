package vault_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/internal/interop"
)

// tokenEndpoint stands before the upstream's token endpoint on loopback: it passes
// requests on, or fails them as told, and remembers the refresh tokens it saw (which the
// log must never hold).
type tokenEndpoint struct {
	srv  *httptest.Server
	mu   sync.Mutex
	mode string // "", "hang", "502", "bad"
	seen []string
	done chan struct{}
}

func newTokenEndpoint(t *testing.T, upstream string) *tokenEndpoint {
	target, _ := url.Parse(upstream)
	proxy := httputil.NewSingleHostReverseProxy(target)
	e := &tokenEndpoint{done: make(chan struct{})}
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		form, _ := url.ParseQuery(string(body))
		e.mu.Lock()
		mode := e.mode
		if rt := form.Get("refresh_token"); rt != "" {
			e.seen = append(e.seen, rt)
		}
		e.mu.Unlock()
		switch mode {
		case "hang":
			select {
			case <-r.Context().Done():
			case <-e.done:
			}
		case "502":
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusBadGateway)
			_, _ = io.WriteString(w, "<h1>502 Bad Gateway</h1> refresh_token="+form.Get("refresh_token"))
		case "bad":
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"token_type":"Bearer","note":"`+form.Get("refresh_token")+`"}`) // no access_token
		default:
			r.Body = io.NopCloser(strings.NewReader(string(body)))
			r.ContentLength = int64(len(body))
			r.URL.Path = "/token"
			proxy.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(func() { close(e.done); e.srv.Close() })
	return e
}

func (e *tokenEndpoint) set(mode string) {
	e.mu.Lock()
	e.mode = mode
	e.mu.Unlock()
}

// Issue 46: the vault's 503 logged no cause. Now the log says which: the upstream's token
// endpoint timing out, refusing connections, answering 502, answering nonsense; and never
// a token, whatever the upstream echoed.
func TestVaultLogsWhyTheUpstreamFailed(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := apptest.Start(t, st, appOptions())
		w := &world{a: a, up: interop.StartUpstream(t)}
		w.admin = a.SignUp(t)
		w.project = a.CreateProject(t, w.admin)
		w.client = "client-" + rnd(6)
		secret := "secret-" + rnd(16)
		tokens := newTokenEndpoint(t, w.up.Issuer)
		got := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + w.project + "/auth/providers", Header: w.admin.Bearer(),
			Body: map[string]any{"type": "oauth2", "name": "Acme Mail", "clientId": w.client, "clientSecret": secret,
				"authorizationEndpoint": w.up.Issuer + "/auth", "tokenEndpoint": tokens.srv.URL + "/token", "userinfoEndpoint": w.up.Issuer + "/me",
				"claims":     map[string]any{"subject": "sub", "email": "email", "emailVerified": "email_verified"},
				"trustEmail": true, "offline": true, "scopes": []string{"openid", "email", "profile", "offline_access"}}}).Expect(t, 201, nil)
		w.provider = got["id"].(string)
		w.up.AddClient(t, w.client, secret, got["callbackUrl"].(string))
		w.agentA = w.mintAgent(t, "mail-agent")
		w.signIn(t)
		w.connect(t, w.agentA[0]).Expect(t, 201, nil)
		access := w.exchange(t, w.agentA).Expect(t, 200, nil)["access_token"].(string)
		w.a.Clock.Advance(11 * time.Minute) // expired: the next exchange refreshes

		for _, c := range []struct{ mode, class string }{
			{"502", "upstream_5xx"}, {"bad", "bad_answer"}, {"hang", "timeout"}, {"closed", "refused"},
		} {
			if c.mode == "closed" {
				tokens.srv.CloseClientConnections()
				tokens.srv.Listener.Close()
			} else {
				tokens.set(c.mode)
			}
			mark := len(w.a.Logs.String())
			r := w.exchange(t, w.agentA)
			oauthError(t, r, 503, "temporarily_unavailable")
			if !logged(w.a.Logs.String()[mark:], c.class) {
				t.Errorf("%s: no log line names the cause %q:\n%s", c.mode, c.class, w.a.Logs.String()[mark:])
			}
		}
		tokens.mu.Lock()
		defer tokens.mu.Unlock()
		if len(tokens.seen) == 0 {
			t.Fatal("no refresh reached the token endpoint")
		}
		logs := w.a.Logs.String()
		for _, s := range append([]string{access, secret}, tokens.seen...) {
			if strings.Contains(logs, s) {
				t.Fatal("an upstream token or secret was logged")
			}
		}
	})
}

// logged reports a warning of a failed refresh whose cause is class among JSON log lines.
func logged(logs, class string) bool {
	sc := bufio.NewScanner(strings.NewReader(logs))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line map[string]any
		if json.Unmarshal(sc.Bytes(), &line) == nil && line["cause"] == class && strings.Contains(line["msg"].(string), "refresh failed") {
			return true
		}
	}
	return false
}
