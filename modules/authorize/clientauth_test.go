package authorize_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"golang.org/x/oauth2"

	"github.com/authcore/authcore/internal/apptest"
)

// Client authentication as SPEC §29 corrects it (issue 46): the registered
// token_endpoint_auth_method is the only one accepted, a client assertion's aud is one
// value, and an assertion may live an hour, its jti remembered that long.

const assertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

// registered is a host's client registered with method, its secret or key.
type registered struct {
	id, secret string
	key        keyPair
}

func registerWith(t *testing.T, w *world, method string) registered {
	t.Helper()
	r := registered{key: newKeyPair(t, "k-"+method)}
	body := map[string]any{"client_name": method, "redirect_uris": []string{"https://rp.example/cb"}, "token_endpoint_auth_method": method}
	if method == "private_key_jwt" {
		body["jwks"] = r.key.jwks()
	}
	got := w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/register", Body: body}).Expect(t, 201, map[string]any{"token_endpoint_auth_method": method})
	r.id = got["client_id"].(string)
	r.secret, _ = got["client_secret"].(string)
	return r
}

// present is client authentication by method for r: the form fields and headers a client
// using that method sends.
func (r registered) present(t *testing.T, w *world, method string, form url.Values) map[string]string {
	t.Helper()
	switch method {
	case "client_secret_basic":
		return apptest.Basic(r.id, cmpSecret(r.secret))
	case "client_secret_post":
		form.Set("client_id", r.id)
		form.Set("client_secret", cmpSecret(r.secret))
	case "private_key_jwt":
		form.Set("client_assertion_type", assertionType)
		form.Set("client_assertion", r.key.assertion(t, r.id, w.issuer(t), w.a.Clock.Now(), nil))
	}
	return nil
}

// cmpSecret is a client's secret, or a well-formed one for a client that has none (a
// key's client presenting a secret is refused for the method, not the format).
func cmpSecret(s string) string {
	if s == "" {
		return "ac_rcs_" + strings.Repeat("A", 38)
	}
	return s
}

// approvedCode is a code the world's admin approved for c, for the MCP server's tools
// with a refresh token.
func approvedCode(t *testing.T, w *world, c registered) (*flow, string) {
	t.Helper()
	f := newFlow(c.id, "https://rp.example/cb")
	f.extra.Set("resource", w.mcp.URL)
	f.extra.Set("scope", "offline_access tools:call")
	return f, approve(t, w.a, w.admin, f)
}

var methods = []string{"client_secret_basic", "client_secret_post", "private_key_jwt"}

