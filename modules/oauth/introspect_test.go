package oauth_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/authcore/authcore/ent/auditevent"
	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/platform/config"
)

func TestIntrospection(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a, admin, prj := setup(t, st)
		rs := mint(t, a, admin, prj, map[string]any{"role": "developer"}) // the resource server's client
		in := func(token string) *apptest.Response {
			return postTo(a, "/v1/oauth/introspect", url.Values{"token": {token}}, basicFor(rs))
		}
		agentSecret, agentID := agent(t, a, admin, prj, []string{"files:*"}, 720)
		a.RegisterResource(t, admin, prj, "https://mcp.example.com/"+prj, nil)
		exchanged := post(a, url.Values{"grant_type": {grantExchange}, "subject_token": {agentSecret}, "subject_token_type": {accessType},
			"resource": {"https://mcp.example.com/" + prj}}, nil).Expect(t, 200, nil)["access_token"].(string)
		other := mint(t, a, admin, prj, map[string]any{"role": "viewer"})
		cc := post(a, url.Values{"grant_type": {"client_credentials"}}, basicFor(other)).Expect(t, 200, nil)["access_token"].(string)
		db := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + prj + "/service-badges", Body: map[string]any{"name": "d", "product": "db"}, Header: admin.Bearer()}).Expect(t, 201, nil)
		endUser := a.SignUpIn(t, prj)

		// Another project, with its own credentials of every kind.
		admin2 := a.SignUp(t)
		prj2 := a.CreateProject(t, admin2)
		foreignAgent, _ := agent(t, a, admin2, prj2, nil, 720)
		foreignUser := a.SignUpIn(t, prj2)

		t.Run("an unauthenticated caller is 401 invalid_client", func(t *testing.T) {
			postTo(a, "/v1/oauth/introspect", url.Values{"token": {agentSecret}}, nil).Expect(t, 401, map[string]any{"error": "invalid_client"})
			postTo(a, "/v1/oauth/introspect", url.Values{"token": {agentSecret}}, basic(rs.ID, "ac_cs_wrong")).Expect(t, 401, map[string]any{"error": "invalid_client"})
		})
		t.Run("no token is 400 invalid_request", func(t *testing.T) {
			postTo(a, "/v1/oauth/introspect", url.Values{}, basicFor(rs)).Expect(t, 400, map[string]any{"error": "invalid_request"})
		})
		t.Run("an agent token", func(t *testing.T) {
			in(agentSecret).Expect(t, 200, map[string]any{"active": true, "kind": "ai_agent", "sub": agentID, "token_id": agentID,
				"agent_name": "crawler", "scope": "files:*", "project_id": prj, "iss": a.Base})
		})
		t.Run("a badge secret", func(t *testing.T) {
			in(db["plaintext"].(string)).Expect(t, 200, map[string]any{"active": true, "kind": "service_badge",
				"badge_id": db["badge"].(map[string]any)["id"], "product": "db", "role": "viewer", "project_id": prj})
		})
		t.Run("an exchanged access token", func(t *testing.T) {
			in(exchanged).Expect(t, 200, map[string]any{"active": true, "kind": "oauth_access_token", "sub": agentID,
				"client_id": agentID, "aud": "https://mcp.example.com/" + prj, "scope": "files:*", "agent_name": "crawler"})
		})
		t.Run("a client-credentials access token", func(t *testing.T) {
			in(cc).Expect(t, 200, map[string]any{"active": true, "kind": "oauth_access_token", "client_id": other.ID, "scope": "viewer"})
		})
		t.Run("a session of the project's tenant", func(t *testing.T) {
			in(endUser.AccessToken).Expect(t, 200, map[string]any{"active": true, "kind": "session", "user_id": endUser.UserID,
				"session_handle": endUser.SessionHandle, "project_id": prj})
		})
		t.Run("nothing of another project, nor dashboard sessions, nor garbage", func(t *testing.T) {
			for name, tok := range map[string]string{"foreign agent token": foreignAgent, "foreign session": foreignUser.AccessToken,
				"dashboard session": admin.AccessToken, "garbage": "nope", "a broken JWT": exchanged + "x", "ac_ai_ with a bad checksum": "ac_ai_" + agentID} {
				got := in(tok).Expect(t, 200, map[string]any{"active": false})
				if len(got) != 1 {
					t.Fatalf("%s: more than active:false: %v", name, got)
				}
			}
		})
		t.Run("a revoke makes the credential and every JWT derived from it inactive at once", func(t *testing.T) {
			a.Do(apptest.Req{Method: http.MethodDelete, Path: "/v1/auth-core/projects/" + prj + "/ai/agents/" + agentID, Header: admin.Bearer()}).Expect(t, 200, nil)
			in(agentSecret).Expect(t, 200, map[string]any{"active": false})
			in(exchanged).Expect(t, 200, map[string]any{"active": false})
			a.Do(apptest.Req{Method: http.MethodDelete, Path: "/v1/projects/" + prj + "/service-badges/" + other.BadgeID, Header: admin.Bearer()}).Expect(t, 200, nil)
			in(cc).Expect(t, 200, map[string]any{"active": false})
			a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signout", Header: endUser.Bearer()}).Expect(t, 200, nil)
			in(endUser.AccessToken).Expect(t, 200, map[string]any{"active": false})
		})
	})
}

