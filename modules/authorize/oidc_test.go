package authorize_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/internal/browser"
	"github.com/authcore/authcore/platform/config"
)

// authcore as an OpenID Provider (SPEC §21), checked here in Go with go-jose; the stock
// relying-party libraries drive the same flows in interop_test.go.

// idTokenOf verifies an id_token against the served JWKS and returns its claims and
// header algorithm.
func idTokenOf(t *testing.T, a *apptest.App, raw string) (map[string]any, string) {
	t.Helper()
	var set jose.JSONWebKeySet
	a.Get("/.well-known/jwks.json").Decode(t, &set)
	tok, err := jwt.ParseSigned(raw, []jose.SignatureAlgorithm{jose.RS256, jose.EdDSA})
	if err != nil {
		t.Fatalf("id_token %q: %v", raw, err)
	}
	keys := set.Key(tok.Headers[0].KeyID)
	if len(keys) != 1 {
		t.Fatalf("id_token kid %q is not in the JWKS", tok.Headers[0].KeyID)
	}
	var claims map[string]any
	if err := tok.Claims(keys[0].Key, &claims); err != nil {
		t.Fatal(err)
	}
	return claims, tok.Headers[0].Algorithm
}

// halfHash is at_hash computed the way a relying party does.
func halfHash(alg, token string) string {
	var sum []byte
	if alg == "EdDSA" {
		s := sha512.Sum512([]byte(token))
		sum = s[:]
	} else {
		s := sha256.Sum256([]byte(token))
		sum = s[:]
	}
	return base64.RawURLEncoding.EncodeToString(sum[:len(sum)/2])
}

func TestDiscovery(t *testing.T) {
	a := apptest.StartURL(t, "sqlite", "sqlite::memory:", apptest.WithConfig(func(c *config.Config) { c.PublicURL = "https://id.example.com/auth" }))
	for _, path := range []string{"/.well-known/openid-configuration", "/.well-known/openid-configuration/auth"} {
		got := a.Get(path).Expect(t, 200, map[string]any{
			"issuer":                                "https://id.example.com/auth",
			"authorization_endpoint":                "https://id.example.com/auth/oauth/authorize",
			"userinfo_endpoint":                     "https://id.example.com/auth/v1/oauth/userinfo",
			"end_session_endpoint":                  "https://id.example.com/auth/oauth/logout",
			"jwks_uri":                              "https://id.example.com/auth/.well-known/jwks.json",
			"id_token_signing_alg_values_supported": []any{"RS256", "EdDSA"},
			"subject_types_supported":               []any{"public"},
			"response_types_supported":              []any{"code"},
		})
		for _, s := range []string{"openid", "profile", "email", "offline_access"} {
			if !slices.Contains(got["scopes_supported"].([]any), any(s)) {
				t.Fatalf("%s: scopes_supported %v lacks %s", path, got["scopes_supported"], s)
			}
		}
	}
	a.Get("/.well-known/openid-configuration/elsewhere").Expect(t, 404, nil)
}

// oidcWorld is a world with a registered client for OpenID Connect.
type oidcWorld struct {
	*world
	client string
}

func newOIDC(t *testing.T, st apptest.Store, reg map[string]any, opts ...apptest.Option) *oidcWorld {
	w := newWorld(t, st, opts...)
	body := map[string]any{"client_name": "RP", "redirect_uris": []string{"http://127.0.0.1/cb"}, "post_logout_redirect_uris": []string{"http://127.0.0.1/bye"}}
	for k, v := range reg {
		body[k] = v
	}
	got := w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/register", Body: body}).Expect(t, 201, nil)
	return &oidcWorld{world: w, client: got["client_id"].(string)}
}

func (o *oidcWorld) flow(scope string) *flow {
	f := newFlow(o.client, "http://127.0.0.1/cb")
	f.extra.Set("scope", scope)
	f.extra.Set("resource", o.mcp.URL)
	f.extra.Set("nonce", "n-"+f.state)
	return f
}