// A client registered with one token_endpoint_auth_method cannot authenticate with
// another, at the token endpoint (code and refresh grants), at revocation and at
// introspection: each mismatch is invalid_client; the registered method works.
func TestOnlyTheRegisteredAuthMethod(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		a := w.a
		for _, reg := range methods {
			c := registerWith(t, w, reg)
			code := func() (*flow, string) { return approvedCode(t, w, c) }
			token := func(method string, form url.Values) *apptest.Response {
				h := c.present(t, w, method, form)
				return a.PostForm("/v1/oauth/token", form, h)
			}
			for _, used := range methods {
				if used == reg {
					continue
				}
				t.Run(reg+" presenting "+used, func(t *testing.T) {
					f, cd := code()
					token(used, url.Values{"grant_type": {"authorization_code"}, "code": {cd}, "redirect_uri": {f.redirect}, "code_verifier": {f.verifier}}).
						Expect(t, 401, map[string]any{"error": "invalid_client"})
					// The stock client, when it sends secrets, sends them the other way.
					if reg != "private_key_jwt" && used != "private_key_jwt" {
						f, cd = code()
						_, err := stockConfig(w, c, used, f).Exchange(context.Background(), cd, oauth2.VerifierOption(f.verifier))
						var re *oauth2.RetrieveError
						if !errors.As(err, &re) || re.ErrorCode != "invalid_client" {
							t.Fatalf("x/oauth2 with %s: %v", used, err)
						}
					}
				})
			}
			// The registered method: the code, the refresh, revocation.
			f, cd := code()
			got := token(reg, url.Values{"grant_type": {"authorization_code"}, "code": {cd}, "redirect_uri": {f.redirect}, "code_verifier": {f.verifier}}).Expect(t, 200, nil)
			refresh := got["refresh_token"].(string)
			for _, used := range methods {
				if used == reg {
					continue
				}
				t.Run(reg+" refreshing with "+used, func(t *testing.T) {
					token(used, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}}).Expect(t, 401, map[string]any{"error": "invalid_client"})
				})
				t.Run(reg+" revoking with "+used, func(t *testing.T) {
					form := url.Values{"token": {refresh}}
					a.PostForm("/v1/oauth/revoke", form, c.present(t, w, used, form)).Expect(t, 401, map[string]any{"error": "invalid_client"})
				})
				t.Run(reg+" introspecting with "+used, func(t *testing.T) {
					form := url.Values{"token": {got["access_token"].(string)}}
					a.PostForm("/v1/oauth/introspect", form, c.present(t, w, used, form)).Expect(t, 401, map[string]any{"error": "invalid_client"})
				})
			}
			got = token(reg, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}}).Expect(t, 200, nil)
			form := url.Values{"token": {got["refresh_token"].(string)}}
			a.PostForm("/v1/oauth/revoke", form, c.present(t, w, reg, form)).Expect(t, 200, nil)
		}
		// Metadata still lists each method: every client has one of them.
		meta := a.Get("/.well-known/oauth-authorization-server").Expect(t, 200, nil)
		for _, m := range methods {
			if !strings.Contains(strings.Join(toStrings(meta["token_endpoint_auth_methods_supported"]), " "), m) {
				t.Fatalf("token_endpoint_auth_methods_supported %v lacks %s", meta["token_endpoint_auth_methods_supported"], m)
			}
		}
	})
}

// stockConfig is golang.org/x/oauth2 configured for c, sending its secret by method.
func stockConfig(w *world, c registered, method string, f *flow) *oauth2.Config {
	style := oauth2.AuthStyleInHeader
	if method == "client_secret_post" {
		style = oauth2.AuthStyleInParams
	}
	return &oauth2.Config{ClientID: c.id, ClientSecret: cmpSecret(c.secret), RedirectURL: f.redirect,
		Endpoint: oauth2.Endpoint{TokenURL: w.a.Base + "/v1/oauth/token", AuthStyle: style}}
}

// A client assertion's aud is one value, this server's issuer or token endpoint (SPEC
// §29): a list of one is accepted; a list of more is refused, even when it holds this
// server (an assertion for several servers is replayable at each).
func TestClientAssertionAudienceIsOneValue(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		c := registerWith(t, w, "private_key_jwt")
		iss := w.issuer(t)
		tokenURL := iss + "/v1/oauth/token"
		revoke := func(aud any) *apptest.Response {
			return w.a.PostForm("/v1/oauth/revoke", url.Values{"token": {"ac_gr_unknown"}, "client_assertion_type": {assertionType},
				"client_assertion": {c.key.assertion(t, c.id, "", w.a.Clock.Now(), func(m map[string]any) { m["aud"] = aud })}}, nil)
		}
		for name, aud := range map[string]any{"the issuer": iss, "the token endpoint": tokenURL, "a list of the issuer": []string{iss},
			"a list of the token endpoint": []string{tokenURL}} {
			t.Run(name, func(t *testing.T) { revoke(aud).Expect(t, 200, nil) })
		}
		for name, aud := range map[string]any{"the issuer and another server": []string{iss, "https://other.example"},
			"another server and the token endpoint": []string{"https://other.example/token", tokenURL},
			"the issuer and the token endpoint":     []string{iss, tokenURL}, "an empty list": []string{}} {
			t.Run(name, func(t *testing.T) {
				got := revoke(aud).Expect(t, 401, map[string]any{"error": "invalid_client"})
				if !strings.Contains(got["error_description"].(string), "aud") {
					t.Fatalf("error_description %q", got["error_description"])
				}
			})
		}
	})
}

