package trust_test

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"golang.org/x/oauth2"

	"github.com/authcore/authcore/internal/apptest"
)

// jwt-bearer grants issue the intersection of the scopes asked for and the scopes
// allowed, and say the scope issued; invalid_scope only when nothing asked for is left
// (SPEC §29) — on the workload-identity path and on the ID-JAG path alike.
func TestJWTBearerIssuesTheIntersectionOfScopes(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := startApp(t, st)
		admin := a.SignUp(t)
		prj := a.CreateProject(t, admin)
		mcp := "https://mcp.scopes.example/mcp"
		a.RegisterResource(t, admin, prj, mcp, []string{"mcp:tools", "mcp:admin"})
		asked := func(t *testing.T, assertion, scope string, header map[string]string, want string) {
			t.Helper()
			if want == "" {
				jwtBearer(a, assertion, mcp, url.Values{"scope": {scope}}, header).Expect(t, 400, map[string]any{"error": "invalid_scope"})
				return
			}
			got := jwtBearer(a, assertion, mcp, url.Values{"scope": {scope}}, header).Expect(t, 200, map[string]any{"scope": want})
			if c := a.VerifyAccessToken(t, got["access_token"].(string), mcp); c["scope"] != want {
				t.Fatalf("the token's scope %v, the answer's %q", c["scope"], want)
			}
		}

		t.Run("workload identity", func(t *testing.T) {
			k8s := newPlatform(t)
			trustIssuer(t, a, admin, prj, map[string]any{"issuer": k8s.URL, "kind": "workload", "audience": "authcore",
				"subjectPattern": "system:serviceaccount:payments:*", "scopes": []string{"mcp:tools"}, "resources": []string{mcp}})
			const sa = "system:serviceaccount:payments:invoicer"
			asked(t, k8s.token(t, sa, "authcore", nil), "mcp:tools mcp:admin", nil, "mcp:tools")
			asked(t, k8s.token(t, sa, "authcore", nil), "mcp:admin mcp:tools", nil, "mcp:tools")
			asked(t, k8s.token(t, sa, "authcore", nil), "mcp:admin", nil, "")
			asked(t, k8s.token(t, sa, "authcore", nil), "mcp:tools", nil, "mcp:tools")
		})

		t.Run("ID-JAG", func(t *testing.T) {
			idp := newPlatform(t) // an enterprise IdP: discovery and a JWKS on loopback
			trustIssuer(t, a, admin, prj, map[string]any{"issuer": idp.URL, "kind": "enterprise", "trustEmail": true,
				"scopes": []string{"mcp:tools"}, "resources": []string{mcp}})
			email := apptest.UniqueEmail(t)
			a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signup", Body: map[string]any{"email": email,
				"password": "correct horse battery", "tenantId": prj}}).Expect(t, 201, nil)
			client, secret := register(t, a, "https://agent.scopes.example/cb")
			signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: idp.key},
				(&jose.SignerOptions{}).WithType("oauth-id-jag+jwt").WithHeader("kid", "k8s-1"))
			if err != nil {
				t.Fatal(err)
			}
			jag := func(scope string) string {
				now := time.Now()
				raw, err := jwt.Signed(signer).Claims(map[string]any{"iss": idp.URL, "sub": "emp-1", "aud": issuerOf(t, a), "client_id": client,
					"jti": "jag-" + oauth2.GenerateVerifier()[:16], "iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(), "scope": scope,
					"resource": mcp, "email": email, "email_verified": true}).Serialize()
				if err != nil {
					t.Fatal(err)
				}
				return raw
			}
			basic := apptest.Basic(client, secret)
			// The ID-JAG allows both; the trust only mcp:tools.
			asked(t, jag("mcp:tools mcp:admin"), "mcp:tools mcp:admin", basic, "mcp:tools")
			asked(t, jag("mcp:tools mcp:admin"), "mcp:admin", basic, "")
			// The trust allows mcp:tools; this ID-JAG only mcp:admin: nothing is left.
			asked(t, jag("mcp:admin"), "mcp:tools mcp:admin", basic, "")
			asked(t, jag("mcp:tools"), "mcp:tools mcp:admin", basic, "mcp:tools")
		})
	})
}