func TestIDTokens(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		o := newOIDC(t, st, nil)
		a := o.a
		f := o.flow("openid profile email tools:call")
		got := redeem(a, f, approve(t, a, o.admin, f), nil).Expect(t, 200, map[string]any{"scope": "openid profile email tools:call"})
		claims, alg := idTokenOf(t, a, got["id_token"].(string))
		iss := o.issuer(t)
		if alg != "RS256" || claims["iss"] != iss || claims["aud"] != o.client || claims["azp"] != o.client || claims["sub"] != o.admin.UserID ||
			claims["nonce"] != f.extra.Get("nonce") || claims["email"] != o.admin.Email || claims["email_verified"] != false ||
			claims["name"] != "Test User" || claims["at_hash"] != halfHash(alg, got["access_token"].(string)) || claims["sid"] == nil ||
			claims["auth_time"] == nil || claims["acr"] != "urn:authcore:acr:1fa" || !slices.Contains(claims["amr"].([]any), any("pwd")) {
			t.Fatalf("id_token %s claims %v", alg, claims)
		}
		// Refresh gives one too, without the nonce (OIDC Core §12.2), same auth_time.
		next := a.PostForm("/v1/oauth/token", url.Values{"grant_type": {"refresh_token"}, "client_id": {o.client},
			"refresh_token": {got["refresh_token"].(string)}}, nil).Expect(t, 200, nil)
		again, _ := idTokenOf(t, a, next["id_token"].(string))
		if again["nonce"] != nil || again["auth_time"] != claims["auth_time"] || again["sub"] != claims["sub"] {
			t.Fatalf("refreshed id_token %v", again)
		}
		// Without email or profile, neither is told.
		g := o.flow("openid")
		plain, _ := idTokenOf(t, a, redeem(a, g, approve(t, a, o.admin, g), nil).Expect(t, 200, nil)["id_token"].(string))
		if plain["email"] != nil || plain["name"] != nil {
			t.Fatalf("openid alone told %v", plain)
		}
		// Without openid, no id_token: OAuth clients keep working unchanged.
		h := o.flow("tools:call")
		if got := redeem(a, h, approve(t, a, o.admin, h), nil).Expect(t, 200, nil); got["id_token"] != nil {
			t.Fatalf("an id_token without openid: %v", got)
		}
	})
	t.Run("EdDSA when the client registered it", func(t *testing.T) {
		o := newOIDC(t, apptest.Stores(t)[0], map[string]any{"id_token_signed_response_alg": "EdDSA"})
		f := o.flow("openid")
		got := redeem(o.a, f, approve(t, o.a, o.admin, f), nil).Expect(t, 200, nil)
		claims, alg := idTokenOf(t, o.a, got["id_token"].(string))
		if alg != "EdDSA" || claims["at_hash"] != halfHash(alg, got["access_token"].(string)) {
			t.Fatalf("%s id_token %v", alg, claims)
		}
	})
}

// SPEC §29: the RSA id_token key exists from the first start, so a relying party that
// caches the JWKS before its first sign-in (most do, at boot) finds the key its first
// id_token names. Before, the key was made by the first id_token, after such a fetch.
func TestRSAKeyIsInTheJWKSFromTheFirstStart(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		o := newOIDC(t, st, nil)
		var set jose.JSONWebKeySet
		o.a.Get("/.well-known/jwks.json").Decode(t, &set)
		var rsaKids []string
		for _, k := range set.Keys {
			if _, ok := k.Key.(*rsa.PublicKey); ok && k.Algorithm == "RS256" && k.Use == "sig" {
				rsaKids = append(rsaKids, k.KeyID)
			}
		}
		if len(rsaKids) != 1 {
			t.Fatalf("the JWKS of a fresh app has RSA keys %v, want one RS256 signing key", rsaKids)
		}
		f := o.flow("openid")
		got := redeem(o.a, f, approve(t, o.a, o.admin, f), nil).Expect(t, 200, nil)
		tok, err := jwt.ParseSigned(got["id_token"].(string), []jose.SignatureAlgorithm{jose.RS256})
		if err != nil {
			t.Fatal(err)
		}
		if kid := tok.Headers[0].KeyID; kid != rsaKids[0] {
			t.Fatalf("the first id_token is signed by %q, not by the key the JWKS listed before it (%q)", kid, rsaKids[0])
		}
		var claims map[string]any
		if err := tok.Claims(set.Key(rsaKids[0])[0].Key, &claims); err != nil {
			t.Fatalf("the first id_token does not verify with the key fetched before it: %v", err)
		}
	})
}

