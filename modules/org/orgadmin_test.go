package org_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/authcore/authcore/ent/orgmember"
	"github.com/authcore/authcore/internal/apptest"
)

func ownPath(orgID string) string { return "/v1/auth-core/orgs/" + orgID }

// adminWorld is a project with two orgs: A with an owner, an admin and a plain member,
// B with an owner of its own; all of them users of the project's tenant.
type adminWorld struct {
	a                      *apptest.App
	admin                  *apptest.Session // the project's admin, a dashboard user
	project, orgA, orgB    string
	owner, orgAdmin, plain *apptest.Session
	ownerB                 *apptest.Session
}

func newAdminWorld(t *testing.T, a *apptest.App) *adminWorld {
	t.Helper()
	w := &adminWorld{a: a, admin: a.SignUp(t)}
	w.project = a.CreateProject(t, w.admin)
	do := as(a, w.admin)
	w.orgA = do(http.MethodPost, orgsPath(w.project), map[string]any{"name": "Acme"}).Expect(t, 201, nil)["id"].(string)
	w.orgB = do(http.MethodPost, orgsPath(w.project), map[string]any{"name": "Globex"}).Expect(t, 201, nil)["id"].(string)
	w.owner, w.orgAdmin, w.plain, w.ownerB = a.SignUpIn(t, w.project), a.SignUpIn(t, w.project), a.SignUpIn(t, w.project), a.SignUpIn(t, w.project)
	for _, m := range []struct {
		org  string
		who  *apptest.Session
		role string
	}{{w.orgA, w.owner, "owner"}, {w.orgA, w.orgAdmin, "admin"}, {w.orgA, w.plain, "member"}, {w.orgB, w.ownerB, "owner"}} {
		do(http.MethodPost, orgsPath(w.project)+"/"+m.org+"/members", map[string]any{"userId": m.who.UserID, "role": m.role}).Expect(t, 201, nil)
	}
	return w
}

// An org's owners and admins, signed in to the project's tenant, manage its members
// with the project admins' bodies; an admin cannot make, change or remove an owner, and
// the last owner stays.
func TestOrgAdminsManageMembers(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := apptest.Start(t, st)
		w := newAdminWorld(t, a)
		members := ownPath(w.orgA) + "/members"
		byAdmin, byOwner := as(a, w.orgAdmin), as(a, w.owner)

		// A tenant user's own orgs, with their role.
		mine := as(a, w.owner)(http.MethodGet, "/v1/auth-core/orgs", nil).Expect(t, 200, nil)["orgs"].([]any)
		if len(mine) != 1 || mine[0].(map[string]any)["id"] != w.orgA || mine[0].(map[string]any)["role"] != "owner" || mine[0].(map[string]any)["name"] != "Acme" {
			t.Fatalf("owner's orgs: %v", mine)
		}
		if got := as(a, a.SignUpIn(t, w.project))(http.MethodGet, "/v1/auth-core/orgs", nil).Expect(t, 200, nil)["orgs"].([]any); len(got) != 0 {
			t.Errorf("a person of no org has orgs: %v", got)
		}

		if got := byAdmin(http.MethodGet, members, nil).Expect(t, 200, nil)["members"].([]any); len(got) != 3 {
			t.Fatalf("members: %v", got)
		}
		newcomer := a.SignUpIn(t, w.project)
		byAdmin(http.MethodPost, members, map[string]any{"email": strings.ToUpper(newcomer.Email), "role": "member"}).
			Expect(t, 201, map[string]any{"orgId": w.orgA, "userId": newcomer.UserID, "role": "member"})
		byAdmin(http.MethodPost, members, map[string]any{"userId": newcomer.UserID, "role": "member"}).Expect(t, 409, map[string]any{"code": "already_member"})
		byAdmin(http.MethodPatch, members+"/"+newcomer.UserID, map[string]any{"role": "admin"}).Expect(t, 200, map[string]any{"role": "admin"})
		byAdmin(http.MethodDelete, members+"/"+newcomer.UserID, nil).Expect(t, 200, map[string]any{"ok": true, "userId": newcomer.UserID})

		// Only an owner grants, changes or takes the owner role.
		byAdmin(http.MethodPost, members, map[string]any{"userId": newcomer.UserID, "role": "owner"}).Expect(t, 403, map[string]any{"code": "owner_required"})
		byAdmin(http.MethodPatch, members+"/"+w.plain.UserID, map[string]any{"role": "owner"}).Expect(t, 403, map[string]any{"code": "owner_required"})
		byAdmin(http.MethodPatch, members+"/"+w.owner.UserID, map[string]any{"role": "member"}).Expect(t, 403, map[string]any{"code": "owner_required"})
		byAdmin(http.MethodDelete, members+"/"+w.owner.UserID, nil).Expect(t, 403, map[string]any{"code": "owner_required"})
		// The last owner can be neither demoted nor removed, by themselves or a project admin.
		byOwner(http.MethodPatch, members+"/"+w.owner.UserID, map[string]any{"role": "admin"}).Expect(t, 409, map[string]any{"code": "last_owner"})
		byOwner(http.MethodDelete, members+"/"+w.owner.UserID, nil).Expect(t, 409, map[string]any{"code": "last_owner"})
		as(a, w.admin)(http.MethodDelete, orgsPath(w.project)+"/"+w.orgA+"/members/"+w.owner.UserID, nil).Expect(t, 409, map[string]any{"code": "last_owner"})
		// With a second owner, the first may step down; the org admin made owner now may
		// change owners too, as their role is read on every request.
		byOwner(http.MethodPatch, members+"/"+w.orgAdmin.UserID, map[string]any{"role": "owner"}).Expect(t, 200, map[string]any{"role": "owner"})
		byAdmin(http.MethodPatch, members+"/"+w.owner.UserID, map[string]any{"role": "admin"}).Expect(t, 200, map[string]any{"role": "admin"})
		byOwner(http.MethodPatch, members+"/"+w.plain.UserID, map[string]any{"role": "owner"}).Expect(t, 403, map[string]any{"code": "owner_required"})
		// Bad input: the project admins' own refusals.
		issuesName(t, byAdmin(http.MethodPost, members, map[string]any{"userId": w.plain.UserID}), "role")
		issuesName(t, byAdmin(http.MethodPatch, members+"/"+w.plain.UserID, map[string]any{"role": "nobody"}), "role")

		actions := auditActions(t, a, w.admin, w.project)
		for _, want := range []string{"org.member_add", "org.member_update", "org.member_remove"} {
			if !strings.Contains(actions, want) {
				t.Errorf("audit has no %s: %s", want, actions)
			}
		}
	})
}

