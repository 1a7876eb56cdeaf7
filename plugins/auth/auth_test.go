package auth_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/authcore/authcore/internal/apptest"
)

func TestMain(m *testing.M) { apptest.Main(m) }

type client struct {
	ID, Secret, TokenURL, BadgeID, ProjectID string
}

func mint(t *testing.T, a *apptest.App, admin *apptest.Session, prj string, extra map[string]any) client {
	body := map[string]any{"name": "m2m", "product": "auth"}
	for k, v := range extra {
		body[k] = v
	}
	got := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + prj + "/service-badges", Body: body, Header: admin.Bearer()}).Expect(t, 201, map[string]any{"s3": nil})
	au := got["auth"].(map[string]any)
	return client{ID: au["clientId"].(string), Secret: au["clientSecret"].(string), TokenURL: au["tokenUrl"].(string),
		BadgeID: got["badge"].(map[string]any)["id"].(string), ProjectID: prj}
}

func setup(t *testing.T, st apptest.Store) (*apptest.App, *apptest.Session, string) {
	a := apptest.Start(t, st)
	admin := a.SignUp(t)
	return a, admin, a.CreateProject(t, admin)
}

// verifyJWT checks a token the way a resource server would: against the JWKS fetched
// over HTTP, with go-jose.
func verifyJWT(t *testing.T, a *apptest.App, token string) map[string]any {
	t.Helper()
	return verifyJWTFor(t, a, token, "authcore")
}

// verifyJWTFor is verifyJWT for a token meant for audience.
func verifyJWTFor(t *testing.T, a *apptest.App, token, audience string) map[string]any {
	t.Helper()
	res, err := http.Get(a.Base + "/.well-known/jwks.json")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var set jose.JSONWebKeySet
	if err := json.NewDecoder(res.Body).Decode(&set); err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.ParseSigned(token, []jose.SignatureAlgorithm{jose.EdDSA})
	if err != nil {
		t.Fatal(err)
	}
	keys := set.Key(tok.Headers[0].KeyID)
	if len(keys) != 1 {
		t.Fatalf("kid %q not in the JWKS", tok.Headers[0].KeyID)
	}
	// RFC 9068: an OAuth access token says so in its header, so no verifier can take it
	// for another kind of JWT signed by the same keys.
	if typ := tok.Headers[0].ExtraHeaders["typ"]; typ != "at+jwt" {
		t.Fatalf("typ %v, want at+jwt", typ)
	}
	var std jwt.Claims
	var all map[string]any
	if err := tok.Claims(keys[0].Key, &std, &all); err != nil {
		t.Fatalf("signature does not verify: %v", err)
	}
	// iss is the URL the request reached (no AUTHCORE_PUBLIC_URL here); nbf = iat, so a
	// verifier with clock skew accepts a fresh token.
	if std.NotBefore == nil || std.IssuedAt == nil || *std.NotBefore != *std.IssuedAt {
		t.Fatalf("nbf %v, iat %v", std.NotBefore, std.IssuedAt)
	}
	if err := std.ValidateWithLeeway(jwt.Expected{Issuer: a.Base, AnyAudience: jwt.Audience{audience}, Time: a.Clock.Now()}, 0); err != nil {
		t.Fatal(err)
	}
	return all
}

func TestClientCredentialsWithTheStockClient(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a, admin, prj := setup(t, st)
		c := mint(t, a, admin, prj, map[string]any{"role": "developer"})
		if c.TokenURL != a.Base+"/v1/oauth/token" || !strings.HasPrefix(c.ID, "cli_") || !strings.HasPrefix(c.Secret, "ac_cs_") {
			t.Fatalf("%+v", c)
		}
		for name, style := range map[string]oauth2.AuthStyle{"client_secret_basic": oauth2.AuthStyleInHeader, "client_secret_post": oauth2.AuthStyleInParams} {
			t.Run(name, func(t *testing.T) {
				cfg := clientcredentials.Config{ClientID: c.ID, ClientSecret: c.Secret, TokenURL: c.TokenURL, AuthStyle: style}
				tok, err := cfg.Token(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if tok.TokenType != "Bearer" || tok.Expiry.IsZero() {
					t.Fatalf("%+v", tok)
				}
				claims := verifyJWT(t, a, tok.AccessToken)
				if claims["sub"] != c.ID || claims["client_id"] != c.ID || claims["project_id"] != prj || claims["role"] != "developer" || claims["jti"] == "" || claims["scope"] != "developer" {
					t.Fatalf("claims %v", claims)
				}
				if ttl := claims["exp"].(float64) - claims["iat"].(float64); ttl != 3600 {
					t.Fatalf("ttl %v", ttl)
				}
			})
		}
		t.Run("a narrower scope is granted", func(t *testing.T) {
			cfg := clientcredentials.Config{ClientID: c.ID, ClientSecret: c.Secret, TokenURL: c.TokenURL, Scopes: []string{"viewer"}}
			tok, err := cfg.Token(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			claims := verifyJWT(t, a, tok.AccessToken)
			if claims["scope"] != "viewer" || tok.Extra("scope") != "viewer" {
				t.Fatal("scope")
			}
			// The role claim is the role granted, not the badge's (SPEC §9).
			if claims["role"] != "viewer" {
				t.Fatalf("role %v after down-scoping to viewer", claims["role"])
			}
		})
	})
}

