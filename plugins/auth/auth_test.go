package auth_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/authcore/authcore/internal/apptest"
)

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

// SPEC §21, §29: an auth badge takes its agent scopes at mint as well as later, checked as
// the scopes route checks them: bad ones are refused with the route's error and nothing
// is minted; good ones are the client's from its first token, and audited.
func TestScopesAtMint(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a, admin, prj := setup(t, st)
		mcp := "https://mcp.example.com/" + strings.ToLower(prj) + "/mcp"
		a.RegisterResource(t, admin, prj, mcp, nil)
		c := mint(t, a, admin, prj, map[string]any{"scopes": []string{"mcp:tools", "files:read", "mcp:tools"}})
		got := post(a, url.Values{"grant_type": {"client_credentials"}, "resource": {mcp}, "scope": {"mcp:tools"}}, basic(c.ID, c.Secret)).
			Expect(t, 200, map[string]any{"scope": "mcp:tools"})
		if claims := a.VerifyAccessToken(t, got["access_token"].(string), mcp); claims["scope"] != "mcp:tools" || claims["client_id"] != c.ID {
			t.Fatalf("claims %v", claims)
		}
		post(a, url.Values{"grant_type": {"client_credentials"}, "resource": {mcp}, "scope": {"mcp:admin"}}, basic(c.ID, c.Secret)).
			Expect(t, 400, map[string]any{"error": "invalid_scope"})
		events := a.Do(apptest.Req{Path: "/v1/projects/" + prj + "/audit?limit=50", Header: admin.Bearer()}).Expect(t, 200, nil)["events"].([]any)
		audited := false
		for _, e := range events {
			ev := e.(map[string]any)
			md := ev["metadata"].(map[string]any)
			if ev["action"] == "service_badge.create" && md["badgeId"] == c.BadgeID {
				scopes, _ := md["scopes"].([]any)
				audited = len(scopes) == 2 && scopes[0] == "files:read" && scopes[1] == "mcp:tools"
			}
		}
		if !audited {
			t.Fatalf("the create's audit record does not name the scopes granted: %v", events)
		}
		// Without scopes, as before: none.
		plain := mint(t, a, admin, prj, nil)
		post(a, url.Values{"grant_type": {"client_credentials"}, "resource": {mcp}, "scope": {"mcp:tools"}}, basic(plain.ID, plain.Secret)).
			Expect(t, 400, map[string]any{"error": "invalid_scope"})

		count := func() int {
			return len(a.Do(apptest.Req{Path: "/v1/projects/" + prj + "/service-badges?product=auth", Header: admin.Bearer()}).Expect(t, 200, nil)["badges"].([]any))
		}
		before := count()
		a.Do(apptest.Req{Method: http.MethodPut, Path: "/v1/projects/" + prj + "/policy", Header: admin.Bearer(), Body: map[string]any{"allowedScopes": []string{"files:*"}}}).Expect(t, 200, nil)
		tooMany := make([]string, 33)
		for i := range tooMany {
			tooMany[i] = "files:r" + strings.Repeat("x", i)
		}
		for name, scopes := range map[string]any{"null": nil, "not a list": "files:read", "a role": []string{"admin"}, "bad grammar": []string{"Files read"},
			"not strings": []any{1}, "more than 32": tooMany, "beyond the policy": []string{"mcp:tools"}} {
			t.Run(name, func(t *testing.T) {
				route := a.Do(apptest.Req{Method: http.MethodPut, Path: "/v1/projects/" + prj + "/service-badges/" + plain.BadgeID + "/scopes",
					Body: map[string]any{"scopes": scopes}, Header: admin.Bearer()}).Expect(t, 400, map[string]any{"code": "validation_failed"})
				minted := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + prj + "/service-badges",
					Body: map[string]any{"name": "m2m", "product": "auth", "scopes": scopes}, Header: admin.Bearer()}).Expect(t, 400, map[string]any{"code": "validation_failed"})
				if fmt.Sprint(minted) != fmt.Sprint(route) {
					t.Fatalf("mint answers %v, the scopes route %v", minted, route)
				}
			})
		}
		if n := count(); n != before {
			t.Fatalf("%d auth badges after refused mints, want %d", n, before)
		}
	})
}
