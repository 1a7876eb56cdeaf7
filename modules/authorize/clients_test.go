package authorize_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/platform/config"
)

// Dynamic client registration (RFC 7591, SPEC §16, §21): public and confidential clients,
// redirect URIs checked for their application type; bad bodies change nothing.
func TestRegistration(t *testing.T) {
	a := apptest.Start(t, apptest.Stores(t)[0])
	reg := func(body any) *apptest.Response {
		return a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/register", Body: body})
	}
	for name, c := range map[string]struct {
		body any
		code string
	}{
		"no body":                       {nil, "invalid_client_metadata"},
		"not JSON":                      {"redirect_uris", "invalid_client_metadata"},
		"no redirect_uris":              {map[string]any{"client_name": "x"}, "invalid_redirect_uri"},
		"redirect_uris not a list":      {map[string]any{"redirect_uris": "https://app.example/cb"}, "invalid_redirect_uri"},
		"an empty list":                 {map[string]any{"redirect_uris": []string{}}, "invalid_redirect_uri"},
		"a relative URI":                {map[string]any{"redirect_uris": []string{"/cb"}}, "invalid_redirect_uri"},
		"a fragment":                    {map[string]any{"redirect_uris": []string{"https://app.example/cb#x"}}, "invalid_redirect_uri"},
		"javascript:":                   {map[string]any{"redirect_uris": []string{"javascript:alert(1)"}}, "invalid_redirect_uri"},
		"http off loopback":             {map[string]any{"redirect_uris": []string{"http://app.example/cb"}}, "invalid_redirect_uri"},
		"a web client on loopback":      {map[string]any{"redirect_uris": []string{"http://127.0.0.1/cb"}, "application_type": "web"}, "invalid_redirect_uri"},
		"an unknown application_type":   {map[string]any{"redirect_uris": []string{"https://app.example/cb"}, "application_type": "tv"}, "invalid_client_metadata"},
		"an unknown auth method":        {map[string]any{"redirect_uris": []string{"https://app.example/cb"}, "token_endpoint_auth_method": "client_secret_jwt"}, "invalid_client_metadata"},
		"private_key_jwt without keys":  {map[string]any{"redirect_uris": []string{"https://app.example/cb"}, "token_endpoint_auth_method": "private_key_jwt"}, "invalid_client_metadata"},
		"jwks and jwks_uri":             {map[string]any{"redirect_uris": []string{"https://app.example/cb"}, "token_endpoint_auth_method": "private_key_jwt", "jwks": map[string]any{"keys": []any{}}, "jwks_uri": "https://app.example/jwks"}, "invalid_client_metadata"},
		"an empty jwks":                 {map[string]any{"redirect_uris": []string{"https://app.example/cb"}, "token_endpoint_auth_method": "private_key_jwt", "jwks": map[string]any{"keys": []any{}}}, "invalid_client_metadata"},
		"jwks_uri over http":            {map[string]any{"redirect_uris": []string{"https://app.example/cb"}, "token_endpoint_auth_method": "private_key_jwt", "jwks_uri": "http://app.example/jwks"}, "invalid_client_metadata"},
		"keys for a public client":      {map[string]any{"redirect_uris": []string{"https://app.example/cb"}, "jwks_uri": "https://app.example/jwks"}, "invalid_client_metadata"},
		"a scope of the wrong grammar":  {map[string]any{"redirect_uris": []string{"https://app.example/cb"}, "scope": "Tools!"}, "invalid_client_metadata"},
		"an id_token alg of HS256":      {map[string]any{"redirect_uris": []string{"https://app.example/cb"}, "id_token_signed_response_alg": "HS256"}, "invalid_client_metadata"},
		"a post-logout URI over http":   {map[string]any{"redirect_uris": []string{"https://app.example/cb"}, "post_logout_redirect_uris": []string{"http://app.example/bye"}}, "invalid_client_metadata"},
		"client_credentials":            {map[string]any{"redirect_uris": []string{"https://app.example/cb"}, "grant_types": []string{"client_credentials"}}, "invalid_client_metadata"},
		"no authorization_code":         {map[string]any{"redirect_uris": []string{"https://app.example/cb"}, "grant_types": []string{"refresh_token"}}, "invalid_client_metadata"},
		"response_type token":           {map[string]any{"redirect_uris": []string{"https://app.example/cb"}, "response_types": []string{"token"}}, "invalid_client_metadata"},
		"a name with control chars":     {map[string]any{"redirect_uris": []string{"https://app.example/cb"}, "client_name": "a\u0007b"}, "invalid_client_metadata"},
		"a name of 201 characters":      {map[string]any{"redirect_uris": []string{"https://app.example/cb"}, "client_name": strings.Repeat("n", 201)}, "invalid_client_metadata"},
		"eleven redirect URIs":          {map[string]any{"redirect_uris": strings.Split(strings.Repeat("https://app.example/cb,", 11)[:11*23-1], ",")}, "invalid_redirect_uri"},
		"a client_name of wrong type":   {map[string]any{"redirect_uris": []string{"https://app.example/cb"}, "client_name": 7}, "invalid_client_metadata"},
		"grant_types of the wrong type": {map[string]any{"redirect_uris": []string{"https://app.example/cb"}, "grant_types": "authorization_code"}, "invalid_client_metadata"},
	} {
		t.Run(name, func(t *testing.T) { reg(c.body).Expect(t, 400, map[string]any{"error": c.code}) })
	}
	t.Run("a confidential client gets its secret once", func(t *testing.T) {
		got := reg(map[string]any{"redirect_uris": []string{"https://app.example/cb"}, "token_endpoint_auth_method": "client_secret_basic", "scope": "openid email files:read"}).
			Expect(t, 201, map[string]any{"token_endpoint_auth_method": "client_secret_basic", "scope": "openid email files:read", "client_secret_expires_at": 0.0})
		if !strings.HasPrefix(got["client_secret"].(string), "ac_rcs_") {
			t.Fatalf("client_secret %v", got["client_secret"])
		}
	})
	t.Run("without a scope it is told what it may ask for", func(t *testing.T) {
		reg(map[string]any{"redirect_uris": []string{"https://app.example/cb"}}).Expect(t, 201, map[string]any{"scope": "openid profile email offline_access"})
	})
	t.Run("a native host on loopback", func(t *testing.T) {
		reg(map[string]any{"redirect_uris": []string{"http://127.0.0.1:3000/cb"}, "client_name": "CLI"}).
			Expect(t, 201, map[string]any{"application_type": "native", "token_endpoint_auth_method": "none", "client_name": "CLI",
				"grant_types": []any{"authorization_code", "refresh_token"}, "response_types": []any{"code"}})
	})
	t.Run("a private-use scheme is native", func(t *testing.T) {
		reg(map[string]any{"redirect_uris": []string{"com.example.app:/oauth"}}).Expect(t, 201, map[string]any{"application_type": "native"})
	})
	t.Run("a web application", func(t *testing.T) {
		reg(map[string]any{"redirect_uris": []string{"https://app.example/cb"}, "client_uri": "https://app.example"}).
			Expect(t, 201, map[string]any{"application_type": "web", "client_uri": "https://app.example"})
	})
	t.Run("ten redirect URIs", func(t *testing.T) {
		uris := make([]string, 10)
		for i := range uris {
			uris[i] = "https://app.example/cb" + strings.Repeat("x", i)
		}
		reg(map[string]any{"redirect_uris": uris}).Expect(t, 201, nil)
	})
}