// Authlib's default client assertion (authlib.oauth2.rfc7523.private_key_jwt_sign, as the
// issue quotes it): RS256, header {alg, typ: JWT}, iss = sub = client_id, aud = the token
// endpoint, a random jti, iat = now, exp = iat + 3600.
func authlibAssertion(t *testing.T, key *rsa.PrivateKey, kid, clientID, tokenURL string, iat time.Time, lifetime time.Duration) string {
	t.Helper()
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", kid))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := jwt.Signed(s).Claims(map[string]any{"iss": clientID, "sub": clientID, "aud": tokenURL,
		"jti": oauth2.GenerateVerifier()[:36], "iat": iat.Unix(), "exp": iat.Add(lifetime).Unix()}).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// private_key_jwt assertions may live up to 60 minutes (SPEC §29): Authlib's hour-long
// default is accepted, 61 minutes is refused, and the jti is remembered until exp: a
// replay at minute 50 is refused, on this replica and on another.
func TestClientAssertionLivesAnHour(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		a := w.a
		key, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			t.Fatal(err)
		}
		id := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/register", Body: map[string]any{
			"redirect_uris": []string{"https://rp.example/cb"}, "token_endpoint_auth_method": "private_key_jwt",
			"jwks": map[string]any{"keys": []any{jwkOf(t, jose.JSONWebKey{Key: &key.PublicKey, KeyID: "authlib", Use: "sig"})}}}}).
			Expect(t, 201, nil)["client_id"].(string)
		tokenURL := w.issuer(t) + "/v1/oauth/token"
		redeem := func(assertion string) *apptest.Response {
			f := newFlow(id, "https://rp.example/cb")
			f.extra.Set("resource", w.mcp.URL)
			c := approve(t, a, w.admin, f)
			return a.PostForm("/v1/oauth/token", url.Values{"grant_type": {"authorization_code"}, "code": {c}, "redirect_uri": {f.redirect},
				"code_verifier": {f.verifier}, "client_assertion_type": {assertionType}, "client_assertion": {assertion}}, nil)
		}
		// Authenticates at revocation: what a client does at minute 50 needs no person.
		revoke := func(app *apptest.App, assertion string) *apptest.Response {
			return app.PostForm("/v1/oauth/revoke", url.Values{"token": {"ac_gr_unknown"}, "client_assertion_type": {assertionType}, "client_assertion": {assertion}}, nil)
		}
		now := a.Clock.Now()
		hour := authlibAssertion(t, key, "authlib", id, tokenURL, now, time.Hour)
		redeem(hour).Expect(t, 200, nil)
		got := redeem(authlibAssertion(t, key, "authlib", id, tokenURL, now, 61*time.Minute)).Expect(t, 401, map[string]any{"error": "invalid_client"})
		if !strings.Contains(got["error_description"].(string), "1h0m0s") {
			t.Fatalf("error_description %q", got["error_description"])
		}
		var other *apptest.App
		if st.Name == "postgres" {
			other = apptest.StartURL(t, st.Name, st.URL(t)) // the same database: another replica
		}
		a.Clock.Advance(50 * time.Minute)
		if other != nil {
			other.Clock.Advance(50 * time.Minute)
		}
		got = revoke(a, hour).Expect(t, 401, map[string]any{"error": "invalid_client"})
		if !strings.Contains(got["error_description"].(string), "used already") {
			t.Fatalf("a replay at minute 50: %q", got["error_description"])
		}
		if other != nil {
			revoke(other, hour).Expect(t, 401, map[string]any{"error": "invalid_client"})
		}
		revoke(a, authlibAssertion(t, key, "authlib", id, tokenURL, a.Clock.Now(), time.Hour)).Expect(t, 200, nil)
		a.Clock.Advance(11 * time.Minute) // past its exp: expired, whatever the memory holds
		revoke(a, hour).Expect(t, 401, map[string]any{"error": "invalid_client"})
	})
}

