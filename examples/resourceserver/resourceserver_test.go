package resourceserver_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/authcore/authcore/examples/resourceserver"
	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/internal/interop"
)

func TestMain(m *testing.M) { apptest.Main(m) }

// start runs a resource server behind wrap; it learns its own URL before it serves.
func start(t *testing.T, wrap func(cfg resourceserver.Config) http.Handler, cfg resourceserver.Config) (*httptest.Server, resourceserver.Config) {
	srv := httptest.NewUnstartedServer(nil)
	cfg.Resource = "http://" + srv.Listener.Addr().String()
	srv.Config.Handler = wrap(cfg)
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, cfg
}

var hello = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	c := resourceserver.ClaimsOf(r)
	_ = json.NewEncoder(w).Encode(map[string]string{"agent": c.AgentName, "project": c.ProjectID, "sub": c.Subject})
})

func get(t *testing.T, url, token string) (int, string, http.Header) {
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b), res.Header
}

// The whole story of SPEC §11 with stock parts: a client discovers the token endpoint from
// RFC 8414 metadata, exchanges an agent token with golang.org/x/oauth2, and calls a
// resource server that verifies the JWT offline (keyfunc + golang-jwt) or online
// (introspection), and that points clients at authcore through RFC 9728 metadata.
func TestResourceServer(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := apptest.Start(t, st)
		admin := a.SignUp(t)
		prj := a.CreateProject(t, admin)
		agent := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/projects/" + prj + "/ai/agents",
			Body: map[string]any{"agentName": "indexer", "scopes": []string{"files:*"}}, Header: admin.Bearer()}).Expect(t, 200, nil)
		badge := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + prj + "/service-badges",
			Body: map[string]any{"name": "files-api", "product": "auth"}, Header: admin.Bearer()}).Expect(t, 201, nil)
		creds := badge["auth"].(map[string]any)
		issuer := a.Config.PublicURL // the test harness names the address it serves on

		base := resourceserver.Config{Issuer: issuer, Scope: "files:read", ProjectID: prj,
			ClientID: creds["clientId"].(string), ClientSecret: creds["clientSecret"].(string)}
		offline, offCfg := start(t, func(cfg resourceserver.Config) http.Handler {
			h, err := resourceserver.Offline(context.Background(), cfg, hello)
			if err != nil {
				t.Fatal(err)
			}
			return h
		}, base)
		online, onCfg := start(t, func(cfg resourceserver.Config) http.Handler { return resourceserver.Online(cfg, hello) }, base)
		// Tokens are issued only for resources the project registered (SPEC §11).
		a.RegisterResource(t, admin, prj, offCfg.Resource, nil)
		a.RegisterResource(t, admin, prj, onCfg.Resource, nil)

		// Discovery: the resource server names its authorization server; that names its endpoints.
		_, body, _ := get(t, offline.URL+"/.well-known/oauth-protected-resource", "")
		var prm struct {
			Resource             string   `json:"resource"`
			AuthorizationServers []string `json:"authorization_servers"`
		}
		if err := json.Unmarshal([]byte(body), &prm); err != nil || prm.Resource != offCfg.Resource || len(prm.AuthorizationServers) != 1 || prm.AuthorizationServers[0] != issuer {
			t.Fatalf("protected-resource metadata %s", body)
		}
		var asm struct {
			TokenEndpoint string `json:"token_endpoint"`
		}
		a.Get("/.well-known/oauth-authorization-server").Decode(t, &asm)

		exchange := func(resource string) string {
			cc := clientcredentials.Config{TokenURL: asm.TokenEndpoint, AuthStyle: oauth2.AuthStyleInParams, EndpointParams: url.Values{
				"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"}, "subject_token": {agent["plaintext"].(string)},
				"subject_token_type": {"urn:ietf:params:oauth:token-type:access_token"}, "resource": {resource}, "scope": {"files:read"}}}
			tok, err := cc.Token(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			return tok.AccessToken
		}
		forOffline, forOnline := exchange(offCfg.Resource), exchange(onCfg.Resource)

		if code, body, _ := get(t, offline.URL+"/files", forOffline); code != 200 || !strings.Contains(body, `"agent":"indexer"`) || !strings.Contains(body, prj) {
			t.Fatalf("offline: %d %s", code, body)
		}
		if code, body, _ := get(t, online.URL+"/files", forOnline); code != 200 || !strings.Contains(body, `"agent":"indexer"`) {
			t.Fatalf("online: %d %s", code, body)
		}
		// A token for another resource is refused by both, and the refusal says where to look.
		for _, srv := range []*httptest.Server{offline, online} {
			target := forOnline
			if srv == online {
				target = forOffline
			}
			code, _, h := get(t, srv.URL+"/files", target)
			if code != 401 || !strings.Contains(h.Get("WWW-Authenticate"), "resource_metadata=") {
				t.Fatalf("%s accepted a token for another resource: %d %v", srv.URL, code, h)
			}
		}
		if code, _, _ := get(t, offline.URL+"/files", agent["plaintext"].(string)); code != 401 {
			t.Fatal("the long-lived agent token itself was accepted as an access token")
		}
		// A good token without the scope: 403 insufficient_scope naming it (RFC 6750 §3.1),
		// what an MCP host answers by asking the person for the added scope (SPEC §21).
		narrow := clientcredentials.Config{TokenURL: asm.TokenEndpoint, AuthStyle: oauth2.AuthStyleInParams, EndpointParams: url.Values{
			"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"}, "subject_token": {agent["plaintext"].(string)},
			"subject_token_type": {"urn:ietf:params:oauth:token-type:access_token"}, "resource": {offCfg.Resource}, "scope": {"files:list"}}}
		if tok, err := narrow.Token(context.Background()); err != nil {
			t.Fatal(err)
		} else if code, _, h := get(t, offline.URL+"/files", tok.AccessToken); code != 403 ||
			!strings.Contains(h.Get("WWW-Authenticate"), `error="insufficient_scope"`) || !strings.Contains(h.Get("WWW-Authenticate"), `scope="files:read"`) {
			t.Fatalf("a token without the scope: %d %v", code, h)
		}
		// A server that serves one project refuses a valid token of any other project.
		elsewhere, _ := start(t, func(cfg resourceserver.Config) http.Handler {
			cfg.Resource, cfg.ProjectID = offCfg.Resource, "prj_someoneelse"
			h, err := resourceserver.Offline(context.Background(), cfg, hello)
			if err != nil {
				t.Fatal(err)
			}
			return h
		}, base)
		if code, _, _ := get(t, elsewhere.URL+"/files", forOffline); code != 401 {
			t.Fatal("a token of another project was accepted")
		}

		// The review's attack (SPEC §9a): a stranger signs up, mints an agent token and asks
		// for a token for this project's server. Nothing is issued, and the URI cannot be
		// registered again by the stranger's project.
		stranger := a.SignUp(t)
		theirs := a.CreateProject(t, stranger)
		theirAgent := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/projects/" + theirs + "/ai/agents",
			Body: map[string]any{"scopes": []string{"files:*"}}, Header: stranger.Bearer()}).Expect(t, 200, nil)["plaintext"].(string)
		steal := url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"}, "subject_token": {theirAgent},
			"subject_token_type": {"urn:ietf:params:oauth:token-type:access_token"}, "resource": {offCfg.Resource}}
		a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/token", Body: steal.Encode(),
			Header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}}).Expect(t, 400, map[string]any{"error": "invalid_target"})
		a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + theirs + "/oauth/resources", Header: stranger.Bearer(),
			Body: map[string]any{"uri": offCfg.Resource, "name": "mine now"}}).Expect(t, 409, map[string]any{"code": "resource_taken"})

		// Revoking the agent token: introspection refuses at once; offline verification keeps
		// accepting until the JWT expires (at most 15 minutes) — the trade-off of going offline.
		a.Do(apptest.Req{Method: http.MethodDelete, Path: "/v1/auth-core/projects/" + prj + "/ai/agents/" + agent["agent"].(map[string]any)["id"].(string), Header: admin.Bearer()}).Expect(t, 200, nil)
		if code, _, _ := get(t, online.URL+"/files", forOnline); code != 401 {
			t.Fatal("online verification accepted a token whose agent token was revoked")
		}
		if code, _, _ := get(t, offline.URL+"/files", forOffline); code != 200 {
			t.Fatal("offline verification should still accept the unexpired JWT")
		}
	})
}

