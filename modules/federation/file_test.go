package federation_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/internal/interop"
	"github.com/authcore/authcore/platform/config"
)

// The dashboard's own tenant gets its providers from the operator (SPEC §20): here from
// AUTHCORE_PROVIDERS_FILE, whose entries the API cannot change.
func TestProvidersFile(t *testing.T) {
	up := interop.StartUpstream(t)
	secret := "file-secret-" + rnd(8)
	t.Setenv("CORP_SECRET", secret)
	file := filepath.Join(t.TempDir(), "providers.yaml")
	if err := os.WriteFile(file, []byte(`methods: {password: true, emailLink: false, autoLink: true}
providers:
  - id: corp
    type: oidc
    name: Corp SSO
    issuer: `+up.Issuer+`
    clientId: file-client-`+rnd(4)+`
    clientSecretEnv: CORP_SECRET
    trustEmail: true
`), 0o600); err != nil {
		t.Fatal(err)
	}
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := apptest.Start(t, st, apptest.WithConfig(func(c *config.Config) { c.WebhookAllowHTTP, c.ProvidersFile = true, file }))
		list := a.Get("/v1/auth-core/providers").Expect(t, 200, map[string]any{"tenantId": "public", "password": true})
		ps := list["providers"].([]any)
		if len(ps) != 1 || ps[0].(map[string]any)["id"] != "corp" {
			t.Fatalf("providers %v", ps)
		}
		raw, _ := os.ReadFile(file)
		clientID := strings.TrimSpace(strings.SplitN(strings.SplitN(string(raw), "clientId: ", 2)[1], "\n", 2)[0])
		up.AddClient(t, clientID, secret, a.Config.PublicURL+"/v1/auth-core/providers/corp/callback")
		acc := interop.Account{Login: "dash-" + rnd(4), Email: apptest.UniqueEmail(t), EmailVerified: true}
		up.AddAccount(t, acc)
		res := newPerson(t).via(a.Base+"/v1/auth-core/providers/corp/start", acc.Login)
		access := cookie(res, "sAccessToken")
		if access == "" {
			t.Fatalf("%d %s", res.StatusCode, body(t, res))
		}
		// A dashboard user: they may create a project.
		a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects", Body: map[string]any{"name": "Mine"}, Header: bearer(access)}).Expect(t, 201, nil)
	})
}
