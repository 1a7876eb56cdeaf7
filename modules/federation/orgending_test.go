package federation_test

import (
	"net/http"
	"testing"

	"github.com/authcore/authcore/ent/signinprovider"
	"github.com/authcore/authcore/internal/apptest"
)

// Deleting an org takes its connections with it (identity.OrgEnding): a connection of an
// org that is no more signs no one in with that org's id; another org's stays.
func TestDeletedOrgTakesItsConnections(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newOrgWorld(t, st)
		acme, globex := w.newOrg(t, "Acme"), w.newOrg(t, "Globex")
		gone, kept := w.connect(t, acme, "Acme Okta"), w.connect(t, globex, "Globex Okta")

		w.do(http.MethodDelete, w.orgs()+"/"+acme, nil).Expect(t, 200, nil)

		if n := w.a.Ent.SignInProvider.Query().Where(signinprovider.ID(gone.ID)).CountX(t.Context()); n != 0 {
			t.Fatal("the deleted org's connection is still there")
		}
		w.do(http.MethodGet, w.orgs()+"/"+globex+"/connections/"+kept.ID, nil).Expect(t, 200, map[string]any{"id": kept.ID})
		res, err := newPerson(t).http.Get(gone.Start)
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode == http.StatusFound || res.StatusCode == http.StatusSeeOther {
			t.Fatalf("the deleted org's connection still starts a sign-in: %d", res.StatusCode)
		}
		var deleted bool
		for _, e := range w.a.Ent.AuditEvent.Query().AllX(t.Context()) {
			if e.Action == "org.delete" && e.Metadata["connectionsRemoved"] == float64(1) {
				deleted = true
			}
		}
		if !deleted {
			t.Fatal("the org's deletion does not say it removed its connection")
		}
	})
}
