package org_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/authcore/authcore/ent/orgmember"
	"github.com/authcore/authcore/internal/apptest"
)

func TestMain(m *testing.M) { apptest.Main(m) }

func orgsPath(project string) string { return "/v1/projects/" + project + "/orgs" }

func rolesPath(project string) string { return "/v1/projects/" + project + "/org-roles" }

// as sends requests with s's session.
func as(a *apptest.App, s *apptest.Session) func(method, path string, body any) *apptest.Response {
	return func(method, path string, body any) *apptest.Response {
		return a.Do(apptest.Req{Method: method, Path: path, Body: body, Header: s.Bearer()})
	}
}

// A project admin creates an org, defines roles, adds members of the project's tenant by
// id and by email, changes and removes them, renames the org and deletes it; each change
// is in the project's audit trail.
func TestOrgs(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := apptest.Start(t, st)
		admin := a.SignUp(t)
		project := a.CreateProject(t, admin)
		do := as(a, admin)

		acme := do(http.MethodPost, orgsPath(project), map[string]any{"name": "Acme Corp. (EU)"}).
			Expect(t, 201, map[string]any{"projectId": project, "name": "Acme Corp. (EU)", "slug": "acme-corp-eu"})
		orgID := acme["id"].(string)
		if !strings.HasPrefix(orgID, "org_") {
			t.Fatalf("org id %q", orgID)
		}
		do(http.MethodPost, orgsPath(project), map[string]any{"name": "Globex", "slug": "globex"}).Expect(t, 201, map[string]any{"slug": "globex"})
		do(http.MethodPost, orgsPath(project), map[string]any{"name": "Acme again", "slug": "acme-corp-eu"}).Expect(t, 409, map[string]any{"code": "slug_taken"})
		do(http.MethodPost, orgsPath(project), map[string]any{"name": "ACME corp EU"}).Expect(t, 409, map[string]any{"code": "slug_taken"})
		list := do(http.MethodGet, orgsPath(project), nil).Expect(t, 200, nil)["orgs"].([]any)
		if len(list) != 2 || list[0].(map[string]any)["id"] != orgID {
			t.Fatalf("orgs: %v", list)
		}
		one := orgsPath(project) + "/" + orgID
		do(http.MethodGet, one, nil).Expect(t, 200, map[string]any{"id": orgID, "slug": "acme-corp-eu"})
		do(http.MethodPatch, one, map[string]any{"name": "Acme"}).Expect(t, 200, map[string]any{"name": "Acme", "slug": "acme-corp-eu"})
		do(http.MethodPatch, one, map[string]any{"slug": "acme"}).Expect(t, 200, map[string]any{"name": "Acme", "slug": "acme"})
		do(http.MethodPatch, one, map[string]any{"slug": "globex"}).Expect(t, 409, map[string]any{"code": "slug_taken"})

		// Roles: the built-ins, then the project's; a PUT replaces them.
		roles := do(http.MethodPut, rolesPath(project), []any{map[string]any{"name": "billing", "permissions": []string{"invoices:read", "invoices:write"}},
			map[string]any{"name": "viewer", "permissions": []string{}}}).Expect(t, 200, nil)
		if got, _ := json.Marshal(roles["roles"]); string(got) != `[{"builtIn":true,"name":"owner","permissions":[]},{"builtIn":true,"name":"admin","permissions":[]},`+
			`{"builtIn":true,"name":"member","permissions":[]},{"builtIn":false,"name":"billing","permissions":["invoices:read","invoices:write"]},`+
			`{"builtIn":false,"name":"viewer","permissions":[]}]` {
			t.Errorf("roles: %s", got)
		}
		do(http.MethodGet, rolesPath(project), nil).Expect(t, 200, nil)

		// Members are users of the project's tenant, by id or by email.
		ada, grace := a.SignUpIn(t, project), a.SignUpIn(t, project)
		members := one + "/members"
		do(http.MethodPost, members, map[string]any{"userId": ada.UserID, "role": "owner"}).
			Expect(t, 201, map[string]any{"orgId": orgID, "userId": ada.UserID, "email": ada.Email, "role": "owner"})
		do(http.MethodPost, members, map[string]any{"email": strings.ToUpper(grace.Email), "role": "billing"}).
			Expect(t, 201, map[string]any{"userId": grace.UserID, "email": grace.Email, "role": "billing"})
		do(http.MethodPost, members, map[string]any{"email": grace.Email, "role": "member"}).Expect(t, 409, map[string]any{"code": "already_member"})
		do(http.MethodPost, members, map[string]any{"userId": ada.UserID, "role": "auditor"}).Expect(t, 400, map[string]any{"code": "validation_failed"})
		// A person is a member of any number of orgs.
		globex := list[1].(map[string]any)["id"].(string)
		do(http.MethodPost, orgsPath(project)+"/"+globex+"/members", map[string]any{"userId": ada.UserID, "role": "viewer"}).Expect(t, 201, nil)

		got := do(http.MethodGet, members, nil).Expect(t, 200, nil)["members"].([]any)
		if len(got) != 2 || got[0].(map[string]any)["userId"] != ada.UserID || got[1].(map[string]any)["role"] != "billing" {
			t.Fatalf("members: %v", got)
		}
		do(http.MethodPatch, members+"/"+grace.UserID, map[string]any{"role": "admin"}).Expect(t, 200, map[string]any{"role": "admin", "email": grace.Email})
		do(http.MethodPatch, members+"/"+grace.UserID, map[string]any{"role": "nobody"}).Expect(t, 400, map[string]any{"code": "validation_failed"})
		do(http.MethodPatch, members+"/usr_nope", map[string]any{"role": "admin"}).Expect(t, 404, nil)

		// A person deleted from the tenant is no longer listed as a member.
		gone := a.SignUpIn(t, project)
		do(http.MethodPost, members, map[string]any{"userId": gone.UserID, "role": "member"}).Expect(t, 201, nil)
		do(http.MethodDelete, "/v1/projects/"+project+"/users/"+gone.UserID, nil).Expect(t, 200, nil)
		if got := do(http.MethodGet, members, nil).Expect(t, 200, nil)["members"].([]any); len(got) != 2 {
			t.Errorf("members after a person's deletion: %v", got)
		}

		// A role members hold cannot be removed; once nobody holds it, it can.
		do(http.MethodPut, rolesPath(project), []any{}).Expect(t, 409, map[string]any{"code": "role_in_use"})
		do(http.MethodDelete, members+"/"+grace.UserID, nil).Expect(t, 200, map[string]any{"ok": true, "userId": grace.UserID})
		do(http.MethodDelete, members+"/"+grace.UserID, nil).Expect(t, 404, nil)

		// Deleting an org removes its memberships, not the people, nor their other orgs'.
		do(http.MethodDelete, one, nil).Expect(t, 200, map[string]any{"ok": true, "id": orgID, "membersRemoved": 2})
		do(http.MethodGet, one, nil).Expect(t, 404, map[string]any{"code": "not_found"})
		do(http.MethodGet, members, nil).Expect(t, 404, nil)
		if n := a.Ent.OrgMember.Query().Where(orgmember.OrgID(orgID)).CountX(t.Context()); n != 0 {
			t.Errorf("%d memberships outlive their org", n)
		}
		if n := a.Ent.OrgMember.Query().Where(orgmember.OrgID(globex)).CountX(t.Context()); n != 1 {
			t.Errorf("globex has %d members, want 1", n)
		}
		do(http.MethodPut, rolesPath(project), []any{map[string]any{"name": "viewer", "permissions": []string{"reports:read"}}}).Expect(t, 200, nil)

		actions := auditActions(t, a, admin, project)
		for _, want := range []string{"org.create", "org.update", "org.delete", "org.member_add", "org.member_update", "org.member_remove", "org.roles_put"} {
			if !strings.Contains(actions, want) {
				t.Errorf("audit has no %s: %s", want, actions)
			}
		}
	})
}