// Registration closes with AUTHCORE_OAUTH_REGISTRATION=closed and spends the sign-up
// budget of the caller's address.
func TestRegistrationClosedAndLimited(t *testing.T) {
	closed := apptest.Start(t, apptest.Stores(t)[0], apptest.WithConfig(func(c *config.Config) { c.OAuthRegistration = "closed" }))
	closed.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/register", Body: map[string]any{"redirect_uris": []string{"https://app.example/cb"}}}).
		Expect(t, 403, map[string]any{"error": "access_denied"})

	limited := apptest.Start(t, apptest.Stores(t)[0], apptest.WithConfig(func(c *config.Config) { c.RateLimit = 3 }))
	var client string
	for i := range 4 {
		want := 201
		if i == 3 {
			want = 429
		}
		got := limited.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/register", Body: map[string]any{"redirect_uris": []string{"http://127.0.0.1/cb"}}}).Expect(t, want, nil)
		if i == 0 {
			client = got["client_id"].(string)
		}
	}
	// An authorization request spends the same budget before its client is even looked
	// up (a metadata document would be fetched): past it the person sees a page, and
	// nothing goes to a client not yet known good.
	f := newFlow(client, "http://127.0.0.1/cb")
	if res := authorize(t, limited, f.query()); res.StatusCode != http.StatusBadRequest || res.Header.Get("Location") != "" {
		t.Fatalf("over budget: %d, Location %q", res.StatusCode, res.Header.Get("Location"))
	}
}

