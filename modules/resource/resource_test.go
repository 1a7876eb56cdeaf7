package resource_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"go.uber.org/fx"

	"github.com/authcore/authcore/ent/auditevent"
	entresource "github.com/authcore/authcore/ent/resource"
	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/modules/resource"
	platformresource "github.com/authcore/authcore/platform/resource"
)

func TestMain(m *testing.M) { apptest.Main(m) }

func TestResourceRegistry(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := apptest.Start(t, st)
		admin := a.SignUp(t)
		prj := a.CreateProject(t, admin)
		base := "/v1/projects/" + prj + "/oauth/resources"
		create := func(body any, who *apptest.Session) *apptest.Response {
			return a.Do(apptest.Req{Method: http.MethodPost, Path: base, Body: body, Header: who.Bearer()})
		}
		uri := "https://mcp.example.com/" + strings.ToLower(prj)

		var id string
		t.Run("an admin registers a resource: 201, canonical, audited", func(t *testing.T) {
			r := create(map[string]any{"uri": strings.Replace(uri, "https://mcp.example.com", "HTTPS://MCP.Example.com", 1), "name": "Files MCP", "scopes": []string{"files:read", "files:*"}}, admin).
				Expect(t, 201, map[string]any{"projectId": prj, "uri": uri, "name": "Files MCP", "scopes": []any{"files:read", "files:*"}})
			id = r["id"].(string)
			if !strings.HasPrefix(id, "res_") {
				t.Fatalf("id %q", id)
			}
			if n, err := a.Ent.AuditEvent.Query().Where(auditevent.Action("oauth_resource.create"), auditevent.ProjectID(prj)).Count(context.Background()); err != nil || n != 1 {
				t.Fatalf("%d audit records, %v", n, err)
			}
		})
		t.Run("scopes may be omitted or null: none bound it", func(t *testing.T) {
			create(map[string]any{"uri": uri + "/a", "name": "A"}, admin).Expect(t, 201, map[string]any{"scopes": []any{}})
			create(map[string]any{"uri": uri + "/b", "name": "B", "scopes": nil}, admin).Expect(t, 201, map[string]any{"scopes": []any{}})
			create(map[string]any{"uri": "http://127.0.0.1:7777/" + prj, "name": "local"}, admin).Expect(t, 201, nil)
		})
		t.Run("a URI is one project's at most: 409 resource_taken, in any spelling", func(t *testing.T) {
			create(map[string]any{"uri": uri, "name": "again"}, admin).Expect(t, 409, map[string]any{"code": "resource_taken"})
			other := a.SignUp(t)
			theirs := a.CreateProject(t, other)
			a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + theirs + "/oauth/resources", Header: other.Bearer(),
				Body: map[string]any{"uri": strings.ToUpper(uri[:22]) + uri[22:], "name": "mine"}}).Expect(t, 409, map[string]any{"code": "resource_taken"})
		})
		issue := func(field, reason string) map[string]any {
			return map[string]any{"code": "validation_failed", "issues": []any{map[string]any{"field": field, "reason": reason}}}
		}
		for _, c := range []struct {
			name string
			body any
			want map[string]any
		}{
			{"missing body", nil, map[string]any{"code": "validation_failed"}},
			{"not an object", []any{1}, map[string]any{"code": "validation_failed"}},
			{"unparsable", "{", map[string]any{"code": "validation_failed"}},
			{"no uri", map[string]any{"name": "x"}, issue("uri", "required string")},
			{"uri a number", map[string]any{"uri": 5, "name": "x"}, issue("uri", "required string")},
			{"plain http", map[string]any{"uri": "http://mcp.example.com/x", "name": "x"}, nil},
			{"a fragment", map[string]any{"uri": "https://mcp.example.com/x#y", "name": "x"}, nil},
			{"relative", map[string]any{"uri": "/x", "name": "x"}, nil},
			{"a port out of range", map[string]any{"uri": "https://mcp.example.com:65536/x", "name": "x"}, nil},
			{"user info", map[string]any{"uri": "https://u@mcp.example.com/", "name": "x"}, nil},
			{"no name", map[string]any{"uri": uri + "/n"}, issue("name", "required string")},
			{"a name of 101 characters", map[string]any{"uri": uri + "/n", "name": strings.Repeat("n", 101)}, issue("name", "must be at most 100 characters")},
			{"a name with a line break", map[string]any{"uri": uri + "/n", "name": "a\nb"}, issue("name", "must not contain control characters")},
			{"scopes not an array", map[string]any{"uri": uri + "/n", "name": "x", "scopes": "files:read"}, issue("scopes", "must be an array of strings")},
			{"a scope outside the grammar", map[string]any{"uri": uri + "/n", "name": "x", "scopes": []string{"Files"}}, nil},
			{"33 scopes", map[string]any{"uri": uri + "/n", "name": "x", "scopes": strings.Split(strings.Repeat("s,", 33)[:65], ",")}, issue("scopes", "at most 32 scopes")},
		} {
			t.Run(c.name+": 400 and nothing registered", func(t *testing.T) {
				want := c.want
				if want == nil {
					want = map[string]any{"code": "validation_failed"}
				}
				r := create(c.body, admin).Expect(t, 400, want)
				_ = r
			})
		}
		t.Run("a name of exactly 100 characters and 32 scopes pass", func(t *testing.T) {
			create(map[string]any{"uri": uri + "/edge", "name": strings.Repeat("n", 100), "scopes": strings.Split(strings.Repeat("s,", 32)[:63], ",")}, admin).Expect(t, 201, nil)
		})
		t.Run("members list, newest first; outsiders and developers cannot change", func(t *testing.T) {
			viewer, dev, outsider := a.SignUp(t), a.SignUp(t), a.SignUp(t)
			a.AddMember(t, admin, prj, viewer, "viewer")
			a.AddMember(t, admin, prj, dev, "developer")
			r := a.Do(apptest.Req{Path: base, Header: viewer.Bearer()}).Expect(t, 200, nil)
			list := r["resources"].([]any)
			if len(list) != 5 || list[len(list)-1].(map[string]any)["id"] != id {
				t.Fatalf("%v", list)
			}
			a.Do(apptest.Req{Path: base, Header: outsider.Bearer()}).Expect(t, 403, map[string]any{"code": "forbidden"})
			create(map[string]any{"uri": uri + "/dev", "name": "x"}, dev).Expect(t, 403, map[string]any{"code": "forbidden"})
			a.Do(apptest.Req{Method: http.MethodDelete, Path: base + "/" + id, Header: dev.Bearer()}).Expect(t, 403, nil)
		})
		t.Run("delete: unknown and other projects' ids are 404; one's own goes", func(t *testing.T) {
			a.Do(apptest.Req{Method: http.MethodDelete, Path: base + "/res_nope", Header: admin.Bearer()}).Expect(t, 404, map[string]any{"code": "not_found"})
			a.Do(apptest.Req{Method: http.MethodDelete, Path: base + "/" + id, Header: admin.Bearer()}).Expect(t, 200, map[string]any{"ok": true, "resourceId": id})
			a.Do(apptest.Req{Method: http.MethodDelete, Path: base + "/" + id, Header: admin.Bearer()}).Expect(t, 404, nil)
			// Freed: it can be registered again.
			create(map[string]any{"uri": uri, "name": "again"}, admin).Expect(t, 201, nil)
		})
	})
}