func auditActions(t *testing.T, a *apptest.App, admin *apptest.Session, project string) string {
	t.Helper()
	r := as(a, admin)(http.MethodGet, "/v1/projects/"+project+"/audit?limit=200", nil).Expect(t, 200, nil)
	var out []string
	for _, e := range r["events"].([]any) {
		out = append(out, e.(map[string]any)["action"].(string))
	}
	return strings.Join(out, " ")
}

// Only the project's admins reach its orgs; another project's path finds none of them,
// and only users of the project's own tenant become members.
func TestOrgsAreTheProjectAdmins(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := apptest.Start(t, st)
		admin := a.SignUp(t)
		project := a.CreateProject(t, admin)
		do := as(a, admin)
		orgID := do(http.MethodPost, orgsPath(project), map[string]any{"name": "Initech"}).Expect(t, 201, nil)["id"].(string)
		one := orgsPath(project) + "/" + orgID

		other := a.SignUp(t)
		otherProject := a.CreateProject(t, other)
		for _, r := range []struct {
			method, path string
			body         any
		}{
			{http.MethodGet, orgsPath(project), nil},
			{http.MethodPost, orgsPath(project), map[string]any{"name": "Mine now"}},
			{http.MethodGet, one, nil},
			{http.MethodPatch, one, map[string]any{"name": "Mine now"}},
			{http.MethodDelete, one, nil},
			{http.MethodGet, one + "/members", nil},
			{http.MethodPut, rolesPath(project), []any{}},
		} {
			as(a, other)(r.method, r.path, r.body).Expect(t, 403, nil)
		}
		// Another project's org is not found through one's own project.
		as(a, other)(http.MethodGet, orgsPath(otherProject)+"/"+orgID, nil).Expect(t, 404, map[string]any{"code": "not_found"})
		as(a, other)(http.MethodDelete, orgsPath(otherProject)+"/"+orgID, nil).Expect(t, 404, nil)
		as(a, other)(http.MethodPost, orgsPath(otherProject)+"/"+orgID+"/members", map[string]any{"userId": other.UserID, "role": "member"}).Expect(t, 404, nil)

		// A developer of the project is no admin.
		dev := a.SignUp(t)
		a.AddMember(t, admin, project, dev, "developer")
		as(a, dev)(http.MethodGet, orgsPath(project), nil).Expect(t, 403, nil)
		as(a, dev)(http.MethodPost, orgsPath(project), map[string]any{"name": "Dev org"}).Expect(t, 403, nil)

		// Dashboard users (tenant "public") and another project's tenant users are not
		// users of this project's tenant: 404, by id or by email.
		stranger := a.SignUpIn(t, otherProject)
		members := one + "/members"
		for _, u := range []*apptest.Session{dev, stranger} {
			do(http.MethodPost, members, map[string]any{"userId": u.UserID, "role": "member"}).Expect(t, 404, map[string]any{"code": "not_found"})
			do(http.MethodPost, members, map[string]any{"email": u.Email, "role": "member"}).Expect(t, 404, map[string]any{"code": "not_found"})
		}
		do(http.MethodPost, members, map[string]any{"userId": "usr_nope", "role": "member"}).Expect(t, 404, nil)
		do(http.MethodPost, members, map[string]any{"email": "nobody@nowhere.example", "role": "member"}).Expect(t, 404, nil)
		if n := a.Ent.OrgMember.Query().Where(orgmember.OrgID(orgID)).CountX(t.Context()); n != 0 {
			t.Errorf("%d memberships after refusals", n)
		}
	})
}

