package authorize_test

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/internal/browser"
	"github.com/authcore/authcore/internal/testkit"
	"github.com/authcore/authcore/platform/config"
)

func TestMain(m *testing.M) { apptest.Main(m, browser.Stop) }

// mcpServer is an MCP server built on the official Go SDK and protected by authcore as
// any resource server would be: RFC 9728 metadata naming authcore, bearer tokens checked
// by RFC 7662 introspection (so a revoked grant is refused at its next call) and their
// audience checked against its own URL.
type mcpServer struct {
	URL      string // the MCP endpoint, which is also its resource URI
	Metadata string
}

func newMCPServer(t *testing.T, issuer string, introspector apptest.AuthClient) *mcpServer {
	t.Helper()
	server := mcp.NewServer(&mcp.Implementation{Name: "tools", Version: "1.0.0"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "whoami", Description: "Who the token is for"},
		func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			ti := req.Extra.TokenInfo
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "user=" + ti.UserID + " project=" + fmt.Sprint(ti.Extra["project_id"])}}}, nil, nil
		})
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	s := &mcpServer{URL: srv.URL + "/mcp", Metadata: srv.URL + "/.well-known/oauth-protected-resource/mcp"}
	verify := func(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		form := url.Values{"token": {token}}
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, issuer+"/v1/oauth/introspect", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth(introspector.ID, introspector.Secret)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		defer res.Body.Close()
		var got map[string]any
		if err := json.NewDecoder(res.Body).Decode(&got); err != nil || res.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("introspection answered %d", res.StatusCode)
		}
		if got["active"] != true || !audienceHas(got["aud"], s.URL) {
			return nil, auth.ErrInvalidToken
		}
		exp, _ := got["exp"].(float64)
		sub, _ := got["sub"].(string)
		sc, _ := got["scope"].(string)
		return &auth.TokenInfo{UserID: sub, Scopes: strings.Fields(sc), Expiration: time.Unix(int64(exp), 0), Extra: got}, nil
	}
	mux.Handle("/.well-known/oauth-protected-resource/mcp", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: s.URL, AuthorizationServers: []string{issuer}, ScopesSupported: []string{"tools:call"}, ResourceName: "test tools",
	}))
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	mux.Handle("/mcp", auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: s.Metadata, Scopes: []string{"tools:call"}})(handler))
	return s
}

func audienceHas(aud any, want string) bool {
	switch v := aud.(type) {
	case string:
		return v == want
	case []any:
		return slices.Contains(v, any(want))
	}
	return false
}

// host is an MCP host: the SDK's authorization-code handler with a loopback callback, and
// a person at a browser who answers the consent page as person says.
type host struct {
	t        *testing.T
	handler  *auth.AuthorizationCodeHandler
	callback string
	results  chan redirected
	// person opens the authorization URL in the browser and does what a person would;
	// nil: nobody is there, and authorization fails.
	person atomic.Pointer[func(authURL string) error]
	asked  atomic.Int32
}

type registration func(callback string) *auth.AuthorizationCodeHandlerConfig

func newHost(t *testing.T, reg registration) *host {
	t.Helper()
	h := &host{t: t, results: make(chan redirected, 1)}
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Only the callback path counts: the browser also asks this origin for a favicon,
		// which must not pass for an answer without a state.
		if r.URL.Path != "/callback" {
			http.NotFound(w, r)
			return
		}
		q := r.URL.Query()
		select {
		case h.results <- redirected{&auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, q.Get("error")}:
		default:
		}
		fmt.Fprint(w, "You can close this window.")
	}))
	t.Cleanup(cb.Close)
	h.callback = cb.URL + "/callback"
	cfg := reg(h.callback)
	cfg.RedirectURL = h.callback
	cfg.AuthorizationCodeFetcher = func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		h.asked.Add(1)
		p := h.person.Load()
		if p == nil {
			return nil, errors.New("nobody is at the browser")
		}
		if err := (*p)(args.URL); err != nil {
			return nil, err
		}
		select {
		case r := <-h.results:
			if r.err != "" {
				return nil, errors.New("the authorization server answered " + r.err)
			}
			return r.result, nil
		case <-time.After(20 * time.Second):
			return nil, errors.New("no redirect came back to the callback")
		}
	}
	handler, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.handler = handler
	return h
}

