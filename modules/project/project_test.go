package project_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/authcore/authcore/ent/auditevent"
	"github.com/authcore/authcore/ent/membership"
	"github.com/authcore/authcore/internal/apptest"
)

func TestMain(m *testing.M) { apptest.Main(m) }

func TestCreateProject(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := apptest.Start(t, st)
		owner := a.SignUp(t)
		create := func(body any, header map[string]string) *apptest.Response {
			return a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects", Body: body, Header: header})
		}
		t.Run("201 with tenant = id and role admin", func(t *testing.T) {
			got := create(map[string]any{"name": "Acme"}, owner.Bearer()).Expect(t, 201, map[string]any{"name": "Acme", "role": "admin"})
			if id := got["id"].(string); !strings.HasPrefix(id, "prj_") || got["tenantId"] != id || got["createdAt"] == nil {
				t.Fatalf("%v", got)
			}
		})
		t.Run("80 multi-byte characters accepted", func(t *testing.T) {
			create(map[string]any{"name": strings.Repeat("é", 80)}, owner.Bearer()).Expect(t, 201, nil)
		})
		for name, body := range map[string]any{
			"missing body":      nil,
			"unparsable body":   "{",
			"missing name":      map[string]any{},
			"empty name":        map[string]any{"name": ""},
			"81 characters":     map[string]any{"name": strings.Repeat("x", 81)},
			"control character": map[string]any{"name": "a\u0007b"},
			"name not a string": map[string]any{"name": 7},
			"blank name":        map[string]any{"name": "   "},
		} {
			t.Run(name+" is 400 validation_failed", func(t *testing.T) {
				create(body, owner.Bearer()).Expect(t, 400, map[string]any{"code": "validation_failed"})
			})
		}
		t.Run("anonymous is 401", func(t *testing.T) {
			create(map[string]any{"name": "x"}, nil).Expect(t, 401, map[string]any{"code": "unauthorized"})
		})
		t.Run("a tenant's user is 401", func(t *testing.T) {
			prj := a.CreateProject(t, owner)
			tu := a.SignUpIn(t, prj)
			create(map[string]any{"name": "x"}, tu.Bearer()).Expect(t, 401, map[string]any{"code": "unauthorized"})
		})
	})
}