// Unregistering a resource stops issuance at once, on another replica too (its cache of
// the registry is invalidated in the deleting transaction).
func TestUnregisteredResourceStopsIssuanceOnEveryReplica(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		dbURL := st.URL(t)
		a := apptest.StartURL(t, st.Name, dbURL)
		b := a
		if st.Name == "postgres" {
			b = apptest.StartURL(t, st.Name, dbURL)
		}
		admin := a.SignUp(t)
		prj := a.CreateProject(t, admin)
		uri := "https://api.example.com/" + prj
		exchange := func(app *apptest.App, secret string) *apptest.Response {
			form := url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"}, "subject_token": {secret},
				"subject_token_type": {"urn:ietf:params:oauth:token-type:access_token"}, "resource": {uri}}
			return app.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/token", Body: form.Encode(),
				Header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}})
		}
		secret := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/projects/" + prj + "/ai/agents", Body: map[string]any{}, Header: admin.Bearer()}).Expect(t, 200, nil)["plaintext"].(string)
		exchange(b, secret).Expect(t, 400, map[string]any{"error": "invalid_target"}) // cached as unknown on b
		res := a.RegisterResource(t, admin, prj, uri, nil)
		waitFor(t, func() bool { return exchange(b, secret).Status == 200 })
		a.Do(apptest.Req{Method: http.MethodDelete, Path: "/v1/projects/" + prj + "/oauth/resources/" + res["id"].(string), Header: admin.Bearer()}).Expect(t, 200, nil)
		waitFor(t, func() bool { return exchange(b, secret).Status == 400 })
	})
}

