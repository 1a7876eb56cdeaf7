package scim_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/authcore/authcore/ent/orgmember"
	entuser "github.com/authcore/authcore/ent/user"
	"github.com/authcore/authcore/internal/apptest"
)

// member is userID's role in the world's org, "" when not a member.
func (w *world) member(t *testing.T, userID string) string {
	t.Helper()
	m, err := w.ent.OrgMember.Query().Where(orgmember.OrgID(w.org), orgmember.UserID(userID)).Only(t.Context())
	if err != nil {
		return ""
	}
	return m.Role
}

func (w *world) deprovisioned(t *testing.T, userID string) bool {
	t.Helper()
	u, err := w.ent.User.Get(t.Context(), userID)
	if err != nil {
		t.Fatal(err)
	}
	return u.DeprovisionedAt != nil
}

// A User in the org's verified domain becomes a verified user of the project's tenant and
// a member of the org; it is found by filter, deactivated (the person deprovisioned) and
// reactivated, and deleted (the person deprovisioned and out of the org).
func TestUsersProvision(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		created := w.scim(http.MethodPost, "/Users", user("ada@acme.example", map[string]any{"externalId": "00u1"})).
			Expect(t, 201, map[string]any{"userName": "ada@acme.example", "active": true, "externalId": "00u1"})
		id := created["id"].(string)
		meta := created["meta"].(map[string]any)
		if meta["resourceType"] != "User" || meta["version"] != `W/"1"` || !strings.HasSuffix(meta["location"].(string), w.base+"/Users/"+id) {
			t.Fatalf("meta %v", meta)
		}
		u, err := w.ent.User.Query().Where(entuser.TenantID(w.project), entuser.Email("ada@acme.example")).Only(t.Context())
		if err != nil || !u.EmailVerified {
			t.Fatalf("tenant user %v %v", u, err)
		}
		if role := w.member(t, u.ID); role != "member" {
			t.Fatalf("role %q", role)
		}
		w.scim(http.MethodGet, "/Users/"+id, nil).Expect(t, 200, map[string]any{"id": id})

		// Okta's lookup before it creates.
		q := "/Users?filter=" + url.QueryEscape(`userName eq "ADA@acme.example"`)
		w.scim(http.MethodGet, q, nil).Expect(t, 200, map[string]any{"totalResults": 1, "startIndex": 1, "itemsPerPage": 1})
		w.scim(http.MethodGet, "/Users?filter="+url.QueryEscape(`userName eq "bob@acme.example"`), nil).Expect(t, 200, map[string]any{"totalResults": 0, "Resources": []any{}})
		// userName is unique in the directory, whatever its case.
		scimError(t, w.scim(http.MethodPost, "/Users", user("Ada@Acme.example", nil)), 409, "uniqueness")

		// Deactivated: the person is deprovisioned; active again: reprovisioned.
		patch := func(ops ...map[string]any) *apptest.Response {
			return w.scim(http.MethodPatch, "/Users/"+id, map[string]any{"schemas": []string{"urn:ietf:params:scim:api:messages:2.0:PatchOp"}, "Operations": ops})
		}
		patch(map[string]any{"op": "replace", "value": map[string]any{"active": false}}).Expect(t, 200, map[string]any{"active": false})
		if !w.deprovisioned(t, u.ID) {
			t.Fatal("not deprovisioned")
		}
		// A write that leaves active out keeps it (RFC 7643 gives it no default): neither a
		// PUT without it nor a PATCH removing it reprovisions.
		put := user("ada@acme.example", map[string]any{"externalId": "00u1"})
		delete(put, "active")
		w.scim(http.MethodPut, "/Users/"+id, put).Expect(t, 200, map[string]any{"active": false})
		patch(map[string]any{"op": "remove", "path": "active"}).Expect(t, 200, map[string]any{"active": false})
		if !w.deprovisioned(t, u.ID) {
			t.Fatal("reprovisioned by leaving active out")
		}
		patch(map[string]any{"op": "Replace", "path": "active", "value": "True"}).Expect(t, 200, map[string]any{"active": true})
		if w.deprovisioned(t, u.ID) {
			t.Fatal("not reprovisioned")
		}
		w.scim(http.MethodGet, "/Users?filter="+url.QueryEscape(`active eq true and emails[type eq "work" and value ew "@acme.example"]`), nil).
			Expect(t, 200, map[string]any{"totalResults": 1})

		// Deleted: deprovisioned, out of the org, gone from the directory.
		w.scim(http.MethodDelete, "/Users/"+id, nil).Expect(t, 204, nil)
		if !w.deprovisioned(t, u.ID) || w.member(t, u.ID) != "" {
			t.Fatal("deleted but still in")
		}
		scimError(t, w.scim(http.MethodGet, "/Users/"+id, nil), 404, "")
		actions := auditActions(t, w)
		for _, want := range []string{"scim.user_create", "scim.user_update", "scim.user_delete", "org.member_add", "org.member_remove"} {
			if !strings.Contains(actions, want) {
				t.Errorf("audit trail lacks %s: %s", want, actions)
			}
		}
		dir := w.do(http.MethodGet, w.dirs()+"/"+w.dir, nil).Expect(t, 200, nil)
		if dir["lastSyncAt"] == nil {
			t.Errorf("no lastSyncAt: %v", dir)
		}
	})
}