func issuesName(t *testing.T, r *apptest.Response, field string) {
	t.Helper()
	got := r.Expect(t, 400, map[string]any{"code": "validation_failed"})
	issues, _ := json.Marshal(got["issues"])
	if !strings.Contains(string(issues), `"field":"`+field+`"`) {
		t.Errorf("issues %s do not name %s", issues, field)
	}
}

// Each rule of an org's body has its own case.
func TestOrgBodyRefusals(t *testing.T) {
	a := apptest.Start(t, apptest.Stores(t)[0])
	admin := a.SignUp(t)
	project := a.CreateProject(t, admin)
	do := as(a, admin)
	cases := []struct {
		name  string
		body  any
		field string
	}{
		{"missing body", nil, "body"},
		{"unparsable body", "{", "body"},
		{"an array", []any{}, "body"},
		{"no name", map[string]any{"slug": "acme"}, "name"},
		{"name null", map[string]any{"name": nil}, "name"},
		{"name not a string", map[string]any{"name": 5}, "name"},
		{"name 0 characters", map[string]any{"name": ""}, "name"},
		{"name 81 characters", map[string]any{"name": strings.Repeat("n", 81)}, "name"},
		{"name only spaces", map[string]any{"name": "   "}, "name"},
		{"name with a control character", map[string]any{"name": "Acme\nCorp"}, "name"},
		{"slug not a string", map[string]any{"name": "Acme", "slug": 1}, "slug"},
		{"slug empty", map[string]any{"name": "Acme", "slug": ""}, "slug"},
		{"slug upper case", map[string]any{"name": "Acme", "slug": "Acme"}, "slug"},
		{"slug with a space", map[string]any{"name": "Acme", "slug": "ac me"}, "slug"},
		{"slug starting with -", map[string]any{"name": "Acme", "slug": "-acme"}, "slug"},
		{"slug 65 characters", map[string]any{"name": "Acme", "slug": strings.Repeat("s", 65)}, "slug"},
		{"no slug to derive", map[string]any{"name": "日本"}, "slug"},
		{"unknown field", map[string]any{"name": "Acme", "domain": "acme.example"}, "domain"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { issuesName(t, do(http.MethodPost, orgsPath(project), c.body), c.field) })
	}
	// The boundaries that pass: 1 and 80 characters, a 64-character slug.
	do(http.MethodPost, orgsPath(project), map[string]any{"name": "A"}).Expect(t, 201, map[string]any{"slug": "a"})
	long := do(http.MethodPost, orgsPath(project), map[string]any{"name": strings.Repeat("n", 80)}).Expect(t, 201, nil)
	if s := long["slug"].(string); len(s) != 64 {
		t.Errorf("derived slug of %d characters, want 64", len(s))
	}
	do(http.MethodPost, orgsPath(project), map[string]any{"name": "S", "slug": strings.Repeat("s", 64)}).Expect(t, 201, nil)
	if n := a.Ent.Org.Query().CountX(t.Context()); n != 3 {
		t.Fatalf("%d orgs after the refusals, want the 3 accepted", n)
	}

	one := orgsPath(project) + "/" + long["id"].(string)
	for name, c := range map[string]struct {
		body  any
		field string
	}{
		"missing body": {nil, "body"}, "name 81": {map[string]any{"name": strings.Repeat("n", 81)}, "name"},
		"name null": {map[string]any{"name": nil}, "name"}, "slug null": {map[string]any{"slug": nil}, "slug"},
		"bad slug": {map[string]any{"slug": "a_b"}, "slug"}, "unknown field": {map[string]any{"id": "org_x"}, "id"},
	} {
		t.Run("patch "+name, func(t *testing.T) { issuesName(t, do(http.MethodPatch, one, c.body), c.field) })
	}

	members := one + "/members"
	user := a.SignUpIn(t, project)
	for name, c := range map[string]struct {
		body  any
		field string
	}{
		"missing body":        {nil, "body"},
		"unparsable":          {"[", "body"},
		"neither id nor mail": {map[string]any{"role": "member"}, "userId"},
		"both id and mail":    {map[string]any{"userId": user.UserID, "email": user.Email, "role": "member"}, "email"},
		"userId a number":     {map[string]any{"userId": 7, "role": "member"}, "userId"},
		"email not an email":  {map[string]any{"email": "nobody", "role": "member"}, "email"},
		"no role":             {map[string]any{"userId": user.UserID}, "role"},
		"role a number":       {map[string]any{"userId": user.UserID, "role": 1}, "role"},
		"role not defined":    {map[string]any{"userId": user.UserID, "role": "auditor"}, "role"},
		"unknown field":       {map[string]any{"userId": user.UserID, "role": "member", "admin": true}, "admin"},
	} {
		t.Run("member "+name, func(t *testing.T) { issuesName(t, do(http.MethodPost, members, c.body), c.field) })
	}
}

