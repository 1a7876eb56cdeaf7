package project_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/authcore/authcore/ent/auditevent"
	"github.com/authcore/authcore/internal/apptest"
)

func TestProjectPolicy(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := apptest.Start(t, st)
		admin, viewer := a.SignUp(t), a.SignUp(t)
		prj := a.CreateProject(t, admin)
		a.AddMember(t, admin, prj, viewer, "viewer")
		do := func(s *apptest.Session, method, path string, body any) *apptest.Response {
			return a.Do(apptest.Req{Method: method, Path: path, Body: body, Header: s.Bearer()})
		}
		policy := "/v1/projects/" + prj + "/policy"

		t.Run("no policy at first; members read it, only admins change it", func(t *testing.T) {
			do(viewer, http.MethodGet, policy, nil).Expect(t, 200, map[string]any{"agentTokenMaxTtlHours": nil, "badgeMaxExpiresInDays": nil, "allowedScopes": nil})
			do(viewer, http.MethodPut, policy, map[string]any{"agentTokenMaxTtlHours": 24}).Expect(t, 403, map[string]any{"code": "forbidden"})
		})
		t.Run("bounds: 1..8760 hours, 1..365 days, scope patterns", func(t *testing.T) {
			for _, body := range []map[string]any{
				{"agentTokenMaxTtlHours": 0}, {"agentTokenMaxTtlHours": 8761}, {"agentTokenMaxTtlHours": 1.5},
				{"badgeMaxExpiresInDays": 366}, {"badgeMaxExpiresInDays": "30"}, {"allowedScopes": []string{"Bad Scope"}}, {"allowedScopes": "files:*"},
			} {
				do(admin, http.MethodPut, policy, body).Expect(t, 400, map[string]any{"code": "validation_failed"})
			}
		})
		do(admin, http.MethodPut, policy, map[string]any{"agentTokenMaxTtlHours": 24, "badgeMaxExpiresInDays": 30, "allowedScopes": []string{"files:*", "db:read"}}).
			Expect(t, 200, map[string]any{"agentTokenMaxTtlHours": 24, "badgeMaxExpiresInDays": 30, "allowedScopes": []string{"files:*", "db:read"}})
		ev, err := a.Ent.AuditEvent.Query().Where(auditevent.Action("project.policy_update"), auditevent.ProjectID(prj)).Only(context.Background())
		if err != nil || ev.Metadata["agentTokenMaxTtlHours"] != float64(24) {
			t.Fatalf("%+v %v", ev, err)
		}
		agents := "/v1/auth-core/projects/" + prj + "/ai/agents"
		badges := "/v1/projects/" + prj + "/service-badges"

		t.Run("agent tokens: beyond the policy is create_failed, the default is clamped", func(t *testing.T) {
			do(admin, http.MethodPost, agents, map[string]any{"ttlHours": 25}).Expect(t, 400, map[string]any{"code": "create_failed"})
			do(admin, http.MethodPost, agents, map[string]any{"scopes": []string{"db:write"}}).Expect(t, 400, map[string]any{"code": "create_failed"})
			do(admin, http.MethodPost, agents, map[string]any{"ttlHours": 24, "scopes": []string{"files:read", "db:read"}}).Expect(t, 200, nil)
			got := do(admin, http.MethodPost, agents, map[string]any{}).Expect(t, 200, nil)
			exp, _ := time.Parse(time.RFC3339, got["agent"].(map[string]any)["expiresAt"].(string))
			if d := exp.Sub(a.Clock.Now()); d > 24*time.Hour || d < 23*time.Hour {
				t.Fatalf("default lifetime %v, want clamped to 24 h", d)
			}
		})
		t.Run("badges: beyond the policy is exceeds_policy, none is clamped", func(t *testing.T) {
			r := do(admin, http.MethodPost, badges, map[string]any{"name": "x", "product": "db", "expiresInDays": 31}).Expect(t, 400, map[string]any{"code": "validation_failed"})
			if issues := r["issues"].([]any); issues[0].(map[string]any)["reason"] != "exceeds_policy" {
				t.Fatalf("%v", issues)
			}
			got := do(admin, http.MethodPost, badges, map[string]any{"name": "x", "product": "db"}).Expect(t, 201, nil)
			exp, _ := time.Parse(time.RFC3339, got["badge"].(map[string]any)["expiresAt"].(string))
			if d := exp.Sub(a.Clock.Now()); d > 30*24*time.Hour || d < 29*24*time.Hour {
				t.Fatalf("default lifetime %v, want clamped to 30 days", d)
			}
		})
		t.Run("null lifts a limit", func(t *testing.T) {
			do(admin, http.MethodPut, policy, map[string]any{"agentTokenMaxTtlHours": nil}).Expect(t, 200, map[string]any{"agentTokenMaxTtlHours": nil, "allowedScopes": nil})
			do(admin, http.MethodPost, agents, map[string]any{"ttlHours": 8760, "scopes": []string{"db:write"}}).Expect(t, 200, nil)
		})
	})
}

