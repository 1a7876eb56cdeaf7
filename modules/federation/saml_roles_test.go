package federation_test

import (
	"net/http"
	"testing"

	"github.com/authcore/authcore/internal/apptest"
)

// A connection's groupRoles may name a role the project drops later (roles only members
// hold are kept): the sign-in of a person in that group is then the admin's configuration
// to fix, a 409 naming it, never a 500, and nothing is made.
func TestSAMLGroupRoleDroppedSince(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := &samlWorld{orgWorld: newOrgWorld(t, st), domain: "acme-" + rnd(3) + ".example", idp: startSAMLIdP(t)}
		w.org = w.newOrg(t, "Acme", w.domain)
		roles := "/v1/projects/" + w.project + "/org-roles"
		w.do(http.MethodPut, roles, []any{map[string]any{"name": "auditor", "permissions": []string{}}}).Expect(t, 200, nil)
		w.conn = w.samlConnect(t, w.org, w.idp, map[string]any{"groupRoles": map[string]any{"audit": "auditor"}})["id"].(string)
		w.do(http.MethodPut, roles, []any{}).Expect(t, 200, nil)

		email := "ada@" + w.domain
		p, name := w.person(t, email, "audit")
		samlRefused(t, p.signIn(w.start("/console"), name), http.StatusConflict, "saml_group_role_unknown")
		w.nothingMade(t, email)
	})
}