// A DPoP-bound token (RFC 9449, SPEC §22) is taken only with a proof by its key, offline
// and online: copied to another machine, without the key, it is refused.
func TestDPoPBoundTokens(t *testing.T) {
	a := apptest.Start(t, apptest.Stores(t)[0])
	admin := a.SignUp(t)
	prj := a.CreateProject(t, admin)
	secret := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/projects/" + prj + "/ai/agents",
		Body: map[string]any{"agentName": "indexer", "scopes": []string{"files:*"}}, Header: admin.Bearer()}).Expect(t, 200, nil)["plaintext"].(string)
	creds := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + prj + "/service-badges",
		Body: map[string]any{"name": "files-api", "product": "auth"}, Header: admin.Bearer()}).Expect(t, 201, nil)["auth"].(map[string]any)
	base := resourceserver.Config{Issuer: a.Config.PublicURL, Scope: "files:read", ProjectID: prj,
		ClientID: creds["clientId"].(string), ClientSecret: creds["clientSecret"].(string)}
	offline, offCfg := start(t, func(cfg resourceserver.Config) http.Handler {
		h, err := resourceserver.Offline(context.Background(), cfg, hello)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}, base)
	online, onCfg := start(t, func(cfg resourceserver.Config) http.Handler { return resourceserver.Online(cfg, hello) }, base)
	key, thief := apptest.NewDPoPKey(t), apptest.NewDPoPKey(t)

	for _, rs := range []struct {
		name string
		srv  *httptest.Server
		cfg  resourceserver.Config
	}{{"offline", offline, offCfg}, {"online", online, onCfg}} {
		t.Run(rs.name, func(t *testing.T) {
			a.RegisterResource(t, admin, prj, rs.cfg.Resource, nil)
			form := url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"}, "subject_token": {secret},
				"subject_token_type": {"urn:ietf:params:oauth:token-type:access_token"}, "resource": {rs.cfg.Resource}, "scope": {"files:read"}}
			nonce := a.PostForm("/v1/oauth/token", url.Values{}, nil).Header.Get("DPoP-Nonce")
			at := a.PostForm("/v1/oauth/token", form, map[string]string{"DPoP": key.Proof(t, http.MethodPost, a.Config.PublicURL+"/v1/oauth/token", "", nonce, a.Clock.Now())}).
				Expect(t, 200, map[string]any{"token_type": "DPoP"})["access_token"].(string)
			files := rs.cfg.Resource + "/files"
			call := func(scheme, proof string) (int, http.Header) {
				req, _ := http.NewRequest(http.MethodGet, rs.srv.URL+"/files", nil)
				req.Header.Set("Authorization", scheme+" "+at)
				if proof != "" {
					req.Header.Set("DPoP", proof)
				}
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				res.Body.Close()
				return res.StatusCode, res.Header
			}
			now := time.Now()
			for name, c := range map[string]struct{ scheme, proof string }{
				"as a bearer token":          {"Bearer", ""},
				"without a proof":            {"DPoP", ""},
				"with another key's proof":   {"DPoP", thief.Proof(t, http.MethodGet, files, at, "", now)},
				"with a proof for elsewhere": {"DPoP", key.Proof(t, http.MethodGet, rs.cfg.Resource+"/admin", at, "", now)},
				"with a proof for POST":      {"DPoP", key.Proof(t, http.MethodPost, files, at, "", now)},
				"with an old proof":          {"DPoP", key.Proof(t, http.MethodGet, files, at, "", now.Add(-2*time.Minute))},
			} {
				if code, _ := call(c.scheme, c.proof); code != 401 {
					t.Errorf("%s: %d, want 401", name, code)
				}
			}
			proof := key.Proof(t, http.MethodGet, files, at, "", now)
			if code, _ := call("DPoP", proof); code != 200 {
				t.Fatalf("with its key's proof: %d", code)
			}
			if code, h := call("DPoP", proof); code != 401 || !strings.Contains(h.Get("WWW-Authenticate"), "invalid_dpop_proof") {
				t.Fatalf("the proof replayed: %d %v", code, h)
			}
		})
	}
}