// The policy is cached where grants read it, and a change reaches every replica as it
// commits: the next mint on another replica already meets it.
func TestPolicyChangeReachesEveryReplica(t *testing.T) {
	var st apptest.Store
	for _, s := range apptest.Stores(t) {
		if s.Name == "postgres" {
			st = s
		}
	}
	if st.Name == "" {
		t.Skip("replicas share a PostgreSQL database")
	}
	a, b := apptest.Start(t, st), apptest.Start(t, st)
	admin := a.SignUp(t)
	prj := a.CreateProject(t, admin)
	mint := func(app *apptest.App, ttl int) *apptest.Response {
		return app.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/projects/" + prj + "/ai/agents", Header: admin.Bearer(),
			Body: map[string]any{"agentName": "x", "ttlHours": ttl}})
	}
	mint(b, 48).Expect(t, 200, nil) // b has read (and cached) the empty policy
	a.Do(apptest.Req{Method: http.MethodPut, Path: "/v1/projects/" + prj + "/policy", Header: admin.Bearer(), Body: map[string]any{"agentTokenMaxTtlHours": 24}}).Expect(t, 200, nil)
	deadline := time.Now().Add(5 * time.Second)
	for mint(b, 48).Status != 400 {
		if time.Now().After(deadline) {
			t.Fatal("the other replica still mints past the new policy")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A member's role is cached where the guard and the token endpoint read it, and a change
// of membership reaches every replica as it commits: a negative answer cached before the
// member was added does not keep them out, and a removed member is refused at once.
func TestMembershipChangeReachesEveryReplica(t *testing.T) {
	for _, st := range apptest.Stores(t) {
		t.Run(st.Name, func(t *testing.T) {
			a := apptest.Start(t, st)
			b := a // one instance on SQLite: the file is not shared between processes
			if st.Name == "postgres" {
				b = apptest.Start(t, st)
			}
			admin, other := a.SignUp(t), a.SignUp(t)
			prj := a.CreateProject(t, admin)
			get := func() int {
				return b.Do(apptest.Req{Method: http.MethodGet, Path: "/v1/projects/" + prj, Header: other.Bearer()}).Status
			}
			eventually := func(want int, why string) {
				deadline := time.Now().Add(5 * time.Second)
				for get() != want {
					if time.Now().After(deadline) {
						t.Fatal(why)
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
			refused := get() // b has read (and cached) that other is no member
			if refused != 403 && refused != 404 {
				t.Fatalf("a non-member read the project: %d", refused)
			}
			a.AddMember(t, admin, prj, other, "viewer")
			eventually(200, "the new member is still refused on the other replica")
			a.Do(apptest.Req{Method: http.MethodDelete, Path: "/v1/projects/" + prj + "/members/" + other.UserID, Header: admin.Bearer()}).Expect(t, 200, nil)
			eventually(refused, "the removed member is still let in on the other replica")
		})
	}
}