func jwkOf(t *testing.T, k jose.JSONWebKey) map[string]any {
	t.Helper()
	set := keyPair{public: k}.jwks()
	return set["keys"].([]any)[0].(map[string]any)
}

// Registration accepts every grant type the token endpoint would serve a host's client
// (SPEC §29), alone or beside the code grant, and refuses unknown ones.
func TestRegistrationGrantTypes(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := apptest.Start(t, st)
		reg := func(grants []string) *apptest.Response {
			return a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/register", Body: map[string]any{
				"redirect_uris": []string{"https://rp.example/cb"}, "token_endpoint_auth_method": "client_secret_basic", "grant_types": grants}})
		}
		for _, g := range []string{"urn:ietf:params:oauth:grant-type:token-exchange", "urn:ietf:params:oauth:grant-type:jwt-bearer",
			"urn:openid:params:grant-type:ciba", "urn:ietf:params:oauth:grant-type:device_code"} {
			t.Run(g, func(t *testing.T) {
				both := []string{"authorization_code", "refresh_token", g}
				reg(both).Expect(t, 201, map[string]any{"grant_types": []any{"authorization_code", "refresh_token", g}})
				reg([]string{g}).Expect(t, 201, map[string]any{"grant_types": []any{g}})
			})
		}
		for _, g := range []string{"urn:example:unknown", "client_credentials", "password", "implicit", ""} {
			t.Run("refused "+g, func(t *testing.T) {
				reg([]string{"authorization_code", g}).Expect(t, 400, map[string]any{"error": "invalid_client_metadata"})
			})
		}
	})
}

// RP-initiated logout sends the browser back only with a live id_token_hint of the
// client whose registered post_logout_redirect_uri it names (SPEC §29): without a hint,
// with another client's, with an expired or forged one, or to a URI the hint's client did
// not register, the browser stays on a page and is never redirected.
func TestLogoutNeverRedirectsWithoutAValidHint(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		o := newOIDC(t, st, nil)
		a := o.a
		other := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/register", Body: map[string]any{"client_name": "Other RP",
			"redirect_uris": []string{"http://127.0.0.1/cb"}, "post_logout_redirect_uris": []string{"http://127.0.0.1/other-bye"}}}).
			Expect(t, 201, nil)["client_id"].(string)
		idTokenFor := func(client string) (string, string) {
			f := newFlow(client, "http://127.0.0.1/cb")
			f.extra.Set("scope", "openid")
			f.extra.Set("resource", o.mcp.URL)
			got := redeem(a, f, approve(t, a, o.admin, f), nil).Expect(t, 200, nil)
			return got["id_token"].(string), got["access_token"].(string)
		}
		mine, access := idTokenFor(o.client)
		theirs, _ := idTokenFor(other)
		parts := strings.Split(mine, ".")
		forged := parts[0] + "." + parts[1] + "." + strings.Repeat("A", len(parts[2]))
		stays := func(name string, q url.Values) {
			t.Run(name, func(t *testing.T) {
				res := browserGet(t, a, "/oauth/logout?"+q.Encode(), nil)
				if res.StatusCode/100 == 3 || res.Header.Get("Location") != "" {
					t.Fatalf("redirected: %d to %q", res.StatusCode, res.Header.Get("Location"))
				}
				if res.StatusCode != 200 && res.StatusCode != 400 {
					t.Fatalf("status %d", res.StatusCode)
				}
			})
		}
		bye := "http://127.0.0.1/bye"
		stays("no hint, the client named", url.Values{"client_id": {o.client}, "post_logout_redirect_uri": {bye}})
		stays("no hint, nothing named", url.Values{"post_logout_redirect_uri": {bye}})
		stays("another client's hint", url.Values{"id_token_hint": {theirs}, "post_logout_redirect_uri": {bye}})
		stays("another client's hint, the client named", url.Values{"id_token_hint": {theirs}, "client_id": {o.client}, "post_logout_redirect_uri": {bye}})
		stays("a forged hint", url.Values{"id_token_hint": {forged}, "post_logout_redirect_uri": {bye}})
		stays("an access token as the hint", url.Values{"id_token_hint": {access}, "post_logout_redirect_uri": {bye}})
		stays("a URI the hint's client did not register", url.Values{"id_token_hint": {mine}, "post_logout_redirect_uri": {"http://127.0.0.1/other-bye"}})
		// The control: a live hint of the client to its registered URI goes back.
		res := browserGet(t, a, "/oauth/logout?"+url.Values{"id_token_hint": {mine}, "post_logout_redirect_uri": {bye}}.Encode(), nil)
		if res.StatusCode != http.StatusFound || res.Header.Get("Location") != bye {
			t.Fatalf("a live hint: %d to %q", res.StatusCode, res.Header.Get("Location"))
		}
		a.Clock.Advance(16 * time.Minute) // past the id_token's 15 minutes
		stays("an expired hint", url.Values{"id_token_hint": {mine}, "post_logout_redirect_uri": {bye}})
	})
}

