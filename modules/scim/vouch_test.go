package scim_test

import (
	"net/http"
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