func TestUserinfo(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		o := newOIDC(t, st, nil)
		a := o.a
		f := o.flow("openid email")
		tok := redeem(a, f, approve(t, a, o.admin, f), nil).Expect(t, 200, nil)
		access := tok["access_token"].(string)
		a.Get("/v1/oauth/userinfo", "Authorization", "Bearer "+access).Expect(t, 200, map[string]any{"sub": o.admin.UserID, "email": o.admin.Email, "email_verified": false})
		a.PostForm("/v1/oauth/userinfo", url.Values{"access_token": {access}}, nil).Expect(t, 200, map[string]any{"sub": o.admin.UserID})
		if got := a.Get("/v1/oauth/userinfo", "Authorization", "Bearer "+access).JSON(t); got["name"] != nil {
			t.Fatalf("name without profile: %v", got)
		}
		// Without openid: insufficient_scope; without a token, or with another kind: 401.
		g := o.flow("tools:call")
		other := redeem(a, g, approve(t, a, o.admin, g), nil).Expect(t, 200, nil)["access_token"].(string)
		r := a.Get("/v1/oauth/userinfo", "Authorization", "Bearer "+other)
		r.Expect(t, 403, map[string]any{"error": "insufficient_scope"})
		if !strings.Contains(r.Header.Get("WWW-Authenticate"), `error="insufficient_scope"`) {
			t.Fatalf("WWW-Authenticate %q", r.Header.Get("WWW-Authenticate"))
		}
		a.Get("/v1/oauth/userinfo").Expect(t, 401, map[string]any{"error": "invalid_request"})
		a.Get("/v1/oauth/userinfo", "Authorization", "Bearer "+o.admin.AccessToken).Expect(t, 401, map[string]any{"error": "invalid_token"})
		cc := a.PostForm("/v1/oauth/token", url.Values{"grant_type": {"client_credentials"}}, apptest.Basic(o.introspector.ID, o.introspector.Secret)).Expect(t, 200, nil)
		a.Get("/v1/oauth/userinfo", "Authorization", "Bearer "+cc["access_token"].(string)).Expect(t, 401, map[string]any{"error": "invalid_token"})
		// A revoked token (RFC 7009) and an ended grant stop at once.
		a.PostForm("/v1/oauth/revoke", url.Values{"token": {access}}, nil).Expect(t, 200, nil)
		a.Get("/v1/oauth/userinfo", "Authorization", "Bearer "+access).Expect(t, 401, map[string]any{"error": "invalid_token"})
	})
}

// browserGet sends a browser's GET carrying the session cookie of s (and any browser mark).
func browserGet(t *testing.T, a *apptest.App, path string, s *apptest.Session) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, a.Base+path, nil)
	if s != nil {
		req.AddCookie(&http.Cookie{Name: "sAccessToken", Value: s.AccessToken})
	}
	res, err := noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res
}

// prompt=none answers at once: a code when the browser's session may have one without a
// question, else the error that names the question.
func TestPromptNone(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		o := newOIDC(t, st, nil)
		a := o.a
		silent := func(s *apptest.Session, scope string) url.Values {
			f := o.flow(scope)
			f.extra.Set("prompt", "none")
			res := browserGet(t, a, "/oauth/authorize?"+f.query().Encode(), s)
			return backQuery(t, f, res.Header.Get("Location"))
		}
		if q := silent(nil, "openid"); q.Get("error") != "login_required" || q.Get("iss") == "" {
			t.Fatalf("no session: %v", q)
		}
		if q := silent(o.admin, "openid"); q.Get("error") != "consent_required" {
			t.Fatalf("no grant yet: %v", q)
		}
		f := o.flow("openid")
		approve(t, a, o.admin, f)
		q := silent(o.admin, "openid")
		if q.Get("code") == "" {
			t.Fatalf("a remembered grant: %v", q)
		}
		if q := silent(o.admin, "openid email"); q.Get("error") != "consent_required" {
			t.Fatalf("more than the grant holds: %v", q)
		}
		stranger := a.SignUp(t)
		if q := silent(stranger, "openid"); q.Get("error") != "access_denied" {
			t.Fatalf("a stranger to the project: %v", q)
		}
		g := o.flow("openid")
		g.extra.Set("prompt", "none login")
		if q := backQuery(t, g, authorize(t, a, g.query()).Header.Get("Location")); q.Get("error") != "invalid_request" {
			t.Fatalf("none with login: %v", q)
		}
	})
}

// max_age and prompt=login ask for a sign-in fresher than the person's: the consent page
// is refused (login_required) until they sign in again, in the same browser.
func TestFreshSignIn(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		o := newOIDC(t, st, nil, apptest.WithConfig(func(c *config.Config) { c.AccessTTL = 24 * time.Hour }))
		a := o.a
		a.Clock.Advance(10 * time.Minute)
		defer a.Clock.Advance(-10 * time.Minute)
		for _, p := range []url.Values{{"max_age": {"300"}}, {"prompt": {"login"}}} {
			f := o.flow("openid")
			for k, v := range p {
				f.extra[k] = v
			}
			id := requestOf(t, a, f)
			consentOf(a, o.admin, id).Expect(t, 403, map[string]any{"code": "login_required"})
			again := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signin", Body: map[string]any{"email": o.admin.Email, "password": o.admin.Password}}).Expect(t, 200, nil)
			fresh := &apptest.Session{AccessToken: again["session"].(map[string]any)["accessToken"].(string)}
			c := consentOf(a, fresh, id).Expect(t, 200, nil)
			code := backQuery(t, f, decideAs(a, fresh, id, map[string]any{"decision": "approve", "csrfToken": c["csrfToken"]}).Expect(t, 200, nil)["redirectTo"].(string)).Get("code")
			claims, _ := idTokenOf(t, a, redeem(a, f, code, nil).Expect(t, 200, nil)["id_token"].(string))
			if int64(claims["auth_time"].(float64)) != a.Clock.Now().Unix() {
				t.Fatalf("%v: auth_time %v, want the fresh sign-in's %d", p, claims["auth_time"], a.Clock.Now().Unix())
			}
		}
		f := o.flow("openid")
		f.extra.Set("max_age", "-1")
		if q := backQuery(t, f, authorize(t, a, f.query()).Header.Get("Location")); q.Get("error") != "invalid_request" {
			t.Fatalf("max_age -1: %v", q)
		}
	})
}

