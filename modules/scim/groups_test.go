package scim_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/authcore/authcore/internal/apptest"
)

// Groups map to org roles through the directory's groupRoles: a person in several mapped
// groups gets admin first, then the project's roles by name, then member; changing
// groupRoles, a group's members or deleting a group gives everyone their role again.
func TestGroupRoles(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		w.do(http.MethodPut, "/v1/projects/"+w.project+"/org-roles", []any{map[string]any{"name": "billing", "permissions": []string{"invoices:read"}},
			map[string]any{"name": "auditor", "permissions": []string{}}}).Expect(t, 200, nil)
		ids, people := map[string]string{}, map[string]string{}
		for _, n := range []string{"ada", "bob", "cy"} {
			u := w.scim(http.MethodPost, "/Users", user(n+"@acme.example", nil)).Expect(t, 201, nil)
			ids[n] = u["id"].(string)
			r, err := w.ent.SCIMResource.Get(t.Context(), ids[n])
			if err != nil {
				t.Fatal(err)
			}
			people[n] = *r.UserID
		}
		members := func(names ...string) []any {
			var out []any
			for _, n := range names {
				out = append(out, map[string]any{"value": ids[n]})
			}
			return out
		}
		admins := w.scim(http.MethodPost, "/Groups", map[string]any{"displayName": "Admins", "members": members("ada")}).Expect(t, 201, nil)["id"].(string)
		w.scim(http.MethodPost, "/Groups", map[string]any{"displayName": "Billing", "members": members("ada", "bob")}).Expect(t, 201, nil)
		w.scim(http.MethodPost, "/Groups", map[string]any{"displayName": "Audit", "members": members("bob", "cy")}).Expect(t, 201, nil)
		w.scim(http.MethodPost, "/Groups", map[string]any{"displayName": "Everyone", "members": members("ada", "bob", "cy")}).Expect(t, 201, nil)
		roles := func(want map[string]string) {
			t.Helper()
			for n, role := range want {
				if got := w.member(t, people[n]); got != role {
					t.Errorf("%s: role %q, want %q", n, got, role)
				}
			}
		}
		// No groupRoles: roles are the org admins', groups change nothing.
		roles(map[string]string{"ada": "member", "bob": "member", "cy": "member"})
		w.do(http.MethodPatch, w.dirs()+"/"+w.dir, map[string]any{"groupRoles": map[string]any{
			"Admins": "admin", "Billing": "billing", "Audit": "auditor", "Everyone": "member"}}).Expect(t, 200, nil)
		roles(map[string]string{"ada": "admin", "bob": "auditor", "cy": "auditor"})

		w.scim(http.MethodPatch, "/Groups/"+admins, patchOps(map[string]any{"op": "remove", "path": `members[value eq "` + ids["ada"] + `"]`})).Expect(t, 200, nil)
		roles(map[string]string{"ada": "billing"})
		w.scim(http.MethodPatch, "/Groups/"+admins, patchOps(map[string]any{"op": "add", "path": "members", "value": members("cy")})).Expect(t, 200, nil)
		roles(map[string]string{"cy": "admin"})
		w.scim(http.MethodDelete, "/Groups/"+admins, nil).Expect(t, 204, nil)
		roles(map[string]string{"cy": "auditor"})
		// A mapping to a role the project later drops is refused when set.
		w.do(http.MethodPatch, w.dirs()+"/"+w.dir, map[string]any{"groupRoles": map[string]any{"Audit": "nobody"}}).Expect(t, 400, nil)
		// Deleting a User takes it out of its groups.
		w.scim(http.MethodDelete, "/Users/"+ids["bob"], nil).Expect(t, 204, nil)
		list := w.scim(http.MethodGet, "/Groups?filter="+strings.ReplaceAll(`members.value eq "`+ids["bob"]+`"`, " ", "%20"), nil).Expect(t, 200, nil)
		if list["totalResults"].(float64) != 0 {
			t.Fatalf("bob is still in %v", list["Resources"])
		}
		got := w.do(http.MethodGet, w.dirs()+"/"+w.dir, nil).Expect(t, 200, map[string]any{"users": 2, "groups": 3})
		_ = got
	})
}