// An address outside the org's verified domains vouches for nothing: a new person is
// created unverified, an existing account is not linked.
func TestUsersOutsideVerifiedDomains(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		w.scim(http.MethodPost, "/Users", user("eve@elsewhere.example", nil)).Expect(t, 201, nil)
		u, err := w.ent.User.Query().Where(entuser.TenantID(w.project), entuser.Email("eve@elsewhere.example")).Only(t.Context())
		if err != nil || u.EmailVerified {
			t.Fatalf("tenant user %v %v", u, err)
		}
		existing := w.a.SignUpIn(t, w.project)
		scimError(t, w.scim(http.MethodPost, "/Users", user(existing.Email, nil)), 409, "uniqueness")
		if w.member(t, existing.UserID) != "" {
			t.Fatal("linked an account the org does not vouch for")
		}
	})
}

// Inside the org's verified domain an existing account is linked, not duplicated; when the
// directory deactivates it, its session ends and its password no longer signs in.
func TestUsersLinkAccountsInVerifiedDomains(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		addr := "grace@acme.example"
		signup := w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signup",
			Body: map[string]any{"email": addr, "password": "correct horse battery", "tenantId": w.project}}).Expect(t, 201, nil)
		userID := signup["user"].(map[string]any)["id"].(string)
		refresh := signup["session"].(map[string]any)["refreshToken"].(string)
		// Its holder proved the address (an unproven one is not linked:
		// TestDirectoryLinksOnlyWhatItsOrgVouchesFor).
		if err := w.ent.User.UpdateOneID(userID).SetEmailVerified(true).Exec(t.Context()); err != nil {
			t.Fatal(err)
		}
		got := w.scim(http.MethodPost, "/Users", user("Grace@Acme.example", nil)).Expect(t, 201, nil)
		r, err := w.ent.SCIMResource.Get(t.Context(), got["id"].(string))
		if err != nil || *r.UserID != userID || w.member(t, userID) != "member" {
			t.Fatalf("linked %v to %v (%v)", r, userID, err)
		}
		w.scim(http.MethodPatch, "/Users/"+got["id"].(string), patchOps(map[string]any{"op": "replace", "path": "active", "value": false})).Expect(t, 200, nil)
		w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/session/refresh", Body: map[string]any{"refreshToken": refresh}}).Expect(t, 401, nil)
		r2 := w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signin",
			Body: map[string]any{"email": addr, "password": "correct horse battery", "tenantId": w.project}})
		r2.Expect(t, 403, map[string]any{"code": "user_deprovisioned"})
		// A second User of the same directory cannot be the same person.
		scimError(t, w.scim(http.MethodPost, "/Users", map[string]any{"userName": "grace2", "emails": []any{map[string]any{"value": addr}}}), 409, "uniqueness")
	})
}
