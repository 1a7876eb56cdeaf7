package federation_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/platform/config"
)

// The admin API of a project's sign-in configuration (SPEC §20): who may, what a body
// must hold, and that a secret never comes back.
func TestProviderAdmin(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		// Access tokens outlive the step-up window here, so the window is what refuses.
		w := newWorld(t, st, apptest.WithConfig(func(c *config.Config) { c.AccessTTL = time.Hour }))
		base := "/v1/projects/" + w.project + "/auth/providers"
		do := func(method, path string, body any, s *apptest.Session) *apptestResponse {
			return w.a.Do(apptest.Req{Method: method, Path: path, Body: body, Header: s.Bearer()})
		}
		good := map[string]any{"type": "oidc", "name": "Corp", "issuer": w.up.Issuer, "clientId": "c1", "clientSecret": "s3cret-value"}
		with := func(k string, v any) map[string]any {
			m := map[string]any{}
			for a, b := range good {
				m[a] = b
			}
			if v == nil {
				delete(m, k)
			} else {
				m[k] = v
			}
			return m
		}
		t.Run("validation", func(t *testing.T) {
			for name, c := range map[string]struct {
				body  any
				field string
			}{
				"no body":              {nil, "body"},
				"not an object":        {[]string{"x"}, "body"},
				"no type":              {with("type", nil), "type"},
				"unknown type":         {with("type", "saml"), "type"},
				"type not a string":    {with("type", 1), "type"},
				"no client id":         {with("clientId", nil), "clientId"},
				"no secret":            {with("clientSecret", nil), "clientSecret"},
				"empty name":           {with("name", ""), "name"},
				"name too long":        {with("name", strings.Repeat("n", 81)), "name"},
				"no issuer":            {with("issuer", nil), "issuer"},
				"issuer not a URL":     {with("issuer", "corp"), "issuer"},
				"issuer metadata host": {with("issuer", "http://169.254.169.254"), "issuer"},
				"endpoints on oidc":    {with("tokenEndpoint", w.up.Issuer+"/token"), "tokenEndpoint"},
				"scopes not strings":   {with("scopes", []int{1}), "scopes"},
				"scope with a space":   {with("scopes", []string{"a b"}), "scopes"},
				"claims not an object": {with("claims", "sub"), "claims"},
				"unknown claim":        {with("claims", map[string]any{"phone": "phone"}), "claims.phone"},
				"trustEmail not bool":  {with("trustEmail", "yes"), "trustEmail"},
				"unknown preset":       {with("preset", "okta"), "preset"},
				"oauth2 no endpoints":  {map[string]any{"type": "oauth2", "name": "X", "clientId": "c", "clientSecret": "s"}, "authorizationEndpoint"},
			} {
				r := do(http.MethodPost, base, c.body, w.admin)
				if r.Status != 400 || r.JSON(t)["code"] != "validation_failed" || !strings.Contains(string(r.Body), `"field":"`+c.field+`"`) {
					t.Errorf("%s: %d %s", name, r.Status, r.Body)
				}
			}
		})
		t.Run("presets", func(t *testing.T) {
			g := do(http.MethodPost, base, map[string]any{"preset": "google", "clientId": "g", "clientSecret": "gs"}, w.admin).Expect(t, 201,
				map[string]any{"type": "oidc", "name": "Google", "issuer": "https://accounts.google.com", "trustEmail": true})
			if sc := g["scopes"].([]any); len(sc) != 3 {
				t.Fatalf("scopes %v", sc)
			}
			do(http.MethodPost, base, map[string]any{"preset": "github", "clientId": "g", "clientSecret": "gs"}, w.admin).Expect(t, 201,
				map[string]any{"type": "oauth2", "name": "GitHub", "userinfoEndpoint": "https://api.github.com/user", "trustEmail": false, "issuer": nil})
			do(http.MethodPost, base, map[string]any{"preset": "microsoft", "clientId": "m", "clientSecret": "ms"}, w.admin).Expect(t, 201,
				map[string]any{"issuer": "https://login.microsoftonline.com/common/v2.0", "trustEmail": false})
			do(http.MethodPost, base, map[string]any{"preset": "github", "type": "oidc", "clientId": "g", "clientSecret": "gs"}, w.admin).Expect(t, 400, nil)
			do(http.MethodPost, base, map[string]any{"preset": "google", "issuer": "https://evil.example", "clientId": "g", "clientSecret": "gs"}, w.admin).Expect(t, 400, nil)
		})
		t.Run("create, read, change, delete; the secret never returns", func(t *testing.T) {
			created := do(http.MethodPost, base, good, w.admin)
			created.Expect(t, 201, map[string]any{"name": "Corp", "clientId": "c1", "enabled": true, "managedBy": "admin", "trustEmail": false})
			id := created.JSON(t)["id"].(string)
			if !regexp.MustCompile(`^idp_[0-9A-Z]{26}$`).MatchString(id) || created.JSON(t)["callbackUrl"] != w.a.Config.PublicURL+"/v1/auth-core/providers/"+id+"/callback" {
				t.Fatalf("created %s", created.Body)
			}
			for _, r := range []*apptestResponse{created, do(http.MethodGet, base, nil, w.admin), do(http.MethodGet, base+"/"+id, nil, w.admin)} {
				if strings.Contains(string(r.Body), "s3cret-value") || strings.Contains(string(r.Body), "clientSecret") {
					t.Fatalf("a secret in %s", r.Body)
				}
			}
			do(http.MethodPatch, base+"/"+id, map[string]any{"name": "Corp SSO", "clientSecret": "rotated-secret", "scopes": []string{"email"}}, w.admin).
				Expect(t, 200, map[string]any{"name": "Corp SSO"})
			got := do(http.MethodGet, base+"/"+id, nil, w.admin).Expect(t, 200, nil)
			if sc := got["scopes"].([]any); len(sc) != 2 || sc[0] != "openid" { // openid always leads an oidc provider's scopes
				t.Fatalf("scopes %v", sc)
			}
			do(http.MethodPatch, base+"/"+id, map[string]any{"type": "oauth2"}, w.admin).Expect(t, 400, nil)
			if strings.Contains(w.a.DumpDB(t), "rotated-secret") || strings.Contains(w.a.Logs.String(), "rotated-secret") {
				t.Fatal("a client secret in clear in the store or the logs")
			}
			do(http.MethodDelete, base+"/"+id, nil, w.admin).Expect(t, 200, map[string]any{"ok": true, "id": id})
			do(http.MethodGet, base+"/"+id, nil, w.admin).Expect(t, 404, map[string]any{"code": "provider_not_found"})
		})
		t.Run("admins only, with a recent authentication", func(t *testing.T) {
			dev := w.a.SignUp(t)
			w.a.AddMember(t, w.admin, w.project, dev, "developer")
			do(http.MethodGet, base, nil, dev).Expect(t, 403, nil)
			do(http.MethodPost, base, good, dev).Expect(t, 403, nil)
			other := w.a.SignUp(t)
			do(http.MethodGet, base, nil, other).Expect(t, 403, nil)
			// An end user of the project is not a dashboard user.
			_, endUser := w.signUpIn(t, apptest.UniqueEmail(t))
			w.a.Do(apptest.Req{Method: http.MethodGet, Path: base, Header: bearer(endUser)}).Expect(t, 401, nil)
			// An admin with a second factor who signed in long ago steps up first.
			pending := do(http.MethodPost, "/v1/auth-core/mfa/totp", map[string]any{}, w.admin).Expect(t, 201, nil)
			do(http.MethodPost, "/v1/auth-core/mfa/totp/"+pending["id"].(string)+"/confirm",
				map[string]any{"code": totpCode(t, pending["secret"].(string), w.a.Clock.Now())}, w.admin).Expect(t, 200, nil)
			w.a.Clock.Advance(16 * time.Minute)
			do(http.MethodPost, base, good, w.admin).Expect(t, 403, map[string]any{"code": "reauthentication_required"})
			do(http.MethodPut, "/v1/projects/"+w.project+"/auth/methods", map[string]any{"password": true, "emailLink": true}, w.admin).
				Expect(t, 403, map[string]any{"code": "reauthentication_required"})
			do(http.MethodGet, base, nil, w.admin).Expect(t, 200, nil) // reading is not a change
		})
	})
}