// RP-initiated logout: an id_token_hint of this browser's session signs it out, then back
// to the registered URI with state; nothing else signs anyone out or redirects elsewhere.
func TestRPInitiatedLogout(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		o := newOIDC(t, st, nil)
		a := o.a
		f := o.flow("openid")
		idt := redeem(a, f, approve(t, a, o.admin, f), nil).Expect(t, 200, nil)["id_token"].(string)
		me := func() int {
			return a.Get("/v1/auth-core/session/me", "Authorization", "Bearer "+o.admin.AccessToken).Status
		}

		res := browserGet(t, a, "/oauth/logout?"+url.Values{"id_token_hint": {idt}, "post_logout_redirect_uri": {"http://127.0.0.1/elsewhere"}}.Encode(), o.admin)
		if res.StatusCode != http.StatusBadRequest || me() != 200 {
			t.Fatalf("an unregistered post_logout_redirect_uri: %d, session %d", res.StatusCode, me())
		}
		res = browserGet(t, a, "/oauth/logout?"+url.Values{"client_id": {o.client}}.Encode(), o.admin)
		if res.StatusCode != http.StatusOK || me() != 200 {
			t.Fatalf("no hint: %d, session %d (nothing may be signed out)", res.StatusCode, me())
		}
		res = browserGet(t, a, "/oauth/logout?"+url.Values{"id_token_hint": {"x.y.z"}}.Encode(), o.admin)
		if res.StatusCode != http.StatusBadRequest {
			t.Fatalf("a forged hint: %d", res.StatusCode)
		}
		other := a.SignUp(t) // another browser's session is not this hint's
		browserGet(t, a, "/oauth/logout?"+url.Values{"id_token_hint": {idt}}.Encode(), other)
		if me() != 200 || a.Get("/v1/auth-core/session/me", "Authorization", "Bearer "+other.AccessToken).Status != 200 {
			t.Fatal("a hint signed out a session that is not its own")
		}
		res = browserGet(t, a, "/oauth/logout?"+url.Values{"id_token_hint": {idt}, "post_logout_redirect_uri": {"http://127.0.0.1/bye"}, "state": {"s1"}}.Encode(), o.admin)
		if res.StatusCode != http.StatusFound || res.Header.Get("Location") != "http://127.0.0.1/bye?state=s1" || me() != 401 {
			t.Fatalf("logout: %d to %q, session %d", res.StatusCode, res.Header.Get("Location"), me())
		}
	})
}

// A confidential client registered with a secret authenticates at the token endpoint,
// and gets a refresh token only with offline_access (SPEC §21).
func TestSecretClients(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		a := w.a
		reg := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/register", Body: map[string]any{
			"redirect_uris": []string{"https://rp.example/cb"}, "token_endpoint_auth_method": "client_secret_basic"}}).Expect(t, 201, nil)
		id, sec := reg["client_id"].(string), reg["client_secret"].(string)
		code := func(scope string) (*flow, string) {
			f := newFlow(id, "https://rp.example/cb")
			f.extra.Set("resource", w.mcp.URL)
			f.extra.Set("scope", scope)
			return f, approve(t, a, w.admin, f)
		}
		f, c := code("openid tools:call")
		redeem(a, f, c, nil).Expect(t, 401, map[string]any{"error": "invalid_client"})
		form := url.Values{"grant_type": {"authorization_code"}, "code": {c}, "redirect_uri": {f.redirect}, "code_verifier": {f.verifier}}
		a.PostForm("/v1/oauth/token", form, apptest.Basic(id, "ac_rcs_wrong")).Expect(t, 401, map[string]any{"error": "invalid_client"})
		got := a.PostForm("/v1/oauth/token", form, apptest.Basic(id, sec)).Expect(t, 200, nil)
		if got["refresh_token"] != nil || got["id_token"] == nil {
			t.Fatalf("without offline_access: %v", got)
		}
		f, c = code("openid offline_access tools:call")
		form = url.Values{"grant_type": {"authorization_code"}, "code": {c}, "redirect_uri": {f.redirect}, "code_verifier": {f.verifier}}
		got = a.PostForm("/v1/oauth/token", form, apptest.Basic(id, sec)).Expect(t, 200, nil)
		refresh := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {got["refresh_token"].(string)}}
		a.PostForm("/v1/oauth/token", url.Values{"grant_type": {"refresh_token"}, "client_id": {id}, "refresh_token": {got["refresh_token"].(string)}}, nil).
			Expect(t, 401, map[string]any{"error": "invalid_client"})
		a.PostForm("/v1/oauth/token", refresh, apptest.Basic(id, sec)).Expect(t, 200, nil)
		// RFC 7009 with the secret: the client can no longer authenticate.
		a.PostForm("/v1/oauth/revoke", url.Values{"token": {sec}}, nil).Expect(t, 200, nil)
		f, c = code("tools:call")
		a.PostForm("/v1/oauth/token", url.Values{"grant_type": {"authorization_code"}, "code": {c}, "redirect_uri": {f.redirect}, "code_verifier": {f.verifier}},
			apptest.Basic(id, sec)).Expect(t, 401, map[string]any{"error": "invalid_client"})
	})
}