// waitFor polls cond for up to a second: the time SPEC §1 gives an invalidation to reach
// every replica.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("not within 1 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// SPEC §9b: a URI is one project's in every spelling a client could mean alike. The
// attack: the owner registered https://mcp.example.com/<p>/mcp; another project registered
// it again as :443, with the host's trailing dot, a trailing slash, dot-segments or in
// capitals, and got tokens the owner's server accepted. Each is now 409 resource_taken,
// every spelling finds the owner's resource, and tokens carry the URI exactly as the owner
// registered it.
func TestEquivalentSpellingsAreOneResource(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := apptest.Start(t, st)
		owner, attacker := a.SignUp(t), a.SignUp(t)
		mine, theirs := a.CreateProject(t, owner), a.CreateProject(t, attacker)
		path := "/" + strings.ToLower(mine)
		registered := "https://mcp.example.com" + path + "/mcp"
		slashed := "https://tools.example.com" + path + "/" // registered with its trailing slash
		a.RegisterResource(t, owner, mine, registered, nil)
		a.RegisterResource(t, owner, mine, slashed, nil)

		spellings := map[string][]string{
			registered: {
				"https://mcp.example.com:443" + path + "/mcp",
				"https://mcp.example.com." + path + "/mcp",
				"https://mcp.example.com" + path + "/mcp/",
				"https://mcp.example.com" + path + "/x/../mcp",
				"https://mcp.example.com" + path + "/./mcp",
				"https://mcp.example.com" + path + "/%2E%2e/" + strings.ToLower(mine) + "/mcp",
				"HTTPS://MCP.EXAMPLE.COM" + path + "/mcp",
				"https://MCP.example.com.:443" + path + "/mcp/",
			},
			slashed: {"https://tools.example.com" + path, "https://tools.example.com:443" + path + "/", "https://tools.example.com." + path},
		}
		taken := map[string]any{"code": "resource_taken"}
		for _, alike := range spellings {
			for _, uri := range alike {
				a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + theirs + "/oauth/resources", Header: attacker.Bearer(),
					Body: map[string]any{"uri": uri, "name": "squatter"}}).Expect(t, 409, taken)
				// The owner cannot hold two spellings either.
				a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + mine + "/oauth/resources", Header: owner.Bearer(),
					Body: map[string]any{"uri": uri, "name": "twice"}}).Expect(t, 409, taken)
			}
		}
		if list := a.Do(apptest.Req{Path: "/v1/projects/" + theirs + "/oauth/resources", Header: attacker.Bearer()}).Expect(t, 200, nil)["resources"].([]any); len(list) != 0 {
			t.Fatalf("the other project holds %v", list)
		}
		// A different path, port or scheme-host is another resource.
		a.RegisterResource(t, attacker, theirs, "https://mcp.example.com:8443"+path+"/mcp", nil)
		a.RegisterResource(t, attacker, theirs, "https://mcp.example.com"+path+"/mcp2", nil)

		// Every spelling finds the owner's resource, and the token names it as registered.
		agent := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/projects/" + mine + "/ai/agents", Body: map[string]any{}, Header: owner.Bearer()}).
			Expect(t, 200, nil)["plaintext"].(string)
		for want, alike := range spellings {
			for _, uri := range append(alike, want) {
				form := url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"}, "subject_token": {agent},
					"subject_token_type": {"urn:ietf:params:oauth:token-type:access_token"}, "resource": {uri}}
				tok := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/token", Body: form.Encode(),
					Header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}}).Expect(t, 200, nil)["access_token"].(string)
				if aud := audience(t, tok); aud != want {
					t.Errorf("resource %s: aud %q, want %q as registered", uri, aud, want)
				}
			}
		}
		// The attacker's project, naming the owner's resource in any spelling, gets nothing.
		theirAgent := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/projects/" + theirs + "/ai/agents", Body: map[string]any{}, Header: attacker.Bearer()}).
			Expect(t, 200, nil)["plaintext"].(string)
		for _, uri := range spellings[registered] {
			form := url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"}, "subject_token": {theirAgent},
				"subject_token_type": {"urn:ietf:params:oauth:token-type:access_token"}, "resource": {uri}}
			a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/token", Body: form.Encode(),
				Header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}}).Expect(t, 400, map[string]any{"error": "invalid_target"})
		}
	})
}

// audience reads a JWT's aud (one string, or the first of an array), unverified: the
// test checks what the token names, not its signature.
func audience(t *testing.T, jwt string) string {
	t.Helper()
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", jwt)
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var claims struct {
		Aud json.RawMessage `json:"aud"`
	}
	if err := json.Unmarshal(b, &claims); err != nil {
		t.Fatal(err)
	}
	var one string
	if json.Unmarshal(claims.Aud, &one) == nil {
		return one
	}
	var many []string
	if err := json.Unmarshal(claims.Aud, &many); err != nil || len(many) == 0 {
		t.Fatalf("aud %s", claims.Aud)
	}
	return many[0]
}