type apptestResponse = apptest.Response

// Methods: both booleans required, and never no way at all to sign in.
func TestMethods(t *testing.T) {
	w := newWorld(t, apptest.Stores(t)[0])
	path := "/v1/projects/" + w.project + "/auth/methods"
	put := func(b any) *apptestResponse {
		return w.a.Do(apptest.Req{Method: http.MethodPut, Path: path, Body: b, Header: w.admin.Bearer()})
	}
	w.a.Do(apptest.Req{Method: http.MethodGet, Path: path, Header: w.admin.Bearer()}).Expect(t, 200, map[string]any{"password": true, "emailLink": false, "autoLink": true})
	for name, b := range map[string]any{"no body": nil, "password missing": map[string]any{"emailLink": true},
		"wrong type": map[string]any{"password": "yes", "emailLink": true}, "autoLink null": map[string]any{"password": true, "emailLink": true, "autoLink": nil}} {
		if r := put(b); r.Status != 400 {
			t.Errorf("%s: %d %s", name, r.Status, r.Body)
		}
	}
	put(map[string]any{"password": false, "emailLink": false}).Expect(t, 409, map[string]any{"code": "no_sign_in_method"})
	put(map[string]any{"password": false, "emailLink": true}).Expect(t, 200, map[string]any{"password": false})
	// Password sign-in and sign-up are then refused for the tenant.
	w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signup", Body: map[string]any{"email": apptest.UniqueEmail(t), "password": "correct horse battery", "tenantId": w.project}}).
		Expect(t, 403, map[string]any{"code": "password_disabled"})
	w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signin", Body: map[string]any{"email": "a@example.com", "password": "whatever password", "tenantId": w.project}}).
		Expect(t, 403, map[string]any{"code": "password_disabled"})
	// The dashboard's tenant is untouched.
	w.a.SignUp(t)
}