// keyPair is a client's signing key and its public JWK.
type keyPair struct {
	signer jose.Signer
	public jose.JSONWebKey
}

func newKeyPair(t *testing.T, kid string) keyPair {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: priv}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", kid))
	if err != nil {
		t.Fatal(err)
	}
	return keyPair{signer: s, public: jose.JSONWebKey{Key: &priv.PublicKey, KeyID: kid, Algorithm: "ES256", Use: "sig"}}
}

// assertion signs a client assertion for clientID; change edits its claims.
func (k keyPair) assertion(t *testing.T, clientID, aud string, now time.Time, change func(map[string]any)) string {
	t.Helper()
	c := map[string]any{"iss": clientID, "sub": clientID, "aud": aud, "iat": now.Unix(), "exp": now.Add(2 * time.Minute).Unix(),
		"jti": "jti-" + base64.RawURLEncoding.EncodeToString([]byte(time.Now().String()+t.Name()))}
	if change != nil {
		change(c)
	}
	s, err := jwt.Signed(k.signer).Claims(c).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (k keyPair) jwks() map[string]any {
	raw, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{k.public}})
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return m
}

// private_key_jwt (RFC 7523 §2.2, SPEC §21): an assertion signed by a key the client
// registered, for this server, short-lived, used once on every replica.
func TestPrivateKeyJWTClients(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		a := w.a
		key := newKeyPair(t, "k1")
		id := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/register", Body: map[string]any{
			"redirect_uris": []string{"https://rp.example/cb"}, "token_endpoint_auth_method": "private_key_jwt", "jwks": key.jwks()}}).
			Expect(t, 201, map[string]any{"token_endpoint_auth_method": "private_key_jwt"})["client_id"].(string)
		iss := w.issuer(t)
		tokenURL := iss + "/v1/oauth/token"
		exchange := func(assertion string) *apptest.Response {
			f := newFlow(id, "https://rp.example/cb")
			f.extra.Set("resource", w.mcp.URL)
			c := approve(t, a, w.admin, f)
			return a.PostForm("/v1/oauth/token", url.Values{"grant_type": {"authorization_code"}, "code": {c}, "redirect_uri": {f.redirect},
				"code_verifier": {f.verifier}, "client_assertion_type": {"urn:ietf:params:oauth:client-assertion-type:jwt-bearer"},
				"client_assertion": {assertion}}, nil)
		}
		now := a.Clock.Now()
		good := key.assertion(t, id, tokenURL, now, nil)
		exchange(good).Expect(t, 200, nil)
		refused := func(name, assertion, why string) {
			t.Run(name, func(t *testing.T) {
				got := exchange(assertion).Expect(t, 401, map[string]any{"error": "invalid_client"})
				if !strings.Contains(got["error_description"].(string), why) {
					t.Fatalf("error_description %q, want it to say %q", got["error_description"], why)
				}
			})
		}
		refused("replayed", good, "used already")
		refused("for another audience", key.assertion(t, id, "https://other.example/token", now, nil), "aud")
		refused("expired", key.assertion(t, id, iss, now, func(c map[string]any) { c["exp"] = now.Add(-time.Minute).Unix() }), "expired")
		refused("living too long", key.assertion(t, id, iss, now, func(c map[string]any) { c["exp"] = now.Add(61 * time.Minute).Unix() }), "more than 1h0m0s away")
		refused("without a jti", key.assertion(t, id, iss, now, func(c map[string]any) { delete(c, "jti") }), "jti")
		refused("by an unknown kid", newKeyPair(t, "k2").assertion(t, id, iss, now, nil), "kid")
		refused("by another key under the same kid", newKeyPair(t, "k1").assertion(t, id, iss, now, nil), "signature")
		refused("for another client", key.assertion(t, "dcr_someone", iss, now, nil), "")
		t.Run("a secret is no key", func(t *testing.T) {
			f := newFlow(id, "https://rp.example/cb")
			f.extra.Set("resource", w.mcp.URL)
			c := approve(t, a, w.admin, f)
			a.PostForm("/v1/oauth/token", url.Values{"grant_type": {"authorization_code"}, "code": {c}, "redirect_uri": {f.redirect}, "code_verifier": {f.verifier}},
				apptest.Basic(id, "ac_rcs_x")).Expect(t, 401, map[string]any{"error": "invalid_client"})
			redeem(a, f, c, nil).Expect(t, 401, map[string]any{"error": "invalid_client"}) // nor is nothing
		})
		if st.Name == "postgres" {
			t.Run("replayed on another replica", func(t *testing.T) {
				other := apptest.StartURL(t, st.Name, st.URL(t)) // the same database: another replica
				once := key.assertion(t, id, tokenURL, now, nil)
				exchange(once).Expect(t, 200, nil)
				got := other.PostForm("/v1/oauth/token", url.Values{"grant_type": {"client_credentials"}, "client_id": {id},
					"client_assertion_type": {"urn:ietf:params:oauth:client-assertion-type:jwt-bearer"}, "client_assertion": {once}}, nil)
				got.Expect(t, 401, map[string]any{"error": "invalid_client"})
			})
		}
	})
	t.Run("a jwks_uri on a private address", func(t *testing.T) {
		w := newWorld(t, apptest.Stores(t)[0], apptest.WithConfig(func(c *config.Config) { c.WebhookAllowHTTP = false }))
		id := w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/register", Body: map[string]any{
			"redirect_uris": []string{"https://rp.example/cb"}, "token_endpoint_auth_method": "private_key_jwt", "jwks_uri": "https://10.1.2.3/jwks.json"}}).
			Expect(t, 201, nil)["client_id"].(string)
		got := w.a.PostForm("/v1/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"ac_gr_x"},
			"client_assertion_type": {"urn:ietf:params:oauth:client-assertion-type:jwt-bearer"},
			"client_assertion":      {newKeyPair(t, "k").assertion(t, id, w.issuer(t), w.a.Clock.Now(), nil)}}, nil).Expect(t, 401, map[string]any{"error": "invalid_client"})
		if !strings.Contains(got["error_description"].(string), "address") {
			t.Fatalf("error_description %q", got["error_description"])
		}
	})
}