// RFC 6749 §2.3: a client uses one authentication method per request. Every endpoint that
// authenticates clients (the token endpoint's code and refresh grants, revocation,
// introspection) refuses any two at once as invalid_request, whichever the client
// registered, and spends nothing: the registered method alone still works afterwards.
func TestTwoClientAuthMethodsAreRefused(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		a := w.a
		for _, reg := range methods {
			c := registerWith(t, w, reg)
			f, cd := approvedCode(t, w, c)
			code := url.Values{"grant_type": {"authorization_code"}, "code": {cd}, "redirect_uri": {f.redirect}, "code_verifier": {f.verifier}}
			// twice presents the registered method and another on one request.
			twice := func(path string, other string, form url.Values) *apptest.Response {
				h := c.present(t, w, reg, form)
				if h2 := c.present(t, w, other, form); h2 != nil {
					h = h2
				}
				return a.PostForm(path, form, h)
			}
			var got map[string]any
			for _, other := range methods {
				if other == reg {
					continue
				}
				t.Run(reg+" and "+other+" for a code", func(t *testing.T) {
					twice("/v1/oauth/token", other, clone(code)).Expect(t, 400, map[string]any{"error": "invalid_request"})
				})
			}
			got = a.PostForm("/v1/oauth/token", code, c.present(t, w, reg, code)).Expect(t, 200, nil)
			for _, other := range methods {
				if other == reg {
					continue
				}
				t.Run(reg+" and "+other+" elsewhere", func(t *testing.T) {
					twice("/v1/oauth/token", other, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {got["refresh_token"].(string)}}).
						Expect(t, 400, map[string]any{"error": "invalid_request"})
					twice("/v1/oauth/revoke", other, url.Values{"token": {got["refresh_token"].(string)}}).Expect(t, 400, map[string]any{"error": "invalid_request"})
					twice("/v1/oauth/introspect", other, url.Values{"token": {got["access_token"].(string)}}).Expect(t, 400, map[string]any{"error": "invalid_request"})
				})
			}
			refresh := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {got["refresh_token"].(string)}}
			got = a.PostForm("/v1/oauth/token", refresh, c.present(t, w, reg, refresh)).Expect(t, 200, nil)
			revoke := url.Values{"token": {got["refresh_token"].(string)}}
			a.PostForm("/v1/oauth/revoke", revoke, c.present(t, w, reg, revoke)).Expect(t, 200, nil)
		}
	})
}

func clone(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}