// An org's owner and a setup session whose link names "directory" manage the org's
// directories under /v1/auth-core/orgs/{orgId}; a setup link for another intent, the org's
// admin (a directory deprovisions owners, whom an admin may not unmake), a plain member,
// and another org's admin cannot.
func TestOrgOwnersAndSetupLinksManageDirectories(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		own := "/v1/auth-core/orgs/" + w.org + "/directories"
		link := func(intent string) map[string]string {
			made := w.do(http.MethodPost, "/v1/projects/"+w.project+"/orgs/"+w.org+"/setup-links", map[string]any{"intents": []string{intent}}).Expect(t, 201, nil)
			_, tok, _ := strings.Cut(made["url"].(string), "#")
			opened := w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/orgs/setup/open", Body: map[string]any{"token": tok}}).Expect(t, 200, nil)
			return map[string]string{"Authorization": "Bearer " + opened["setupToken"].(string)}
		}
		setup := link("directory")
		made := w.a.Do(apptest.Req{Method: http.MethodPost, Path: own, Header: setup, Body: map[string]any{"name": "Entra"}}).Expect(t, 201, nil)
		if !strings.HasPrefix(made["token"].(string), "ac_scim_") {
			t.Fatalf("made %v", made)
		}
		w.a.Do(apptest.Req{Path: own, Header: setup}).Expect(t, 200, nil)
		w.a.Do(apptest.Req{Path: own + "/" + made["id"].(string), Header: setup}).Expect(t, 200, map[string]any{"name": "Entra"})
		w.a.Do(apptest.Req{Method: http.MethodPost, Path: own + "/" + made["id"].(string) + "/token", Header: setup}).Expect(t, 200, nil)
		w.a.Do(apptest.Req{Path: own, Header: link("sso")}).Expect(t, 403, nil)

		// An owner of the org, a user of the project's tenant.
		owner := w.a.SignUpIn(t, w.project)
		w.do(http.MethodPost, "/v1/projects/"+w.project+"/orgs/"+w.org+"/members", map[string]any{"userId": owner.UserID, "role": "owner"}).Expect(t, 201, nil)
		list := w.a.Do(apptest.Req{Path: own, Header: owner.Bearer()}).Expect(t, 200, nil)["directories"].([]any)
		if len(list) != 2 {
			t.Fatalf("directories %v", list)
		}
		admin := w.a.SignUpIn(t, w.project)
		w.do(http.MethodPost, "/v1/projects/"+w.project+"/orgs/"+w.org+"/members", map[string]any{"userId": admin.UserID, "role": "admin"}).Expect(t, 201, nil)
		w.a.Do(apptest.Req{Path: own, Header: admin.Bearer()}).Expect(t, 403, nil)
		w.a.Do(apptest.Req{Method: http.MethodPost, Path: own, Header: admin.Bearer(), Body: map[string]any{"name": "Rogue"}}).Expect(t, 403, nil)
		plain := w.a.SignUpIn(t, w.project)
		w.do(http.MethodPost, "/v1/projects/"+w.project+"/orgs/"+w.org+"/members", map[string]any{"userId": plain.UserID, "role": "member"}).Expect(t, 201, nil)
		w.a.Do(apptest.Req{Path: own, Header: plain.Bearer()}).Expect(t, 403, nil)
		stranger := w.a.SignUpIn(t, w.project)
		w.a.Do(apptest.Req{Path: own, Header: stranger.Bearer()}).Expect(t, 404, nil)

		actions := auditActions(t, w)
		if !strings.Contains(actions, "scim.directory_create") {
			t.Fatalf("audit %s", actions)
		}
	})
}