// A client metadata document may declare private_key_jwt with a jwks_uri (the largest MCP
// hosts' documents do): the document and the key set are fetched under the outbound
// rules, and the code is redeemed with an assertion.
func TestMetadataDocumentWithPrivateKeyJWT(t *testing.T) {
	w := newWorld(t, apptest.Stores(t)[0])
	key := newKeyPair(t, "host-1")
	jwks, _ := json.Marshal(key.jwks())
	w.serve("/jwks.json", jwks)
	id := w.cimd.URL + "/client.json"
	w.cimdDoc.Store(&map[string]any{"client_id": id, "client_name": "Confidential Host", "redirect_uris": []string{"http://127.0.0.1/cb"},
		"token_endpoint_auth_method": "private_key_jwt", "jwks_uri": w.cimd.URL + "/jwks.json"})
	f := newFlow(id, "http://127.0.0.1/cb")
	f.extra.Set("resource", w.mcp.URL)
	c := approve(t, w.a, w.admin, f)
	redeem(w.a, f, c, nil).Expect(t, 401, map[string]any{"error": "invalid_client"}) // a code is not enough
	f2 := newFlow(id, "http://127.0.0.1/cb")
	f2.extra.Set("resource", w.mcp.URL)
	c2 := approve(t, w.a, w.admin, f2)
	w.a.PostForm("/v1/oauth/token", url.Values{"grant_type": {"authorization_code"}, "client_id": {id}, "code": {c2}, "redirect_uri": {f2.redirect},
		"code_verifier": {f2.verifier}, "client_assertion_type": {"urn:ietf:params:oauth:client-assertion-type:jwt-bearer"},
		"client_assertion": {key.assertion(t, id, w.issuer(t), w.a.Clock.Now(), nil)}}, nil).Expect(t, 200, map[string]any{"token_type": "Bearer"})
}

