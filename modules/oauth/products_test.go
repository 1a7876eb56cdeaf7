package oauth_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"testing"

	"github.com/authcore/authcore/cmd/authcore/app"
	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/platform/product"
	"github.com/authcore/authcore/plugins/auth"
)

// SPEC §15: the authorization server is its own module. Without the auth product there are
// no client credentials and no confidential clients, and nothing else is lost: agents still
// exchange their tokens, and the tokens they get are still revocable and verifiable.
func TestWithoutTheAuthProduct(t *testing.T) {
	products := slices.DeleteFunc(app.Products(), func(p product.Plugin) bool { return p.Module.String() == auth.Module.String() })
	if len(products) != len(app.Products())-1 {
		t.Fatal("the auth product is not among app.Products")
	}
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := apptest.Start(t, st, apptest.WithProducts(products...))
		admin := a.SignUp(t)
		prj := a.CreateProject(t, admin)
		secret, tokenID := agent(t, a, admin, prj, []string{"files:read"}, 720)
		resource := "https://mcp.example.com/" + prj
		a.RegisterResource(t, admin, prj, resource, nil)

		a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + prj + "/service-badges",
			Body: map[string]any{"name": "m2m", "product": "auth"}, Header: admin.Bearer()}).Expect(t, 400, nil)

		tok, err := exchanger(a, secret, url.Values{"resource": {resource}}).Token(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if c := verifyJWTFor(t, a, tok.AccessToken, resource); c["sub"] != tokenID {
			t.Fatalf("claims %v", c)
		}
		meta := a.Get("/.well-known/oauth-authorization-server").Expect(t, 200, map[string]any{
			"grant_types_supported": []any{"authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:device_code", "urn:ietf:params:oauth:grant-type:jwt-bearer", grantExchange, "urn:openid:params:grant-type:ciba"},
			// Hosts' clients still authenticate; none of them belongs to a project.
			"token_endpoint_auth_methods_supported":         []any{"client_secret_basic", "client_secret_post", "none", "private_key_jwt"},
			"introspection_endpoint_auth_methods_supported": []any{},
		})
		if meta["introspection_endpoint"] == nil {
			t.Fatal("no introspection endpoint")
		}
		post(a, url.Values{"grant_type": {"client_credentials"}}, basic("cli_x", "ac_cs_x")).Expect(t, 401, map[string]any{"error": "invalid_client"})
		postTo(a, "/v1/oauth/introspect", url.Values{"token": {secret}}, nil).Expect(t, 401, map[string]any{"error": "invalid_client"})
		// RFC 7009 still revokes the exchanged token and its agent token.
		postTo(a, "/v1/oauth/revoke", url.Values{"token": {tok.AccessToken}}, nil).Expect(t, 200, map[string]any{})
		postTo(a, "/v1/oauth/revoke", url.Values{"token": {secret}}, nil).Expect(t, 200, map[string]any{})
		a.Get("/v1/auth-core/ai/me", "Authorization", "Bearer "+secret).Expect(t, 401, nil)
	})
}