// Nothing of another org is visible to an org admin (404), a plain member administers
// nothing (403), and dashboard sessions, even the project admin's, are no org admins (404).
func TestOrgAdminRefusals(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := apptest.Start(t, st)
		w := newAdminWorld(t, a)
		before := a.Ent.OrgMember.Query().Where(orgmember.ProjectID(w.project)).CountX(t.Context())
		routes := func(orgID string) []struct {
			method, path string
			body         any
		} {
			return []struct {
				method, path string
				body         any
			}{
				{http.MethodGet, ownPath(orgID) + "/members", nil},
				{http.MethodPost, ownPath(orgID) + "/members", map[string]any{"userId": w.plain.UserID, "role": "admin"}},
				{http.MethodPatch, ownPath(orgID) + "/members/" + w.ownerB.UserID, map[string]any{"role": "member"}},
				{http.MethodDelete, ownPath(orgID) + "/members/" + w.ownerB.UserID, nil},
				{http.MethodGet, ownPath(orgID) + "/invitations", nil},
				{http.MethodPost, ownPath(orgID) + "/invitations", map[string]any{"email": "x@example.com", "role": "member"}},
				{http.MethodDelete, ownPath(orgID) + "/invitations/oinv_nope", nil},
			}
		}
		otherAdmin := a.SignUp(t)
		otherProject := a.CreateProject(t, otherAdmin)
		otherOrg := as(a, otherAdmin)(http.MethodPost, orgsPath(otherProject), map[string]any{"name": "Elsewhere"}).Expect(t, 201, nil)["id"].(string)
		elsewhere := a.SignUpIn(t, otherProject)
		as(a, otherAdmin)(http.MethodPost, orgsPath(otherProject)+"/"+otherOrg+"/members", map[string]any{"userId": elsewhere.UserID, "role": "owner"}).Expect(t, 201, nil)

		for _, r := range routes(w.orgB) {
			// A's owner asks of B: not found, as is an org of no one.
			as(a, w.owner)(r.method, r.path, r.body).Expect(t, 404, map[string]any{"code": "not_found"})
			// An owner of another project's org asks of this project's B: not found.
			as(a, elsewhere)(r.method, r.path, r.body).Expect(t, 404, map[string]any{"code": "not_found"})
			// The project's own admin and another project's admin hold dashboard sessions:
			// no tenant's, so no org's.
			as(a, w.admin)(r.method, r.path, r.body).Expect(t, 404, map[string]any{"code": "not_found"})
			as(a, otherAdmin)(r.method, r.path, r.body).Expect(t, 404, map[string]any{"code": "not_found"})
			a.Do(apptest.Req{Method: r.method, Path: r.path, Body: r.body}).Expect(t, 401, nil)
		}
		for _, r := range routes("org_nope") {
			as(a, w.owner)(r.method, r.path, r.body).Expect(t, 404, map[string]any{"code": "not_found"})
		}
		for _, r := range routes(w.orgA) {
			as(a, w.plain)(r.method, r.path, r.body).Expect(t, 403, map[string]any{"code": "forbidden"})
		}
		// An admin of A names B's member through A's path: no such member of A.
		as(a, w.orgAdmin)(http.MethodPatch, ownPath(w.orgA)+"/members/"+w.ownerB.UserID, map[string]any{"role": "member"}).Expect(t, 404, nil)
		as(a, w.orgAdmin)(http.MethodDelete, ownPath(w.orgA)+"/members/"+w.ownerB.UserID, nil).Expect(t, 404, nil)
		// A dashboard session has no orgs of a tenant.
		as(a, w.admin)(http.MethodGet, "/v1/auth-core/orgs", nil).Expect(t, 403, nil)
		a.Do(apptest.Req{Method: http.MethodGet, Path: "/v1/auth-core/orgs"}).Expect(t, 401, nil)
		if n := a.Ent.OrgMember.Query().Where(orgmember.ProjectID(w.project)).CountX(t.Context()); n != before {
			t.Errorf("%d memberships after refusals, want %d", n, before)
		}
		if m := a.Ent.OrgMember.Query().Where(orgmember.OrgID(w.orgB), orgmember.UserID(w.ownerB.UserID)).OnlyX(t.Context()); m.Role != "owner" {
			t.Errorf("B's owner is %s now", m.Role)
		}
	})
}

