package oauth_test

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/authcore/authcore/internal/apptest"
)

// SPEC §11 resources: a resource's scopes bound what its tokens carry, in exchange and in
// client credentials; client credentials honour resource for registered ones only.
func TestRegisteredResourcesBoundGrants(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a, admin, prj := setup(t, st)
		bounded := "https://files.example.com/" + prj
		open := "https://open.example.com/" + prj
		a.RegisterResource(t, admin, prj, bounded, []string{"files:read", "roles:*"})
		a.RegisterResource(t, admin, prj, open, nil)
		secret, _ := agent(t, a, admin, prj, []string{"files:*", "db:read"}, 720)
		xform := func(extra url.Values) url.Values {
			f := url.Values{"grant_type": {grantExchange}, "subject_token": {secret}, "subject_token_type": {accessType}}
			for k, v := range extra {
				f[k] = v
			}
			return f
		}

		t.Run("exchange: no scope asked gives what both the token and the resource cover", func(t *testing.T) {
			r := post(a, xform(url.Values{"resource": {bounded}}), nil).Expect(t, 200, map[string]any{"scope": "files:read"})
			if c := claimsOf(t, r["access_token"].(string)); c["aud"] != bounded || c["scope"] != "files:read" {
				t.Fatalf("%v", c)
			}
		})
		t.Run("exchange: a scope the resource does not cover is invalid_scope", func(t *testing.T) {
			post(a, xform(url.Values{"resource": {bounded}, "scope": {"files:write"}}), nil).Expect(t, 400, map[string]any{"error": "invalid_scope"})
			post(a, xform(url.Values{"resource": {bounded}, "scope": {"db:read"}}), nil).Expect(t, 400, map[string]any{"error": "invalid_scope"})
			post(a, xform(url.Values{"resource": {open}, "scope": {"db:read"}}), nil).Expect(t, 200, map[string]any{"scope": "db:read"})
		})
		t.Run("exchange: audience names a registered resource like resource does", func(t *testing.T) {
			r := post(a, xform(url.Values{"audience": {open}}), nil).Expect(t, 200, nil)
			if c := claimsOf(t, r["access_token"].(string)); c["aud"] != open {
				t.Fatalf("%v", c)
			}
		})

		cl := mint(t, a, admin, prj, map[string]any{"role": "developer"})
		cc := func(extra url.Values) *apptest.Response {
			f := url.Values{"grant_type": {"client_credentials"}}
			for k, v := range extra {
				f[k] = v
			}
			return post(a, f, basicFor(cl))
		}
		t.Run("client credentials: resource becomes aud", func(t *testing.T) {
			r := cc(url.Values{"resource": {open}}).Expect(t, 200, map[string]any{"scope": "developer"})
			if c := claimsOf(t, r["access_token"].(string)); c["aud"] != open || c["project_id"] != prj {
				t.Fatalf("%v", c)
			}
			if c := claimsOf(t, cc(nil).Expect(t, 200, nil)["access_token"].(string)); c["aud"] != "authcore" {
				t.Fatalf("without resource: %v", c)
			}
		})
		t.Run("client credentials: an unregistered or another project's resource is invalid_target", func(t *testing.T) {
			cc(url.Values{"resource": {"https://nobody.example.com/" + prj}}).Expect(t, 400, map[string]any{"error": "invalid_target"})
			cc(url.Values{"resource": {"http://plain.example.com/"}}).Expect(t, 400, map[string]any{"error": "invalid_target"})
			other := a.SignUp(t)
			theirs := a.CreateProject(t, other)
			a.RegisterResource(t, other, theirs, "https://theirs.example.com/"+theirs, nil)
			cc(url.Values{"resource": {"https://theirs.example.com/" + theirs}}).Expect(t, 400, map[string]any{"error": "invalid_target"})
		})
		t.Run("client credentials: a resource whose scopes do not cover the role is invalid_scope", func(t *testing.T) {
			cc(url.Values{"resource": {bounded}}).Expect(t, 400, map[string]any{"error": "invalid_scope"})
		})
	})
}

// SPEC §9a: a replaced secret's grace also ends what is derived from it — an exchanged
// token, and the exp introspection reports.
func TestGraceBoundsWhatIsDerived(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a, admin, prj := setup(t, st)
		old, id := agent(t, a, admin, prj, []string{"files:*"}, 720)
		rolled := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/projects/" + prj + "/ai/agents/" + id + "/roll",
			Body: map[string]any{"graceHours": 1}, Header: admin.Bearer()}).Expect(t, 200, nil)
		graceEnd, err := time.Parse(time.RFC3339Nano, rolled["previousSecretExpiresAt"].(string))
		if err != nil {
			t.Fatal(err)
		}
		rs := mint(t, a, admin, prj, nil) // the resource server's client
		a.Clock.Advance(time.Hour - 5*time.Second)
		r := post(a, url.Values{"grant_type": {grantExchange}, "subject_token": {old}, "subject_token_type": {accessType}}, nil).Expect(t, 200, nil)
		if in := r["expires_in"].(float64); in > 5 {
			t.Fatalf("an exchange 5 s before the grace ends lives %v s", in)
		}
		if c := claimsOf(t, r["access_token"].(string)); int64(c["exp"].(float64)) > graceEnd.Unix() {
			t.Fatalf("exp %v after the grace end %v", c["exp"], graceEnd.Unix())
		}
		in := postTo(a, "/v1/oauth/introspect", url.Values{"token": {old}}, basicFor(rs)).Expect(t, 200, map[string]any{"active": true})
		if exp := int64(in["exp"].(float64)); exp > graceEnd.Unix() {
			t.Fatalf("introspection exp %d after the grace end %d", exp, graceEnd.Unix())
		}
		fresh := postTo(a, "/v1/oauth/introspect", url.Values{"token": {rolled["plaintext"].(string)}}, basicFor(rs)).Expect(t, 200, map[string]any{"active": true})
		if int64(fresh["exp"].(float64)) <= graceEnd.Unix() {
			t.Fatal("the new secret's exp is bounded too")
		}
	})
}