// Client metadata documents (SPEC §16 (b)): fetched under the webhook SSRF rule, no
// redirects, at most 5 KiB, their client_id their own URL; cached as their headers say.
func TestClientMetadataDocuments(t *testing.T) {
	w := newWorld(t, apptest.Stores(t)[0])
	a := w.a
	var fetches atomic.Int32
	docs := map[string]func(rw http.ResponseWriter, self string){
		"/good.json": func(rw http.ResponseWriter, self string) {
			rw.Header().Set("Cache-Control", "max-age=600")
			_ = json.NewEncoder(rw).Encode(map[string]any{"client_id": self, "client_name": "Good", "redirect_uris": []string{"http://127.0.0.1/cb"}})
		},
		"/nocache.json": func(rw http.ResponseWriter, self string) {
			rw.Header().Set("Cache-Control", "no-store")
			_ = json.NewEncoder(rw).Encode(map[string]any{"client_id": self, "redirect_uris": []string{"http://127.0.0.1/cb"}})
		},
		"/other-id.json": func(rw http.ResponseWriter, _ string) {
			_ = json.NewEncoder(rw).Encode(map[string]any{"client_id": "https://elsewhere.example/client.json", "redirect_uris": []string{"http://127.0.0.1/cb"}})
		},
		"/big.json": func(rw http.ResponseWriter, self string) {
			_ = json.NewEncoder(rw).Encode(map[string]any{"client_id": self, "redirect_uris": []string{"http://127.0.0.1/cb"}, "padding": strings.Repeat("x", 5<<10)})
		},
		"/moved.json": func(rw http.ResponseWriter, self string) {
			rw.Header().Set("Location", strings.Replace(self, "moved", "good", 1))
			rw.WriteHeader(http.StatusFound)
		},
		"/secret-client.json": func(rw http.ResponseWriter, self string) {
			_ = json.NewEncoder(rw).Encode(map[string]any{"client_id": self, "redirect_uris": []string{"http://127.0.0.1/cb"}, "token_endpoint_auth_method": "client_secret_basic"})
		},
		"/not-json.json": func(rw http.ResponseWriter, _ string) { _, _ = rw.Write([]byte("<html>")) },
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		fetches.Add(1)
		if d, ok := docs[r.URL.Path]; ok {
			d(rw, "https://"+r.Host+r.URL.Path)
			return
		}
		http.NotFound(rw, r)
	}))
	srv.TLS = w.cimd.TLS // the certificate authcore trusts here
	srv.StartTLS()
	t.Cleanup(srv.Close)
	try := func(path string) *http.Response {
		f := newFlow(srv.URL+path, "http://127.0.0.1:7000/cb")
		f.extra.Set("resource", w.mcp.URL)
		return authorize(t, a, f.query())
	}
	t.Run("a good document is used, then cached", func(t *testing.T) {
		before := fetches.Load()
		for range 3 {
			if res := try("/good.json"); res.StatusCode != http.StatusFound {
				t.Fatalf("answered %d", res.StatusCode)
			}
		}
		if n := fetches.Load() - before; n != 1 {
			t.Fatalf("fetched %d times for three requests within max-age", n)
		}
	})
	t.Run("no-store is fetched at most once a minute", func(t *testing.T) {
		before := fetches.Load()
		try("/nocache.json")
		try("/nocache.json")
		if n := fetches.Load() - before; n != 1 {
			t.Fatalf("fetched %d times within a minute", n)
		}
		a.Clock.Advance(61 * time.Second)
		try("/nocache.json")
		if n := fetches.Load() - before; n != 2 {
			t.Fatalf("fetched %d times over a minute and a second", n)
		}
	})
	for path, why := range map[string]string{
		"/other-id.json":      "not its own URL",
		"/big.json":           "larger than 5 KiB",
		"/moved.json":         "redirects are not followed",
		"/secret-client.json": "none or private_key_jwt",
		"/not-json.json":      "not a JSON object",
		"/missing.json":       "answered 404",
	} {
		t.Run(path+" is refused", func(t *testing.T) {
			res := try(path)
			if res.StatusCode != 400 || res.Header.Get("Location") != "" {
				t.Fatalf("answered %d, Location %q", res.StatusCode, res.Header.Get("Location"))
			}
			f := newFlow(srv.URL+path, "http://127.0.0.1:7000/cb")
			expectPage(t, a.Get("/oauth/authorize?"+f.query().Encode()), why)
		})
	}
	t.Run("a private address is refused without the development switch", func(t *testing.T) {
		strict := apptest.Start(t, apptest.Stores(t)[0])
		f := newFlow(srv.URL+"/good.json", "http://127.0.0.1:7000/cb")
		expectPage(t, strict.Get("/oauth/authorize?"+f.query().Encode()), "address")
	})
}

// expectPage fails unless r is the authorization endpoint's error page saying says.
func expectPage(t *testing.T, r *apptest.Response, says string) {
	t.Helper()
	if r.Status != 400 || !strings.Contains(string(r.Body), says) {
		t.Fatalf("answered %d, want the error page saying %q: %s", r.Status, says, r.Body)
	}
}