// A setup session administers the parts of its org its link names, never its people: its
// members, invitations and agent tokens are refused (403), even with every intent.
func TestSetupSessionsManageNoPeople(t *testing.T) {
	a := apptest.Start(t, apptest.Stores(t)[0])
	w := newAdminWorld(t, a)
	made := as(a, w.admin)(http.MethodPost, orgsPath(w.project)+"/"+w.orgA+"/setup-links",
		map[string]any{"intents": []string{"domains", "sso", "directory", "audit"}}).Expect(t, 201, nil)
	_, link, _ := strings.Cut(made["url"].(string), "/console/setup#")
	setup := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/orgs/setup/open", Body: map[string]any{"token": link}}).
		Expect(t, 200, nil)["setupToken"].(string)
	bearer := map[string]string{"Authorization": "Bearer " + setup}
	for _, r := range []struct {
		method, path string
		body         any
	}{
		{http.MethodGet, ownPath(w.orgA) + "/members", nil},
		{http.MethodPost, ownPath(w.orgA) + "/members", map[string]any{"userId": w.plain.UserID, "role": "owner"}},
		{http.MethodDelete, ownPath(w.orgA) + "/members/" + w.owner.UserID, nil},
		{http.MethodGet, ownPath(w.orgA) + "/invitations", nil},
		{http.MethodPost, ownPath(w.orgA) + "/invitations", map[string]any{"email": "it@example.com", "role": "owner"}},
		{http.MethodGet, ownPath(w.orgA) + "/ai/agents", nil},
		{http.MethodPost, ownPath(w.orgA) + "/ai/agents", map[string]any{}},
	} {
		a.Do(apptest.Req{Method: r.method, Path: r.path, Body: r.body, Header: bearer}).Expect(t, 403, nil)
	}
	if n := a.Ent.OrgMember.Query().Where(orgmember.OrgID(w.orgA)).CountX(t.Context()); n != 3 {
		t.Errorf("A has %d members, want 3", n)
	}
}
