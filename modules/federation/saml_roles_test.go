package federation_test

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

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

// The IdP's metadata names the certificates a connection trusts: a refresh that finds it
// changed is audited, as an admin's upload is; one that finds it the same is not.
func TestSAMLMetadataRefreshIsAudited(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newOrgWorld(t, st)
		org := w.newOrg(t, "Acme", "acme-"+rnd(3)+".example")
		first, second := startSAMLIdP(t), startSAMLIdP(t)
		var mu sync.Mutex
		published := first.metadata(t)
		pub := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
			mu.Lock()
			defer mu.Unlock()
			_, _ = rw.Write([]byte(published))
		}))
		t.Cleanup(pub.Close)
		conns := w.orgs() + "/" + org + "/connections"
		id := w.do(http.MethodPost, conns, map[string]any{"type": "saml", "metadataUrl": pub.URL, "attributeMapping": samlMapping}).Expect(t, 201, nil)["id"].(string)
		refreshes := func() int {
			n := 0
			for _, e := range w.do(http.MethodGet, "/v1/projects/"+w.project+"/audit?limit=200", nil).Expect(t, 200, nil)["events"].([]any) {
				if md, _ := e.(map[string]any)["metadata"].(map[string]any); md["refreshed"] == true && md["providerId"] == id {
					n++
				}
			}
			return n
		}
		w.do(http.MethodPost, conns+"/"+id+"/metadata/refresh", nil).Expect(t, 200, nil)
		if n := refreshes(); n != 0 {
			t.Fatalf("%d records of an unchanged document", n)
		}
		mu.Lock()
		published = second.metadata(t)
		mu.Unlock()
		w.a.Clock.Advance(time.Minute) // past the fetcher's least age
		w.do(http.MethodPost, conns+"/"+id+"/metadata/refresh", nil).Expect(t, 200, map[string]any{"idpEntityId": second.URL + "/metadata"})
		if n := refreshes(); n != 1 {
			t.Fatalf("%d records of the IdP's new metadata, want 1", n)
		}
	})
}

// The identity is (connection, NameID) (SPEC §27): the SP asks for no transient NameID,
// crewjam's default, which an IdP that honours it (Entra, AD FS) answers with a new one
// at every sign-in: each sign-in would then make a new identity, and with linking by
// address off, the second would be refused as account_exists.
func TestSAMLAsksForNoTransientNameID(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newSAMLWorld(t, st, nil)
		res, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Get(w.start("/console"))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		to, err := url.Parse(res.Header.Get("Location"))
		if err != nil || res.StatusCode != http.StatusFound {
			t.Fatalf("login: %d %v", res.StatusCode, err)
		}
		deflated, err := base64.StdEncoding.DecodeString(to.Query().Get("SAMLRequest"))
		if err != nil {
			t.Fatal(err)
		}
		req, err := io.ReadAll(flate.NewReader(bytes.NewReader(deflated)))
		if err != nil {
			t.Fatal(err)
		}
		md, err := http.Get(w.a.Config.PublicURL + "/saml/" + w.conn + "/metadata")
		if err != nil {
			t.Fatal(err)
		}
		for what, doc := range map[string]string{"AuthnRequest": string(req), "SP metadata": body(t, md)} {
			if strings.Contains(doc, "nameid-format:transient") {
				t.Errorf("the %s asks for a transient NameID:\n%s", what, doc)
			}
		}
	})
}