// redirected is what came back to the callback.
type redirected struct {
	result *auth.AuthorizationResult
	err    string
}

func (h *host) as(person func(string) error) { h.person.Store(&person) }

// connect connects to an MCP server the way a host does, given only its URL.
func (h *host) connect(ctx context.Context, server string) (*mcp.ClientSession, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "test-host", Version: "1.0.0"}, nil)
	return c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: server, OAuthHandler: h.handler}, nil)
}

func whoami(ctx context.Context, s *mcp.ClientSession) (string, error) {
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
	if err != nil {
		return "", err
	}
	if res.IsError || len(res.Content) == 0 {
		return "", fmt.Errorf("tool failed: %+v", res.Content)
	}
	return res.Content[0].(*mcp.TextContent).Text, nil
}

// approver is a person who signs in (when the console asks) and approves.
func approver(t *testing.T, p *browser.Page, who *apptest.Session, sawHost *string) func(string) error {
	return person(t, p, who, "Approve", sawHost)
}

// person signs in when the console asks and answers the consent page with button.
func person(t *testing.T, p *browser.Page, who *apptest.Session, button string, sawHost *string) func(string) error {
	return func(authURL string) error {
		p.Do(chromedp.Navigate(authURL))
		signIn := ""
		for deadline := time.Now().Add(15 * time.Second); signIn == "" && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			signIn = p.Eval(`location.pathname === '/callback' ? 'back' : document.body?.innerText.includes('Sign in to connect') ? 'yes' : [...document.querySelectorAll('button')].some(b => b.textContent === 'Approve') ? 'no' : ''`)
		}
		if signIn == "back" { // a remembered grant: straight back to the host
			return nil
		}
		if signIn == "yes" {
			p.Do(browser.TypeInto("textbox", "Email", who.Email), browser.TypeInto("textbox", "Password", who.Password), browser.Click("button", "Sign in"))
		}
		p.Do(browser.WaitFor("button", button))
		if sawHost != nil {
			*sawHost = p.Eval(`document.querySelector('[aria-label="Application host"]').textContent`)
		}
		p.Shot("consent")
		p.Do(browser.Click("button", button))
		return nil
	}
}

// world is one authcore with a project, its admin, an MCP server registered as the
// project's resource, and a client metadata document served over https on loopback.
type world struct {
	a            *apptest.App
	admin        *apptest.Session
	introspector apptest.AuthClient
	project      string
	mcp          *mcpServer
	cimd         *httptest.Server
	cimdDoc      atomic.Pointer[map[string]any]
	// files are other documents the same server publishes (a host's key set), by path.
	files sync.Map
}

// serve publishes body at path on the metadata document's server.
func (w *world) serve(path string, body []byte) { w.files.Store(path, body) }

func newWorld(t *testing.T, st apptest.Store, opts ...apptest.Option) *world {
	t.Helper()
	w := &world{}
	w.cimd = httptest.NewTLSServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if body, ok := w.files.Load(r.URL.Path); ok {
			rw.Header().Set("Content-Type", "application/json")
			_, _ = rw.Write(body.([]byte))
			return
		}
		doc := w.cimdDoc.Load()
		if doc == nil || r.URL.Path != "/client.json" {
			http.NotFound(rw, r)
			return
		}
		rw.Header().Set("Content-Type", "application/json")
		rw.Header().Set("Cache-Control", "max-age=300")
		_ = json.NewEncoder(rw).Encode(*doc)
	}))
	t.Cleanup(w.cimd.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: w.cimd.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	w.a = apptest.Start(t, st, append([]apptest.Option{apptest.WithConfig(func(c *config.Config) {
		c.WebhookAllowHTTP = true // loopback addresses, for the metadata documents served here
		c.OutboundCAFile = ca
	})}, opts...)...)
	w.admin = w.a.SignUp(t)
	w.project = w.a.CreateProject(t, w.admin)
	w.introspector = w.a.MintAuthClient(t, w.admin, w.project, nil)
	w.mcp = newMCPServer(t, w.issuer(t), w.introspector)
	w.a.RegisterResource(t, w.admin, w.project, w.mcp.URL, []string{"tools:call"})
	return w
}