// Resources registered before canonical forms were kept get theirs when a server starts,
// oldest first; of two equivalent spellings held by two projects, the older keeps the URI
// and the newer is found by no lookup (and the log says so).
func TestBackfillGivesTheURIToTheOlderResource(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		dbURL := st.URL(t)
		a := apptest.StartURL(t, st.Name, dbURL)
		ctx := context.Background()
		owner, other := a.SignUp(t), a.SignUp(t)
		mine, theirs := a.CreateProject(t, owner), a.CreateProject(t, other)
		older := "https://legacy.example.com/" + strings.ToLower(mine) + "/mcp"
		now := a.Clock.Now()
		// Rows as an older release wrote them: no canonical form.
		for _, r := range []struct{ id, project, uri string }{
			{"res_00000000000000000000000001", mine, older},
			{"res_00000000000000000000000002", theirs, older + "/"},
		} {
			if err := a.Ent.Resource.Create().SetID(r.id).SetProjectID(r.project).SetURI(r.uri).SetName("old").SetScopes([]string{}).SetCreatedAt(now).Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
		// The next server to start (an upgrade) fills them in.
		var svc *resource.Service
		b := apptest.StartURL(t, st.Name, dbURL, apptest.WithFx(fx.Populate(&svc)))
		got, ok, err := svc.Lookup(ctx, older)
		if err != nil || !ok || got.ProjectID != mine || got.URI != older {
			t.Fatalf("lookup after backfill: %+v %v %v", got, ok, err)
		}
		if n, _ := b.Ent.Resource.Query().Where(entresource.CanonicalURIIsNil()).Count(ctx); n != 1 {
			t.Fatalf("%d resources without a canonical form, want the newer one only", n)
		}
		if !strings.Contains(b.Logs.String(), "equivalent to an older one") {
			t.Fatalf("the log does not name the clash:\n%s", b.Logs)
		}
	})
}

// Issue 46: https://host//mcp and https://host/mcp reach one server (servers and proxies
// merge slashes), so they are one resource. The attack: another project registered the
// owner's URI with an empty segment and got tokens the owner's server accepted. Now it is
// 409 resource_taken, and a token request naming any such spelling gets the owner's URI.
func TestEmptyPathSegmentsAreOneResource(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := apptest.Start(t, st)
		owner, attacker := a.SignUp(t), a.SignUp(t)
		mine, theirs := a.CreateProject(t, owner), a.CreateProject(t, attacker)
		p := strings.ToLower(mine)
		registered := "https://mcp.example.com/" + p + "/mcp"
		a.RegisterResource(t, owner, mine, registered, nil)
		alike := []string{
			"https://mcp.example.com//" + p + "/mcp",
			"https://mcp.example.com/" + p + "//mcp",
			"https://mcp.example.com///" + p + "///mcp//",
			"https://mcp.example.com/" + p + "/x/..//mcp",
		}
		for _, uri := range alike {
			a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + theirs + "/oauth/resources", Header: attacker.Bearer(),
				Body: map[string]any{"uri": uri, "name": "squatter"}}).Expect(t, 409, map[string]any{"code": "resource_taken"})
		}
		agent := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/projects/" + mine + "/ai/agents", Body: map[string]any{}, Header: owner.Bearer()}).
			Expect(t, 200, nil)["plaintext"].(string)
		for _, uri := range alike {
			form := url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"}, "subject_token": {agent},
				"subject_token_type": {"urn:ietf:params:oauth:token-type:access_token"}, "resource": {uri}}
			tok := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/token", Body: form.Encode(),
				Header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}}).Expect(t, 200, nil)["access_token"].(string)
			if aud := audience(t, tok); aud != registered {
				t.Errorf("resource %s: aud %q, want %q as registered", uri, aud, registered)
			}
		}
	})
}

// A resource whose canonical form an older release kept with an empty segment (…//mcp)
// gets the collapsed one when a server starts, so lookups, which compute the collapsed
// form, still find it.
func TestBackfillCollapsesEmptySegments(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		dbURL := st.URL(t)
		a := apptest.StartURL(t, st.Name, dbURL)
		ctx := context.Background()
		owner := a.SignUp(t)
		mine := a.CreateProject(t, owner)
		uri := "https://legacy.example.com//" + strings.ToLower(mine) + "/mcp"
		if err := a.Ent.Resource.Create().SetID("res_00000000000000000000000003").SetProjectID(mine).SetURI(uri).SetCanonicalURI(uri).
			SetName("old").SetScopes([]string{}).SetCreatedAt(a.Clock.Now()).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		var svc *resource.Service
		apptest.StartURL(t, st.Name, dbURL, apptest.WithFx(fx.Populate(&svc)))
		for _, spelling := range []string{uri, "https://legacy.example.com/" + strings.ToLower(mine) + "/mcp"} {
			c, _ := platformresource.Canonical(spelling)
			got, ok, err := svc.Lookup(ctx, c)
			if err != nil || !ok || got.ProjectID != mine || got.URI != uri {
				t.Fatalf("lookup of %s after backfill: %+v %v %v", spelling, got, ok, err)
			}
		}
	})
}