// Each rule of PUT …/org-roles has its own case; a refused body changes nothing.
func TestOrgRoleRefusals(t *testing.T) {
	a := apptest.Start(t, apptest.Stores(t)[0])
	admin := a.SignUp(t)
	project := a.CreateProject(t, admin)
	do := as(a, admin)
	do(http.MethodPut, rolesPath(project), []any{map[string]any{"name": "billing", "permissions": []string{"invoices:read"}}}).Expect(t, 200, nil)
	role := func(name any, perms any) map[string]any { return map[string]any{"name": name, "permissions": perms} }
	perms := make([]string, 51)
	for i := range perms {
		perms[i] = "p" + strings.Repeat("x", i) + ":read"
	}
	many := make([]any, 51)
	for i := range many {
		many[i] = role("r"+strings.Repeat("x", i), []string{})
	}
	cases := []struct {
		name  string
		body  any
		field string
	}{
		{"missing body", nil, "body"},
		{"unparsable", "[", "body"},
		{"an object", map[string]any{"name": "x"}, "body"},
		{"51 roles", many, "body"},
		{"an element not an object", []any{"billing"}, "[0]"},
		{"no name", []any{map[string]any{"permissions": []string{}}}, "[0].name"},
		{"name a number", []any{role(3, []string{})}, "[0].name"},
		{"owner is built in", []any{role("owner", []string{"x:y"})}, "[0].name"},
		{"admin is built in", []any{role("admin", []string{})}, "[0].name"},
		{"member is built in", []any{role("member", []string{})}, "[0].name"},
		{"name upper case", []any{role("Billing", []string{})}, "[0].name"},
		{"name 65 characters", []any{role(strings.Repeat("r", 65), []string{})}, "[0].name"},
		{"name twice", []any{role("ops", []string{}), role("ops", []string{})}, "[1].name"},
		{"no permissions", []any{map[string]any{"name": "ops"}}, "[0].permissions"},
		{"permissions not strings", []any{role("ops", []any{1})}, "[0].permissions"},
		{"51 permissions", []any{role("ops", perms)}, "[0].permissions"},
		{"permission with a space", []any{role("ops", []string{"invoices read"})}, "[0].permissions"},
		{"permission empty part", []any{role("ops", []string{"invoices::read"})}, "[0].permissions"},
		{"unknown field", []any{map[string]any{"name": "ops", "permissions": []string{}, "builtIn": true}}, "[0].builtIn"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { issuesName(t, do(http.MethodPut, rolesPath(project), c.body), c.field) })
	}
	got, _ := json.Marshal(do(http.MethodGet, rolesPath(project), nil).Expect(t, 200, nil)["roles"])
	if !strings.Contains(string(got), `{"builtIn":false,"name":"billing","permissions":["invoices:read"]}`) || strings.Count(string(got), `"name"`) != 4 {
		t.Errorf("a refused PUT changed the roles: %s", got)
	}
	// 50 permissions pass.
	do(http.MethodPut, rolesPath(project), []any{role("ops", perms[:50])}).Expect(t, 200, nil)
}