func (w *world) issuer(t *testing.T) string {
	return w.a.Get("/.well-known/oauth-authorization-server").Expect(t, 200, nil)["issuer"].(string)
}

// metadataDocument serves a client metadata document for a host with this callback and
// returns its client_id.
func (w *world) metadataDocument(callback string) string {
	id := w.cimd.URL + "/client.json"
	doc := map[string]any{"client_id": id, "client_name": "Test MCP Host", "redirect_uris": []string{callback},
		"grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"}, "token_endpoint_auth_method": "none"}
	w.cimdDoc.Store(&doc)
	return id
}

// A stock MCP host, given only the MCP server's URL, ends with a successful tool call
// after a person clicks Approve; the client is a metadata document on loopback https.
// Revoking the grant stops the host at its next call.
func TestHostWithMetadataDocument(t *testing.T) {
	w := newWorld(t, apptest.Stores(t)[0])
	p := browser.NewPage(t, browser.Tab(t, nil))
	var clientID string
	h := newHost(t, func(callback string) *auth.AuthorizationCodeHandlerConfig {
		clientID = w.metadataDocument(callback)
		return &auth.AuthorizationCodeHandlerConfig{ClientIDMetadataDocumentConfig: &auth.ClientIDMetadataDocumentConfig{URL: clientID}}
	})
	var shownHost string
	h.as(approver(t, p, w.admin, &shownHost))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := h.connect(ctx, w.mcp.URL)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer s.Close()
	got, err := whoami(ctx, s)
	if err != nil {
		t.Fatalf("tool call: %v", err)
	}
	if want := "user=" + w.admin.UserID + " project=" + w.project; got != want {
		t.Fatalf("whoami = %q, want %q", got, want)
	}
	// The host shown large is where the code goes: the host's loopback callback; the
	// metadata document's own host, another, is named beside it (SPEC §9b).
	if callback, _ := url.Parse(h.callback); shownHost != callback.Host {
		t.Fatalf("the consent page showed host %q, want the redirect URI's %q", shownHost, callback.Host)
	}

	// The grant is the person's, listed with its client; its access token names it.
	grants := w.a.Get("/v1/auth-core/oauth/grants", "Authorization", "Bearer "+w.admin.AccessToken).Expect(t, 200, nil)["grants"].([]any)
	if len(grants) != 1 {
		t.Fatalf("grants: %v", grants)
	}
	g := grants[0].(map[string]any)
	if g["clientId"] != clientID || g["projectId"] != w.project || !slices.Equal(toStrings(g["resources"]), []string{w.mcp.URL}) || !slices.Equal(toStrings(g["scopes"]), []string{"tools:call"}) {
		t.Fatalf("grant: %v", g)
	}
	ts, _ := h.handler.TokenSource(ctx)
	tok, err := ts.Token()
	if err != nil {
		t.Fatal(err)
	}
	claims := apptest.ClaimsOf(t, tok.AccessToken)
	if claims["grant_id"] != g["id"] || claims["aud"] != w.mcp.URL || claims["sub"] != w.admin.UserID || claims["client_id"] != clientID {
		t.Fatalf("access token claims: %v", claims)
	}
	if tok.RefreshToken == "" || !strings.HasPrefix(tok.RefreshToken, "ac_gr_") {
		t.Fatalf("refresh token %q", tok.RefreshToken)
	}

	// The person disconnects the app on the console; the host's next call fails, and
	// nobody is asked.
	h.person.Store(nil)
	p.Do(chromedp.Navigate(w.a.Base+"/console#/apps"), browser.WaitFor("button", "Disconnect"))
	if text := p.Eval(`document.querySelector('main').innerText`); !strings.Contains(text, "Test MCP Host") || !strings.Contains(text, shownHost) {
		t.Fatalf("Connected apps shows:\n%s", text)
	}
	p.Shot("connected-apps")
	p.Do(browser.Click("button", "Disconnect"), chromedp.WaitVisible(chromedp.CSS("dialog[open]")), chromedp.Click(chromedp.CSS("dialog[open] #confirm-yes")),
		chromedp.WaitVisible("No connected apps yet.", chromedp.ByFunc(browser.Text("No connected apps yet."))))
	if _, err := whoami(ctx, s); err == nil {
		t.Fatal("a tool call succeeded after the grant was revoked")
	}
	w.a.Get("/v1/auth-core/oauth/grants", "Authorization", "Bearer "+w.admin.AccessToken).Expect(t, 200, map[string]any{"grants": []any{}})
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// The same host registering itself (RFC 7591) instead; then refresh rotates, and a rotated
// refresh token presented again ends the grant (x/oauth2 as the client).
func TestHostWithRegistrationAndRefresh(t *testing.T) {
	w := newWorld(t, apptest.Stores(t)[0])
	p := browser.NewPage(t, browser.Tab(t, nil))
	h := newHost(t, func(callback string) *auth.AuthorizationCodeHandlerConfig {
		return &auth.AuthorizationCodeHandlerConfig{DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{
			Metadata: &oauthex.ClientRegistrationMetadata{ClientName: "Registered Host", RedirectURIs: []string{callback},
				GrantTypes: []string{"authorization_code", "refresh_token"}, TokenEndpointAuthMethod: "none"}}}
	})
	h.as(approver(t, p, w.admin, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := h.connect(ctx, w.mcp.URL)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer s.Close()
	if _, err := whoami(ctx, s); err != nil {
		t.Fatalf("tool call: %v", err)
	}
	ts, _ := h.handler.TokenSource(ctx)
	first, err := ts.Token()
	if err != nil {
		t.Fatal(err)
	}
	clientID := apptest.ClaimsOf(t, first.AccessToken)["client_id"].(string)
	if !strings.HasPrefix(clientID, "dcr_") {
		t.Fatalf("client_id %q", clientID)
	}

	// Refresh, as any OAuth library does when the access token runs out.
	issuer := w.issuer(t)
	cfg := &oauth2.Config{ClientID: clientID, Endpoint: oauth2.Endpoint{TokenURL: issuer + "/v1/oauth/token", AuthStyle: oauth2.AuthStyleInParams}}
	stale := &oauth2.Token{AccessToken: first.AccessToken, RefreshToken: first.RefreshToken, Expiry: time.Now().Add(-time.Minute)}
	second, err := cfg.TokenSource(ctx, stale).Token()
	if err != nil {
		t.Fatalf("refresh: %v", err)
	}
	if second.RefreshToken == "" || second.RefreshToken == first.RefreshToken || second.AccessToken == first.AccessToken {
		t.Fatalf("refresh did not rotate: %+v", second)
	}
	if aud := apptest.ClaimsOf(t, second.AccessToken)["aud"]; aud != w.mcp.URL {
		t.Fatalf("refreshed token aud %v", aud)
	}
	// The rotated one again, past the grace for racing twins: theft. The grant ends; the
	// newest refresh token and the access tokens die with it.
	w.a.Clock.Advance(3 * time.Second)
	defer w.a.Clock.Advance(-3 * time.Second)
	if _, err := cfg.TokenSource(ctx, stale).Token(); err == nil || !strings.Contains(err.Error(), "invalid_grant") {
		t.Fatalf("reusing a rotated refresh token: %v", err)
	}
	if _, err := cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: second.RefreshToken, Expiry: time.Now().Add(-time.Minute)}).Token(); err == nil {
		t.Fatal("the newest refresh token still works after reuse was detected")
	}
	h.person.Store(nil)
	if _, err := whoami(ctx, s); err == nil {
		t.Fatal("a tool call succeeded after reuse revoked the grant")
	}
	metrics := string(w.a.Get("/metrics").Body)
	if !strings.Contains(metrics, `authcore_oauth_reuse_total{grant_type="refresh_token"} 1`) {
		t.Fatalf("reuse not counted:\n%s", testkit.GrepLines(metrics, "authcore_oauth"))
	}
}

// A person who clicks Deny: the host gets access_denied and no token.
func TestHostDenied(t *testing.T) {
	w := newWorld(t, apptest.Stores(t)[0])
	p := browser.NewPage(t, browser.Tab(t, nil))
	h := newHost(t, func(callback string) *auth.AuthorizationCodeHandlerConfig {
		return &auth.AuthorizationCodeHandlerConfig{ClientIDMetadataDocumentConfig: &auth.ClientIDMetadataDocumentConfig{URL: w.metadataDocument(callback)}}
	})
	h.as(person(t, p, w.admin, "Deny", nil))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := h.connect(ctx, w.mcp.URL); err == nil || !strings.Contains(err.Error(), "access_denied") {
		t.Fatalf("connect after Deny: %v", err)
	}
	w.a.Get("/v1/auth-core/oauth/grants", "Authorization", "Bearer "+w.admin.AccessToken).Expect(t, 200, map[string]any{"grants": []any{}})
}

// Mix-up (RFC 9207): a host talks to two authorization servers. When the answer to a
// request it sent to one comes back from the other, the iss parameter gives it away and
// the stock host refuses it before any code reaches a token endpoint.
func TestHostRefusesAMixedUpAnswer(t *testing.T) {
	w := newWorld(t, apptest.Stores(t)[0])
	other := apptest.Start(t, apptest.Stores(t)[0])
	otherAdmin := other.SignUp(t)
	otherProject := other.CreateProject(t, otherAdmin)
	other.RegisterResource(t, otherAdmin, otherProject, w.mcp.URL, []string{"tools:call"}) // the other server knows the URI too
	h := newHost(t, func(callback string) *auth.AuthorizationCodeHandlerConfig {
		return &auth.AuthorizationCodeHandlerConfig{DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{
			Metadata: &oauthex.ClientRegistrationMetadata{ClientName: "Host", RedirectURIs: []string{callback}, TokenEndpointAuthMethod: "none"}}}
	})
	// The browser is steered to the other server (a malicious link, a mix-up of tabs);
	// the person there approves what it asks.
	h.as(func(authURL string) error {
		u, _ := url.Parse(authURL)
		q := u.Query()
		q.Set("client_id", register(t, other, h.callback))
		res, err := noFollow.Get(other.Base + "/oauth/authorize?" + q.Encode())
		if err != nil {
			return err
		}
		res.Body.Close()
		loc, _ := url.Parse(res.Header.Get("Location"))
		id := loc.Query().Get("request")
		for _, c := range res.Cookies() {
			marks.Store(id, c.Name+"="+c.Value)
		}
		c := consentOf(other, otherAdmin, id).Expect(t, 200, nil)
		to := decideAs(other, otherAdmin, id, map[string]any{"decision": "approve", "csrfToken": c["csrfToken"]}).Expect(t, 200, nil)["redirectTo"].(string)
		res, err = http.Get(to) // the browser lands on the host's callback
		if err == nil {
			res.Body.Close()
		}
		return err
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := h.connect(ctx, w.mcp.URL)
	if err == nil || !strings.Contains(err.Error(), "does not match expected issuer") {
		t.Fatalf("connect with a mixed-up answer: %v", err)
	}
	if m := string(w.a.Get("/metrics").Body); strings.Contains(m, `authcore_oauth_requests_total{endpoint="authorization_code"`) {
		t.Fatalf("a code reached the expected server's token endpoint:\n%s", testkit.GrepLines(m, "authorization_code"))
	}
}
