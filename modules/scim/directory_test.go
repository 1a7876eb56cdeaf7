package scim_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/authcore/authcore/ent/scimresource"
	"github.com/authcore/authcore/internal/apptest"
)

// A project admin creates a directory of an org (its token shown once), lists and reads
// it with its counts, maps groups to roles (checked), rolls its token (the old one dead at
// once) and deletes it; whoever holds the token revokes it (RFC 7009).
func TestDirectories(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		if !strings.HasPrefix(w.token, "ac_scim_") || !strings.HasPrefix(w.dir, "dir_") {
			t.Fatalf("token %q, id %q", w.token, w.dir)
		}
		one := w.dirs() + "/" + w.dir
		got := w.do(http.MethodGet, one, nil).Expect(t, 200, map[string]any{"id": w.dir, "orgId": w.org, "name": "Okta", "users": 0, "groups": 0,
			"lastSyncAt": nil, "tokenLive": true, "groupRoles": map[string]any{}})
		if !strings.HasSuffix(got["baseUrl"].(string), "/scim/v2/"+w.dir) || strings.Contains(string(w.do(http.MethodGet, one, nil).Body), w.token) {
			t.Fatalf("directory %v", got)
		}
		list := w.do(http.MethodGet, w.dirs(), nil).Expect(t, 200, nil)["directories"].([]any)
		if len(list) != 1 {
			t.Fatalf("directories %v", list)
		}

		t.Run("group roles are roles of the project's orgs", func(t *testing.T) {
			r := w.do(http.MethodPatch, one, map[string]any{"groupRoles": map[string]any{"Engineering": "auditor"}})
			r.Expect(t, 400, map[string]any{"code": "validation_failed"})
			w.do(http.MethodPatch, one, map[string]any{"groupRoles": map[string]any{"Admins": "owner"}}).Expect(t, 400, nil)
			w.do(http.MethodPatch, one, map[string]any{"groupRoles": "Admins"}).Expect(t, 400, nil)
			w.do(http.MethodPatch, one, map[string]any{"tokens": 1}).Expect(t, 400, nil)
			w.do(http.MethodPatch, one, map[string]any{"groupRoles": map[string]any{"Admins": "admin"}}).
				Expect(t, 200, map[string]any{"groupRoles": map[string]any{"Admins": "admin"}})
		})

		t.Run("token refusals", func(t *testing.T) {
			scimError(t, w.scim(http.MethodGet, "/Users", nil, ""), 401, "")
			scimError(t, w.scim(http.MethodGet, "/Users", nil, "ac_scim_nottoken"), 401, "")
			wrong := w.token[:len(w.token)-1] + map[bool]string{true: "A", false: "B"}[!strings.HasSuffix(w.token, "A")]
			scimError(t, w.scim(http.MethodGet, "/Users", nil, wrong), 401, "")
			// Another directory's token opens only its own directory.
			other := w.do(http.MethodPost, w.dirs(), nil).Expect(t, 201, nil)
			scimError(t, w.scim(http.MethodGet, "/Users", nil, other["token"].(string)), 401, "")
			scimError(t, w.a.Do(apptest.Req{Path: "/scim/v2/dir_nope/Users", Header: map[string]string{"Authorization": "Bearer " + w.token}}), 401, "")
			w.scim(http.MethodGet, "/Users", nil).Expect(t, 200, nil)
			// A session is no directory token.
			scimError(t, w.scim(http.MethodGet, "/Users", nil, w.admin.AccessToken), 401, "")
			w.do(http.MethodDelete, w.dirs()+"/"+other["id"].(string), nil).Expect(t, 200, nil)
		})

		t.Run("roll", func(t *testing.T) {
			rolled := w.do(http.MethodPost, one+"/token", nil).Expect(t, 200, map[string]any{"id": w.dir})
			scimError(t, w.scim(http.MethodGet, "/Users", nil), 401, "")
			w.token = rolled["token"].(string)
			w.scim(http.MethodGet, "/Users", nil).Expect(t, 200, nil)
		})

		t.Run("revoked by whoever holds it", func(t *testing.T) {
			w.a.PostForm("/v1/oauth/revoke", url.Values{"token": {w.token}}, nil).Expect(t, 200, nil)
			scimError(t, w.scim(http.MethodGet, "/Users", nil), 401, "")
			w.do(http.MethodGet, one, nil).Expect(t, 200, map[string]any{"tokenLive": false})
			rolled := w.do(http.MethodPost, one+"/token", nil).Expect(t, 200, nil)
			w.token = rolled["token"].(string)
			w.scim(http.MethodGet, "/ServiceProviderConfig", nil).Expect(t, 200, nil)
		})

		t.Run("another project's admin sees nothing", func(t *testing.T) {
			other := w.a.SignUp(t)
			p := w.a.CreateProject(t, other)
			w.a.Do(apptest.Req{Path: "/v1/projects/" + p + "/orgs/" + w.org + "/directories", Header: other.Bearer()}).Expect(t, 404, nil)
			w.a.Do(apptest.Req{Path: one, Header: other.Bearer()}).Expect(t, 403, nil)
		})

		actions := auditActions(t, w)
		for _, want := range []string{"scim.directory_create", "scim.directory_update", "scim.directory_roll", "scim.token_revoke", "scim.directory_delete"} {
			if !strings.Contains(actions, want) {
				t.Errorf("audit trail lacks %s: %s", want, actions)
			}
		}
		w.do(http.MethodDelete, one, nil).Expect(t, 200, map[string]any{"ok": true})
		w.do(http.MethodGet, one, nil).Expect(t, 404, map[string]any{"code": "directory_not_found"})
		scimError(t, w.scim(http.MethodGet, "/Users", nil), 401, "")

		t.Run("deleting the org drops its directories", func(t *testing.T) {
			d := w.do(http.MethodPost, w.dirs(), nil).Expect(t, 201, nil)
			w.token, w.base = d["token"].(string), "/scim/v2/"+d["id"].(string)
			w.scim(http.MethodPost, "/Users", user("ada@acme.example", nil)).Expect(t, 201, nil)
			w.do(http.MethodDelete, "/v1/projects/"+w.project+"/orgs/"+w.org, nil).Expect(t, 200, nil)
			scimError(t, w.scim(http.MethodGet, "/Users", nil), 401, "")
			if n, err := w.ent.SCIMResource.Query().Where(scimresource.ProjectID(w.project)).Count(t.Context()); err != nil || n != 0 {
				t.Fatalf("%d SCIM records left: %v", n, err)
			}
		})
	})
}

func auditActions(t *testing.T, w *world) string {
	t.Helper()
	events := w.do(http.MethodGet, "/v1/projects/"+w.project+"/audit?limit=200", nil).Expect(t, 200, nil)["events"].([]any)
	var out []string
	for _, e := range events {
		out = append(out, e.(map[string]any)["action"].(string))
	}
	return strings.Join(out, " ")
}
