package oauth_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/authcore/authcore/internal/apptest"
)

const (
	grantExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
	accessType    = "urn:ietf:params:oauth:token-type:access_token"
)

// agent mints an AI agent token with scopes and ttlHours; it returns the secret and the id.
func agent(t *testing.T, a *apptest.App, admin *apptest.Session, prj string, scopes []string, ttlHours float64) (string, string) {
	if scopes == nil {
		scopes = []string{}
	}
	got := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/projects/" + prj + "/ai/agents",
		Body: map[string]any{"agentName": "crawler", "scopes": scopes, "ttlHours": ttlHours}, Header: admin.Bearer()}).Expect(t, 200, nil)
	return got["plaintext"].(string), got["agent"].(map[string]any)["id"].(string)
}

// exchanger is a stock golang.org/x/oauth2 client doing RFC 8693: the client-credentials
// flow with grant_type overridden and no client authentication.
func exchanger(a *apptest.App, subject string, params url.Values) *clientcredentials.Config {
	p := url.Values{"grant_type": {grantExchange}, "subject_token": {subject}, "subject_token_type": {accessType}}
	for k, v := range params {
		p[k] = v
	}
	return &clientcredentials.Config{TokenURL: a.Base + "/v1/oauth/token", AuthStyle: oauth2.AuthStyleInParams, EndpointParams: p}
}

func TestTokenExchange(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a, admin, prj := setup(t, st)
		secret, tokenID := agent(t, a, admin, prj, []string{"files:*", "db:read"}, 720)
		resource := "https://mcp.example.com/files/" + prj
		api := "https://api.example.com/" + prj
		a.RegisterResource(t, admin, prj, resource, nil)
		a.RegisterResource(t, admin, prj, api, nil)

		t.Run("a stock client exchanges an agent token for an audience-bound JWT", func(t *testing.T) {
			tok, err := exchanger(a, secret, url.Values{"resource": {resource}, "scope": {"files:read"}}).Token(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if tok.TokenType != "Bearer" || tok.Extra("issued_token_type") != accessType || tok.Extra("scope") != "files:read" {
				t.Fatalf("%+v", tok)
			}
			c := verifyJWTFor(t, a, tok.AccessToken, resource)
			if c["sub"] != tokenID || c["client_id"] != tokenID || c["scope"] != "files:read" || c["project_id"] != prj || c["agent_name"] != "crawler" || c["jti"] == "" {
				t.Fatalf("claims %v", c)
			}
			if ttl := c["exp"].(float64) - c["iat"].(float64); ttl != 900 {
				t.Fatalf("lifetime %v s, want 900", ttl)
			}
		})
		t.Run("no scope asked: the agent token's scopes; no resource: the issuer", func(t *testing.T) {
			tok, err := exchanger(a, secret, nil).Token(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if c := verifyJWTFor(t, a, tok.AccessToken, a.Base); c["scope"] != "files:* db:read" {
				t.Fatalf("claims %v", c)
			}
		})
		t.Run("several resources are several audiences", func(t *testing.T) {
			r := post(a, url.Values{"grant_type": {grantExchange}, "subject_token": {secret}, "subject_token_type": {accessType},
				"resource": {resource, api}}, nil).Expect(t, 200, nil)
			verifyJWTFor(t, a, r["access_token"].(string), api)
		})

		form := func(edit func(url.Values)) url.Values {
			f := url.Values{"grant_type": {grantExchange}, "subject_token": {secret}, "subject_token_type": {accessType}}
			edit(f)
			return f
		}
		revoked, revokedID := agent(t, a, admin, prj, nil, 720)
		a.Do(apptest.Req{Method: http.MethodDelete, Path: "/v1/auth-core/projects/" + prj + "/ai/agents/" + revokedID, Header: admin.Bearer()}).Expect(t, 200, nil)
		cases := []struct {
			name, code string
			form       url.Values
		}{
			{"no subject_token", "invalid_request", form(func(f url.Values) { f.Del("subject_token") })},
			{"wrong subject_token_type", "invalid_request", form(func(f url.Values) { f.Set("subject_token_type", "urn:ietf:params:oauth:token-type:jwt") })},
			{"a repeated scope", "invalid_request", form(func(f url.Values) { f["scope"] = []string{"db:read", "db:read"} })},
			{"an unknown agent token", "invalid_grant", form(func(f url.Values) { f.Set("subject_token", "ac_ai_"+strings.Repeat("0", 38)) })},
			{"a revoked agent token", "invalid_grant", form(func(f url.Values) { f.Set("subject_token", revoked) })},
			{"not an agent token", "invalid_grant", form(func(f url.Values) { f.Set("subject_token", "hello") })},
			{"a scope the token does not cover", "invalid_scope", form(func(f url.Values) { f.Set("scope", "db:write") })},
			{"a wildcard the token does not hold", "invalid_scope", form(func(f url.Values) { f.Set("scope", "db:*") })},
			{"a relative resource", "invalid_target", form(func(f url.Values) { f.Set("resource", "/files") })},
			{"a resource with a fragment", "invalid_target", form(func(f url.Values) { f.Set("resource", "https://x.example.com/#frag") })},
			{"an unregistered resource", "invalid_target", form(func(f url.Values) { f.Set("resource", "https://unregistered.example.com/"+prj) })},
			{"an unregistered audience", "invalid_target", form(func(f url.Values) { f.Set("audience", "https://unregistered.example.com/"+prj) })},
			{"a scope outside the grammar", "invalid_scope", form(func(f url.Values) { f.Set("scope", "files:read,admin:all") })},
		}
		for _, tc := range cases {
			t.Run(tc.name+": 400 "+tc.code, func(t *testing.T) {
				r := post(a, tc.form, nil).Expect(t, 400, map[string]any{"error": tc.code})
				if r["error_description"] == "" {
					t.Fatal("no error_description")
				}
			})
		}
		t.Run("the lifetime never outlasts the agent token", func(t *testing.T) {
			short, _ := agent(t, a, admin, prj, nil, 1)
			a.Clock.Advance(59*time.Minute + 50*time.Second)
			defer a.Clock.Advance(-(59*time.Minute + 50*time.Second))
			r := post(a, url.Values{"grant_type": {grantExchange}, "subject_token": {short}, "subject_token_type": {accessType}}, nil).Expect(t, 200, nil)
			if in := r["expires_in"].(float64); in > 10 || in < 1 {
				t.Fatalf("expires_in %v", in)
			}
		})
		m := string(a.Get("/metrics").Body)
		for _, want := range []string{`authcore_credentials_issued_total{kind="exchanged",product=""}`, `authcore_oauth_requests_total{endpoint="token_exchange",result="invalid_grant"} 3`} {
			if !strings.Contains(m, want) {
				t.Errorf("/metrics lacks %s", want)
			}
		}
	})
}