func TestProjectsAndMembers(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := apptest.Start(t, st)
		ctx := context.Background()
		admin, dev, outsider := a.SignUp(t), a.SignUp(t), a.SignUp(t)
		prj := a.CreateProject(t, admin)
		other := a.CreateProject(t, outsider)
		members := func() int {
			n, _ := a.Ent.Membership.Query().Where(membership.ProjectID(prj)).Count(ctx)
			return n
		}
		add := func(as *apptest.Session, body any) *apptest.Response {
			return a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + prj + "/members", Body: body, Header: as.Bearer()})
		}
		remove := func(as *apptest.Session, userID string) *apptest.Response {
			return a.Do(apptest.Req{Method: http.MethodDelete, Path: "/v1/projects/" + prj + "/members/" + userID, Header: as.Bearer()})
		}

		t.Run("add by email, any case: 201 member, audited", func(t *testing.T) {
			got := add(admin, map[string]any{"email": strings.ToUpper(dev.Email), "role": "developer"}).
				Expect(t, 201, map[string]any{"userId": dev.UserID, "email": dev.Email, "role": "developer"})
			if got["createdAt"] == nil {
				t.Fatal("no createdAt")
			}
			ev, err := a.Ent.AuditEvent.Query().Where(auditevent.ProjectID(prj), auditevent.Action("project.member_add")).Only(ctx)
			if err != nil || *ev.ActorID != admin.UserID || ev.Metadata["userId"] != dev.UserID || ev.Metadata["role"] != "developer" {
				t.Fatalf("audit %+v %v", ev, err)
			}
		})
		t.Run("already a member: 409 already_member", func(t *testing.T) {
			add(admin, map[string]any{"userId": dev.UserID, "role": "viewer"}).Expect(t, 409, map[string]any{"code": "already_member"})
		})
		t.Run("no such dashboard user: 404 user_not_found", func(t *testing.T) {
			add(admin, map[string]any{"email": "nobody@example.com", "role": "viewer"}).Expect(t, 404, map[string]any{"code": "user_not_found"})
			add(admin, map[string]any{"userId": "usr_nope", "role": "viewer"}).Expect(t, 404, map[string]any{"code": "user_not_found"})
		})
		t.Run("a tenant's user cannot be added: 404 user_not_found", func(t *testing.T) {
			tu := a.SignUpIn(t, prj)
			add(admin, map[string]any{"userId": tu.UserID, "role": "viewer"}).Expect(t, 404, map[string]any{"code": "user_not_found"})
		})
		for name, body := range map[string]any{
			"missing body":       nil,
			"no email or userId": map[string]any{"role": "viewer"},
			"bad role":           map[string]any{"email": outsider.Email, "role": "owner"},
			"role not a string":  map[string]any{"email": outsider.Email, "role": 3},
			"missing role":       map[string]any{"email": outsider.Email},
			"email not a string": map[string]any{"email": 1, "role": "viewer"},
		} {
			t.Run(name+" is 400 validation_failed", func(t *testing.T) {
				before := members()
				add(admin, body).Expect(t, 400, map[string]any{"code": "validation_failed"})
				if members() != before {
					t.Fatal("a rejected call changed the members")
				}
			})
		}
		t.Run("a developer cannot add or remove: 403", func(t *testing.T) {
			before := members()
			add(dev, map[string]any{"email": outsider.Email, "role": "viewer"}).Expect(t, 403, map[string]any{"code": "forbidden"})
			remove(dev, admin.UserID).Expect(t, 403, map[string]any{"code": "forbidden"})
			if members() != before {
				t.Fatal("changed")
			}
		})
		t.Run("members and project are visible to members, with their role", func(t *testing.T) {
			got := a.Do(apptest.Req{Path: "/v1/projects/" + prj + "/members", Header: dev.Bearer()}).Expect(t, 200, nil)
			ms := got["members"].([]any)
			if len(ms) != 2 || ms[0].(map[string]any)["userId"] != admin.UserID || ms[0].(map[string]any)["role"] != "admin" || ms[0].(map[string]any)["email"] != admin.Email {
				t.Fatalf("%v", ms)
			}
			a.Do(apptest.Req{Path: "/v1/projects/" + prj, Header: dev.Bearer()}).Expect(t, 200, map[string]any{"id": prj, "role": "developer", "tenantId": prj})
		})
		t.Run("mine lists only my projects with my role", func(t *testing.T) {
			got := a.Do(apptest.Req{Path: "/v1/projects", Header: dev.Bearer()}).Expect(t, 200, nil)
			ps := got["projects"].([]any)
			if len(ps) != 1 || ps[0].(map[string]any)["id"] != prj || ps[0].(map[string]any)["role"] != "developer" {
				t.Fatalf("%v", ps)
			}
		})
		t.Run("non-member and no-such-project get the same 403", func(t *testing.T) {
			r1 := a.Do(apptest.Req{Path: "/v1/projects/" + prj, Header: outsider.Bearer()})
			r2 := a.Do(apptest.Req{Path: "/v1/projects/prj_doesnotexist", Header: outsider.Bearer()})
			r1.Expect(t, 403, map[string]any{"code": "forbidden"})
			r2.Expect(t, 403, nil)
			if string(r1.Body) != string(r2.Body) {
				t.Fatalf("bodies differ: %s vs %s", r1.Body, r2.Body)
			}
			a.Do(apptest.Req{Path: "/v1/projects/" + other, Header: admin.Bearer()}).Expect(t, 403, nil)
		})
		t.Run("removing the last admin: 409 last_admin", func(t *testing.T) {
			remove(admin, admin.UserID).Expect(t, 409, map[string]any{"code": "last_admin"})
		})
		t.Run("removing a non-member: 404 not_found", func(t *testing.T) {
			remove(admin, outsider.UserID).Expect(t, 404, map[string]any{"code": "not_found"})
		})
		t.Run("remove a member: 200, audited, access gone at once", func(t *testing.T) {
			remove(admin, dev.UserID).Expect(t, 200, map[string]any{"ok": true, "userId": dev.UserID})
			a.Do(apptest.Req{Path: "/v1/projects/" + prj, Header: dev.Bearer()}).Expect(t, 403, nil)
			if n, _ := a.Ent.AuditEvent.Query().Where(auditevent.ProjectID(prj), auditevent.Action("project.member_remove")).Count(ctx); n != 1 {
				t.Fatalf("%d remove records", n)
			}
		})
		t.Run("an admin may leave once another admin remains", func(t *testing.T) {
			add(admin, map[string]any{"userId": outsider.UserID, "role": "admin"}).Expect(t, 201, nil)
			remove(admin, admin.UserID).Expect(t, 200, nil)
		})
	})
}