// The stock clients' DPoP (SPEC §22): the dpop package's proofs on ai/me, oauth4webapi's
// DPoP handle for the token exchange and the call to this resource server, with the key
// kept by the agent and the token bound to its thumbprint by the admin.
func TestDPoPWithStockClients(t *testing.T) {
	interop.Dir(t)
	a := apptest.Start(t, apptest.Stores(t)[0])
	admin := a.SignUp(t)
	prj := a.CreateProject(t, admin)
	creds := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + prj + "/service-badges",
		Body: map[string]any{"name": "files-api", "product": "auth"}, Header: admin.Bearer()}).Expect(t, 201, nil)["auth"].(map[string]any)
	_, cfg := start(t, func(cfg resourceserver.Config) http.Handler { return resourceserver.Online(cfg, hello) },
		resourceserver.Config{Issuer: a.Config.PublicURL, Scope: "files:read", ProjectID: prj, ClientID: creds["clientId"].(string), ClientSecret: creds["clientSecret"].(string)})
	a.RegisterResource(t, admin, prj, cfg.Resource, nil)

	out := interop.Run(t, 60*time.Second, "dpop-agent.mjs", "ISSUER="+a.Config.PublicURL, "PROJECT="+prj, "ADMIN_TOKEN="+admin.AccessToken, "RESOURCE="+cfg.Resource)
	var got struct {
		Result struct {
			JKT, Challenge, AgentName, TokenType string
			Bare, Proven, Replayed, Stolen       int
			Resource                             int
			Body                                 map[string]string
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	r := got.Result
	if r.Bare != 401 || !strings.HasPrefix(r.Challenge, "DPoP ") || r.Proven != 200 || r.AgentName != "dpop agent" || r.Replayed != 401 || r.Stolen != 401 {
		t.Fatalf("ai/me: %+v", r)
	}
	if r.TokenType != "dpop" || r.Resource != 200 || r.Body["agent"] != "dpop agent" {
		t.Fatalf("exchange and resource: %+v", r)
	}
}
