package scim_test

import (
	"fmt"
	"net/http"
	"strconv"
	"testing"

	entuser "github.com/authcore/authcore/ent/user"
	"github.com/authcore/authcore/internal/apptest"
)

// A directory links or creates only what its org vouches for. Two holes it closes: an
// account someone signed up for with an address of the org's domain and never proved
// (whose password may be an attacker's) is not handed the org's membership; and an org's
// directory does not provision addresses of a domain another org of the project verified
// (it would squat them: the other org's SAML and directory then meet an account it
// controls, and may deprovision).
func TestDirectoryLinksOnlyWhatItsOrgVouchesFor(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		signup := func(addr string) string {
			r := w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signup",
				Body: map[string]any{"email": addr, "password": "correct horse battery", "tenantId": w.project}}).Expect(t, 201, nil)
			return r["user"].(map[string]any)["id"].(string)
		}

		t.Run("an unproven account in the org's domain is not linked", func(t *testing.T) {
			squatter := signup("cfo@acme.example")
			scimError(t, w.scim(http.MethodPost, "/Users", user("cfo@acme.example", nil)), 409, "uniqueness")
			if role := w.member(t, squatter); role != "" {
				t.Fatalf("the unproven account became a member (%s): its password signs in to the org", role)
			}
			// Once its holder proves the address, the directory links it.
			if err := w.ent.User.UpdateOneID(squatter).SetEmailVerified(true).Exec(t.Context()); err != nil {
				t.Fatal(err)
			}
			w.scim(http.MethodPost, "/Users", user("cfo@acme.example", nil)).Expect(t, 201, nil)
			if w.member(t, squatter) != "member" {
				t.Fatal("the proven account was not linked")
			}
		})

		t.Run("another org's directory does not provision the org's domain", func(t *testing.T) {
			other := w.do(http.MethodPost, "/v1/projects/"+w.project+"/orgs", map[string]any{"name": "Globex"}).Expect(t, 201, nil)["id"].(string)
			d := w.do(http.MethodPost, "/v1/projects/"+w.project+"/orgs/"+other+"/directories", nil).Expect(t, 201, nil)
			r := w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/scim/v2/" + d["id"].(string) + "/Users", Body: user("dana@acme.example", nil),
				Header: map[string]string{"Content-Type": "application/scim+json", "Authorization": "Bearer " + d["token"].(string)}})
			scimError(t, r, 409, "uniqueness")
			if n, err := w.ent.User.Query().Where(entuser.TenantID(w.project), entuser.Email("dana@acme.example")).Count(t.Context()); err != nil || n != 0 {
				t.Fatalf("Globex's directory made %d accounts in Acme's domain (%v)", n, err)
			}
			// Acme's own directory then provisions her, verified.
			w.scim(http.MethodPost, "/Users", user("dana@acme.example", nil)).Expect(t, 201, nil)
		})
	})
}

// An IdP writes in parallel (Entra adds a group's members one PATCH each, at once): no
// write is lost, and of writes made on one version (If-Match) one wins, the others are
// 412, as RFC 7644 §3.14 has it.
func TestConcurrentWritesLoseNothing(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		const n = 8
		var ids []string
		for i := range n {
			ids = append(ids, w.scim(http.MethodPost, "/Users", user("p"+strconv.Itoa(i)+"@acme.example", nil)).Expect(t, 201, nil)["id"].(string))
		}
		group := w.scim(http.MethodPost, "/Groups", map[string]any{"displayName": "Staff"}).Expect(t, 201, nil)["id"].(string)
		statuses := make(chan int, n)
		for _, id := range ids {
			go func() {
				statuses <- w.scim(http.MethodPatch, "/Groups/"+group, patchOps(map[string]any{"op": "add", "path": "members",
					"value": []any{map[string]any{"value": id}}})).Status
			}()
		}
		for range n {
			if s := <-statuses; s != 200 {
				t.Errorf("add: status %d", s)
			}
		}
		got := w.scim(http.MethodGet, "/Groups/"+group, nil).Expect(t, 200, nil)
		if m, _ := got["members"].([]any); len(m) != n {
			t.Fatalf("%d of %d members kept: %v", len(m), n, got["members"])
		}

		version := got["meta"].(map[string]any)["version"].(string)
		for i := range n {
			go func() {
				statuses <- w.a.Do(apptest.Req{Method: http.MethodPatch, Path: w.base + "/Groups/" + group,
					Body:   patchOps(map[string]any{"op": "replace", "path": "displayName", "value": "Staff " + strconv.Itoa(i)}),
					Header: map[string]string{"Authorization": "Bearer " + w.token, "If-Match": version}}).Status
			}()
		}
		won := 0
		for range n {
			switch s := <-statuses; s {
			case 200:
				won++
			case 412:
			default:
				t.Errorf("If-Match: status %d", s)
			}
		}
		if won != 1 {
			t.Fatalf("%d writes on version %s won", won, version)
		}
	})
}

// A group PATCH may be 1 MiB (Okta and Entra push a large group's members at once): its
// members are merged in time linear in their number, so a token holder's body of 23,000
// members (none of them Users) is refused at once rather than holding a core for minutes
// (the merge compared each with every other; the client here gives up after 30 s).
func TestLargeGroupPatchIsLinear(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		group := w.scim(http.MethodPost, "/Groups", map[string]any{"displayName": "All"}).Expect(t, 201, nil)["id"].(string)
		members := make([]any, 23000)
		for i := range members {
			members[i] = map[string]any{"value": fmt.Sprintf("scr_%026d", i)}
		}
		scimError(t, w.scim(http.MethodPatch, "/Groups/"+group, patchOps(map[string]any{"op": "add", "path": "members", "value": members})), 400, "invalidValue")
	})
}

// A person the directory deleted (deprovisioned) and creates again, active (a rehire, or
// an IdP that re-pushes an unassigned person), signs in again: the new User's state is
// the person's, as a deactivated User set active again is.
func TestRecreatedUserIsReprovisioned(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		first := w.scim(http.MethodPost, "/Users", user("rehire@acme.example", nil)).Expect(t, 201, nil)["id"].(string)
		r, err := w.ent.SCIMResource.Get(t.Context(), first)
		if err != nil {
			t.Fatal(err)
		}
		w.scim(http.MethodDelete, "/Users/"+first, nil).Expect(t, 204, nil)
		if !w.deprovisioned(t, *r.UserID) {
			t.Fatal("not deprovisioned")
		}
		again := w.scim(http.MethodPost, "/Users", user("rehire@acme.example", nil)).Expect(t, 201, map[string]any{"active": true})["id"].(string)
		if w.deprovisioned(t, *r.UserID) || w.member(t, *r.UserID) != "member" {
			t.Fatal("created again, active, yet still deprovisioned or out of the org")
		}
		// Created inactive, the person is deprovisioned again.
		w.scim(http.MethodDelete, "/Users/"+again, nil).Expect(t, 204, nil)
		w.scim(http.MethodPost, "/Users", user("rehire@acme.example", map[string]any{"active": false})).Expect(t, 201, nil)
		if !w.deprovisioned(t, *r.UserID) {
			t.Fatal("created inactive, yet not deprovisioned")
		}
	})
}