func post(a *apptest.App, form url.Values, header map[string]string) *apptest.Response {
	h := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	for k, v := range header {
		h[k] = v
	}
	return a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/token", Body: form.Encode(), Header: h})
}

func basic(id, secret string) map[string]string {
	return map[string]string{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(id)+":"+url.QueryEscape(secret)))}
}

func TestTokenErrors(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a, admin, prj := setup(t, st)
		c := mint(t, a, admin, prj, map[string]any{"role": "developer"})
		cc := url.Values{"grant_type": {"client_credentials"}}
		expect := func(t *testing.T, r *apptest.Response, status int, code string) {
			t.Helper()
			r.Expect(t, status, map[string]any{"error": code})
			if r.JSON(t)["error_description"] == "" || r.Header.Get("Cache-Control") != "no-store" {
				t.Fatalf("%s %v", r.Body, r.Header)
			}
			if code == "invalid_client" && !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Basic") {
				t.Fatal("no WWW-Authenticate challenge")
			}
		}
		t.Run("wrong secret by basic: 401 invalid_client with a challenge", func(t *testing.T) {
			other := mint(t, a, admin, prj, nil)
			expect(t, post(a, cc, basic(c.ID, other.Secret)), 401, "invalid_client")
		})
		t.Run("unknown client by post: 401 invalid_client", func(t *testing.T) {
			expect(t, post(a, url.Values{"grant_type": {"client_credentials"}, "client_id": {"cli_nope"}, "client_secret": {c.Secret}}, nil), 401, "invalid_client")
		})
		t.Run("no client authentication: 401 invalid_client", func(t *testing.T) {
			expect(t, post(a, cc, nil), 401, "invalid_client")
		})
		t.Run("missing grant_type: 400 invalid_request", func(t *testing.T) {
			expect(t, post(a, url.Values{}, basic(c.ID, c.Secret)), 400, "invalid_request")
		})
		t.Run("password grant: 400 unsupported_grant_type", func(t *testing.T) {
			expect(t, post(a, url.Values{"grant_type": {"password"}}, basic(c.ID, c.Secret)), 400, "unsupported_grant_type")
		})
		t.Run("scope above the badge's role: 400 invalid_scope", func(t *testing.T) {
			expect(t, post(a, url.Values{"grant_type": {"client_credentials"}, "scope": {"admin"}}, basic(c.ID, c.Secret)), 400, "invalid_scope")
			expect(t, post(a, url.Values{"grant_type": {"client_credentials"}, "scope": {"root"}}, basic(c.ID, c.Secret)), 400, "invalid_scope")
		})
		t.Run("two authentication methods: 400 invalid_request", func(t *testing.T) {
			expect(t, post(a, url.Values{"grant_type": {"client_credentials"}, "client_secret": {c.Secret}}, basic(c.ID, c.Secret)), 400, "invalid_request")
		})
		t.Run("a repeated parameter: 400 invalid_request", func(t *testing.T) {
			expect(t, post(a, url.Values{"grant_type": {"client_credentials", "client_credentials"}}, basic(c.ID, c.Secret)), 400, "invalid_request")
		})
		t.Run("a JSON body: 400 invalid_request", func(t *testing.T) {
			r := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/token", Body: map[string]any{"grant_type": "client_credentials"}, Header: basic(c.ID, c.Secret)})
			expect(t, r, 400, "invalid_request")
		})
	})
}

func TestRevokedOrExpiredBadgeGetsNoToken(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a, admin, prj := setup(t, st)
		cc := url.Values{"grant_type": {"client_credentials"}}
		c := mint(t, a, admin, prj, nil)
		post(a, cc, basic(c.ID, c.Secret)).Expect(t, 200, nil)
		a.Do(apptest.Req{Method: http.MethodDelete, Path: "/v1/projects/" + prj + "/service-badges/" + c.BadgeID, Header: admin.Bearer()}).Expect(t, 200, nil)
		post(a, cc, basic(c.ID, c.Secret)).Expect(t, 401, map[string]any{"error": "invalid_client"})

		e := mint(t, a, admin, prj, map[string]any{"expiresInDays": 1})
		a.Clock.Advance(24*time.Hour - 30*time.Minute)
		got := post(a, cc, basic(e.ID, e.Secret)).Expect(t, 200, nil)
		if got["expires_in"].(float64) > 30*60 {
			t.Fatalf("token outlives its badge: expires_in %v", got["expires_in"])
		}
		a.Clock.Advance(30 * time.Minute)
		post(a, cc, basic(e.ID, e.Secret)).Expect(t, 401, map[string]any{"error": "invalid_client"})
	})
}

func TestClientSecretNeverStored(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a, admin, prj := setup(t, st)
		c := mint(t, a, admin, prj, nil)
		post(a, url.Values{"grant_type": {"client_credentials"}}, basic(c.ID, c.Secret)).Expect(t, 200, nil)
		db, logs := a.DumpDB(t), a.Logs.String()
		if !strings.Contains(db, c.ID) {
			t.Fatal("scan sees nothing")
		}
		if strings.Contains(db, c.Secret) || strings.Contains(logs, c.Secret) || strings.Contains(db, c.Secret[6:38]) {
			t.Fatal("client secret stored or logged")
		}
	})
}