// A machine client (an auth badge) may be granted agent scopes for the project's
// resources, and authenticate by a key it registered (SPEC §21): client credentials with
// resource and scope=mcp:tools yield exactly that.
func TestMachineClients(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		a := w.a
		mcp := w.mcp.URL + "/machine"
		a.RegisterResource(t, w.admin, w.project, mcp, []string{"mcp:tools", "mcp:admin"})
		cl := a.MintAuthClient(t, w.admin, w.project, map[string]any{"role": "developer"})
		base := "/v1/projects/" + w.project + "/service-badges/" + cl.BadgeID
		cc := func(form url.Values, header map[string]string) *apptest.Response {
			form.Set("grant_type", "client_credentials")
			return a.PostForm("/v1/oauth/token", form, header)
		}
		cc(url.Values{"resource": {mcp}, "scope": {"mcp:tools"}}, apptest.Basic(cl.ID, cl.Secret)).Expect(t, 400, map[string]any{"error": "invalid_scope"})
		for name, body := range map[string]any{"no body": nil, "not a list": map[string]any{"scopes": "mcp:tools"},
			"a role": map[string]any{"scopes": []string{"admin"}}, "bad grammar": map[string]any{"scopes": []string{"MCP tools"}}} {
			t.Run("scopes: "+name, func(t *testing.T) {
				a.Do(apptest.Req{Method: http.MethodPut, Path: base + "/scopes", Body: body, Header: w.admin.Bearer()}).Expect(t, 400, map[string]any{"code": "validation_failed"})
			})
		}
		a.Do(apptest.Req{Method: http.MethodPut, Path: base + "/scopes", Body: map[string]any{"scopes": []string{"mcp:tools"}}, Header: w.admin.Bearer()}).
			Expect(t, 200, map[string]any{"scopes": []any{"mcp:tools"}})
		got := cc(url.Values{"resource": {mcp}, "scope": {"mcp:tools"}}, apptest.Basic(cl.ID, cl.Secret)).Expect(t, 200, map[string]any{"scope": "mcp:tools"})
		claims := a.VerifyAccessToken(t, got["access_token"].(string), mcp)
		if claims["scope"] != "mcp:tools" || claims["role"] != nil || claims["client_id"] != cl.ID {
			t.Fatalf("claims %v", claims)
		}
		cc(url.Values{"resource": {mcp}, "scope": {"mcp:admin"}}, apptest.Basic(cl.ID, cl.Secret)).Expect(t, 400, map[string]any{"error": "invalid_scope"})
		cc(url.Values{"scope": {"developer"}}, apptest.Basic(cl.ID, cl.Secret)).Expect(t, 200, map[string]any{"scope": "developer"}) // roles as before
		// A narrower policy narrows what it may ask for, without a new grant.
		a.Do(apptest.Req{Method: http.MethodPut, Path: "/v1/projects/" + w.project + "/policy", Header: w.admin.Bearer(), Body: map[string]any{"allowedScopes": []string{"files:*"}}}).Expect(t, 200, nil)
		cc(url.Values{"resource": {mcp}, "scope": {"mcp:tools"}}, apptest.Basic(cl.ID, cl.Secret)).Expect(t, 400, map[string]any{"error": "invalid_scope"})
		a.Do(apptest.Req{Method: http.MethodPut, Path: base + "/scopes", Body: map[string]any{"scopes": []string{"mcp:tools"}}, Header: w.admin.Bearer()}).
			Expect(t, 400, map[string]any{"code": "validation_failed"})
		a.Do(apptest.Req{Method: http.MethodPut, Path: "/v1/projects/" + w.project + "/policy", Header: w.admin.Bearer(), Body: map[string]any{}}).Expect(t, 200, nil)

		// A key instead of the secret.
		key := newKeyPair(t, "m1")
		a.Do(apptest.Req{Method: http.MethodPost, Path: base + "/keys", Body: map[string]any{"jwk": key.public}, Header: w.admin.Bearer()}).
			Expect(t, 201, map[string]any{"kid": "m1"})
		a.Do(apptest.Req{Method: http.MethodPost, Path: base + "/keys", Body: map[string]any{"jwk": key.public}, Header: w.admin.Bearer()}).Expect(t, 409, nil)
		priv, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		a.Do(apptest.Req{Method: http.MethodPost, Path: base + "/keys", Body: map[string]any{"jwk": jose.JSONWebKey{Key: priv, KeyID: "private"}}, Header: w.admin.Bearer()}).
			Expect(t, 400, map[string]any{"code": "validation_failed"})
		iss := w.issuer(t)
		assert := func(aud string) url.Values {
			return url.Values{"resource": {mcp}, "scope": {"mcp:tools"}, "client_assertion_type": {"urn:ietf:params:oauth:client-assertion-type:jwt-bearer"},
				"client_assertion": {key.assertion(t, cl.ID, aud, a.Clock.Now(), nil)}}
		}
		cc(assert(iss+"/v1/oauth/token"), nil).Expect(t, 200, map[string]any{"scope": "mcp:tools"})
		a.PostForm("/v1/oauth/introspect", url.Values{"token": {got["access_token"].(string)}, "client_assertion_type": {"urn:ietf:params:oauth:client-assertion-type:jwt-bearer"},
			"client_assertion": {key.assertion(t, cl.ID, iss+"/v1/oauth/introspect", a.Clock.Now(), nil)}}, nil).Expect(t, 200, map[string]any{"active": true})
		a.Do(apptest.Req{Method: http.MethodDelete, Path: base + "/keys/m1", Header: w.admin.Bearer()}).Expect(t, 200, map[string]any{"ok": true})
		cc(assert(iss), nil).Expect(t, 401, map[string]any{"error": "invalid_client"})
		a.Do(apptest.Req{Method: http.MethodDelete, Path: base + "/keys/m1", Header: w.admin.Bearer()}).Expect(t, 404, nil)
		// Another project's admin finds no such badge.
		other := a.SignUp(t)
		prj := a.CreateProject(t, other)
		a.Do(apptest.Req{Method: http.MethodPut, Path: "/v1/projects/" + prj + "/service-badges/" + cl.BadgeID + "/scopes", Body: map[string]any{"scopes": []string{"x:y"}}, Header: other.Bearer()}).
			Expect(t, 404, nil)
	})
}