func TestSelfRevocation(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a, admin, prj := setup(t, st)
		revoke := func(token string) *apptest.Response {
			return postTo(a, "/v1/oauth/revoke", url.Values{"token": {token}}, nil)
		}
		secret, id := agent(t, a, admin, prj, nil, 720)
		revoke(secret).Expect(t, 200, nil)
		a.Get("/v1/auth-core/ai/me", "Authorization", "Bearer "+secret).Expect(t, 401, map[string]any{"code": "invalid_token"})
		ev, err := a.Ent.AuditEvent.Query().Where(auditevent.Action("ai_token.revoke"), auditevent.ProjectID(prj)).Only(context.Background())
		// Whoever presents a secret holds it: the agent token revoked itself (SPEC §28).
		if err != nil || ev.Metadata["via"] != "self" || ev.Metadata["tokenId"] != id || ev.ActorID == nil || *ev.ActorID != id || *ev.ActorType != "agent_token" {
			t.Fatalf("%+v %v", ev, err)
		}
		badge := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + prj + "/service-badges", Body: map[string]any{"name": "d", "product": "db"}, Header: admin.Bearer()}).Expect(t, 201, nil)
		revoke(badge["plaintext"].(string)).Expect(t, 200, nil)
		a.Get("/v1/service-badges/me", "Authorization", "Bearer "+badge["plaintext"].(string)).Expect(t, 401, nil)
		if ev, err := a.Ent.AuditEvent.Query().Where(auditevent.Action("service_badge.revoke"), auditevent.ProjectID(prj)).Only(context.Background()); err != nil ||
			*ev.ActorID != badge["badge"].(map[string]any)["id"] || *ev.ActorType != "client" {
			t.Fatalf("badge revoke record %+v %v", ev, err)
		}

		// Always 200 {}, whatever the token (RFC 7009 §2.2): it tells nothing.
		for _, tok := range []string{secret, "nope", "ac_ai_" + id} {
			if got := revoke(tok).Expect(t, 200, nil); len(got) != 0 {
				t.Fatalf("%v", got)
			}
		}
		postTo(a, "/v1/oauth/revoke", url.Values{}, nil).Expect(t, 400, map[string]any{"error": "invalid_request"})
	})
}

func TestAuthorizationServerMetadata(t *testing.T) {
	a := apptest.StartURL(t, "sqlite", "sqlite::memory:", apptest.WithConfig(func(c *config.Config) { c.PublicURL = "https://auth.example.com/" }))
	a.Get("/.well-known/oauth-authorization-server").Expect(t, 200, map[string]any{
		"issuer":                 "https://auth.example.com",
		"token_endpoint":         "https://auth.example.com/v1/oauth/token",
		"jwks_uri":               "https://auth.example.com/.well-known/jwks.json",
		"introspection_endpoint": "https://auth.example.com/v1/oauth/introspect",
		"revocation_endpoint":    "https://auth.example.com/v1/oauth/revoke",
		"grant_types_supported":  []string{"authorization_code", "client_credentials", "refresh_token", "urn:ietf:params:oauth:grant-type:device_code", "urn:ietf:params:oauth:grant-type:jwt-bearer", grantExchange, "urn:openid:params:grant-type:ciba"},
		// Exactly what each endpoint takes (SPEC §21): auth badge clients introspect; hosts'
		// clients and public ones use the token endpoint; anyone revokes.
		"introspection_endpoint_auth_methods_supported": []string{"client_secret_basic", "client_secret_post", "private_key_jwt"},
		"token_endpoint_auth_methods_supported":         []string{"client_secret_basic", "client_secret_post", "none", "private_key_jwt"},
		"revocation_endpoint_auth_methods_supported":    []string{"client_secret_basic", "client_secret_post", "none", "private_key_jwt"},
		"scopes_supported":                              []string{"openid", "profile", "email", "offline_access", "viewer", "developer", "admin"},
		// SPEC §16: what an MCP host needs to find, register and authorize.
		"authorization_endpoint":                         "https://auth.example.com/oauth/authorize",
		"registration_endpoint":                          "https://auth.example.com/v1/oauth/register",
		"response_types_supported":                       []string{"code"},
		"code_challenge_methods_supported":               []string{"S256"},
		"client_id_metadata_document_supported":          true,
		"authorization_response_iss_parameter_supported": true,
	})
	a.Get("/.well-known/oauth-authorization-server/auth").Expect(t, 404, nil)

	// An issuer with a path: the document is also at the RFC 8414 §3.1 path-inserted
	// location, and registration closed leaves the registration endpoint out.
	b := apptest.StartURL(t, "sqlite", "sqlite::memory:", apptest.WithConfig(func(c *config.Config) {
		c.PublicURL = "https://example.com/auth"
		c.OAuthRegistration = "closed"
	}))
	for _, path := range []string{"/.well-known/oauth-authorization-server", "/.well-known/oauth-authorization-server/auth"} {
		got := b.Get(path).Expect(t, 200, map[string]any{"issuer": "https://example.com/auth", "authorization_endpoint": "https://example.com/auth/oauth/authorize"})
		if _, ok := got["registration_endpoint"]; ok {
			t.Fatalf("%s: registration_endpoint while registration is closed: %v", path, got)
		}
	}
}