// Scope step-up (SPEC §21): a request for more than a remembered grant holds asks only
// about the added scopes, and widens the grant.
func TestScopeStepUp(t *testing.T) {
	o := newOIDC(t, apptest.Stores(t)[0], nil)
	a := o.a
	f := o.flow("openid")
	approve(t, a, o.admin, f)
	g := o.flow("openid tools:call")
	id := requestOf(t, a, g)
	c := consentOf(a, o.admin, id).Expect(t, 200, map[string]any{"remembered": false, "grantedScopes": []any{"openid"}})
	to := decideAs(a, o.admin, id, map[string]any{"decision": "approve", "csrfToken": c["csrfToken"]}).Expect(t, 200, nil)["redirectTo"].(string)
	redeem(a, g, backQuery(t, g, to).Get("code"), nil).Expect(t, 200, map[string]any{"scope": "openid tools:call"})
	grants := a.Get("/v1/auth-core/oauth/grants", "Authorization", "Bearer "+o.admin.AccessToken).Expect(t, 200, nil)["grants"].([]any)
	if len(grants) != 1 || !slices.Equal(toStrings(grants[0].(map[string]any)["scopes"]), []string{"openid", "tools:call"}) {
		t.Fatalf("grants %v", grants)
	}
}

// The console, asked by max_age for a sign-in fresher than the person's, signs them in
// again in the same browser, then asks the question; the code carries the new sign-in.
func TestConsoleAsksForAFreshSignIn(t *testing.T) {
	o := newOIDC(t, apptest.Stores(t)[0], nil)
	landed := make(chan url.Values, 2)
	cb := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/cb" {
			landed <- r.URL.Query()
		}
	}))
	t.Cleanup(cb.Close)
	client := o.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/register", Body: map[string]any{"client_name": "RP", "redirect_uris": []string{cb.URL + "/cb"}}}).
		Expect(t, 201, nil)["client_id"].(string)
	flowOf := func() *flow {
		f := newFlow(client, cb.URL+"/cb")
		f.extra.Set("scope", "openid")
		f.extra.Set("resource", o.mcp.URL)
		f.extra.Set("max_age", "300")
		f.extra.Set("login_hint", o.admin.Email)
		return f
	}
	p := browser.NewPage(t, browser.Tab(t, nil))
	p.Do(chromedp.Navigate(o.a.Base+"/oauth/authorize?"+flowOf().query().Encode()), browser.WaitFor("button", "Sign in"))
	if got := p.Eval(`document.querySelector('input[type=email]').value`); got != o.admin.Email {
		t.Fatalf("login_hint filled in %q", got)
	}
	p.Do(browser.TypeInto("textbox", "Password", o.admin.Password), browser.Click("button", "Sign in"), browser.WaitFor("button", "Approve"))

	o.a.Clock.Advance(10 * time.Minute)
	defer o.a.Clock.Advance(-10 * time.Minute)
	f := flowOf()
	p.Do(chromedp.Navigate(o.a.Base+"/oauth/authorize?"+f.query().Encode()),
		chromedp.WaitVisible("sign in again", chromedp.ByFunc(browser.Text("The application asks you to sign in again before you decide."))))
	p.Shot("sign-in-again")
	p.Do(browser.TypeInto("textbox", "Password", o.admin.Password), browser.Click("button", "Sign in"), browser.WaitFor("button", "Approve"), browser.Click("button", "Approve"))
	var q url.Values
	select {
	case q = <-landed:
	case <-time.After(15 * time.Second):
		t.Fatal("the browser did not come back with a code")
	}
	claims, _ := idTokenOf(t, o.a, redeem(o.a, f, q.Get("code"), nil).Expect(t, 200, nil)["id_token"].(string))
	if int64(claims["auth_time"].(float64)) != o.a.Clock.Now().Unix() {
		t.Fatalf("auth_time %v, want the fresh sign-in's %d", claims["auth_time"], o.a.Clock.Now().Unix())
	}
}
