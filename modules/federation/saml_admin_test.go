package federation_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/authcore/authcore/ent/samlconnection"
	"github.com/authcore/authcore/internal/apptest"
)

// issues is the fields a validation_failed answer names.
func issues(t *testing.T, r *apptest.Response) []string {
	t.Helper()
	got := r.Expect(t, 400, map[string]any{"code": "validation_failed"})
	var out []string
	for _, i := range got["issues"].([]any) {
		out = append(out, i.(map[string]any)["field"].(string))
	}
	return out
}

// An org admin adds a SAML connection (SPEC §27): each field of a bad body is its own
// issue and nothing is made; metadata must parse, hold an HTTP-Redirect SSO endpoint and a
// signing certificate, and have no DTD. The connection is listed with the org's others,
// read, changed, its SP metadata published (signing and encryption certificate, signed
// requests, the ACS), its IdP metadata read again on demand, and removed; another org's
// admin path does not find it; its key is never shown.
func TestSAMLConnectionAdmin(t *testing.T) {
	st := apptest.Stores(t)[0]
	w := newOrgWorld(t, st)
	acme, globex := w.newOrg(t, "Acme"), w.newOrg(t, "Globex")
	idp := startSAMLIdP(t)
	conns := w.orgs() + "/" + acme + "/connections"
	md := idp.metadata(t)
	post := func(body map[string]any) *apptest.Response { return w.do(http.MethodPost, conns, body) }
	base := func(extra map[string]any) map[string]any {
		b := map[string]any{"type": "saml", "metadataXml": md, "attributeMapping": samlMapping}
		for k, v := range extra {
			if v == nil {
				delete(b, k)
			} else {
				b[k] = v
			}
		}
		return b
	}
	for _, c := range []struct {
		name string
		body map[string]any
		want []string
	}{
		{"no metadata", base(map[string]any{"metadataXml": nil}), []string{"metadataUrl"}},
		{"both", base(map[string]any{"metadataUrl": idp.URL + "/metadata"}), []string{"metadataUrl"}},
		{"not metadata", base(map[string]any{"metadataXml": "<html/>"}), []string{"metadataXml"}},
		{"a DTD", base(map[string]any{"metadataXml": `<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>` + md}), []string{"metadataXml"}},
		{"no HTTP-Redirect SSO", base(map[string]any{"metadataXml": strings.ReplaceAll(md, "bindings:HTTP-Redirect", "bindings:HTTP-Artifact")}), []string{"metadataXml"}},
		{"no signing certificate", base(map[string]any{"metadataXml": regexp.MustCompile(`(?s)<KeyDescriptor use="signing">.*?</KeyDescriptor>`).ReplaceAllString(md, "")}), []string{"metadataXml"}},
		{"unreachable URL", base(map[string]any{"metadataXml": nil, "metadataUrl": idp.URL + "/nope"}), []string{"metadataUrl"}},
		{"no mapping", base(map[string]any{"attributeMapping": nil}), []string{"attributeMapping"}},
		{"mapping without email", base(map[string]any{"attributeMapping": map[string]any{"groups": "g"}}), []string{"attributeMapping.email"}},
		{"unknown mapping", base(map[string]any{"attributeMapping": map[string]any{"email": "mail", "phone": "p"}}), []string{"attributeMapping.phone"}},
		{"owner by group", base(map[string]any{"groupRoles": map[string]any{"boss": "owner"}}), []string{"groupRoles.boss"}},
		{"unknown role", base(map[string]any{"groupRoles": map[string]any{"x": "wizard"}}), []string{"groupRoles.x"}},
		{"allowIdpInitiated", base(map[string]any{"allowIdpInitiated": "yes"}), []string{"allowIdpInitiated"}},
		{"name", base(map[string]any{"name": ""}), []string{"name"}},
	} {
		if got := issues(t, post(c.body)); strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("%s: issues %v, want %v", c.name, got, c.want)
		}
	}
	if n := w.a.Ent.SAMLConnection.Query().CountX(t.Context()); n != 0 {
		t.Fatalf("refused bodies made %d connections", n)
	}

	oidc := w.connect(t, acme, "Acme Okta")
	created := post(base(map[string]any{"metadataXml": nil, "metadataUrl": idp.URL + "/metadata", "name": "Acme Entra"}))
	c := created.Expect(t, 201, map[string]any{"type": "saml", "name": "Acme Entra", "orgId": acme, "idpEntityId": idp.URL + "/metadata",
		"idpMetadataUrl": idp.URL + "/metadata", "allowIdpInitiated": false})
	id := c["id"].(string)
	if b := string(created.Body); strings.Contains(b, "PRIVATE") || strings.Contains(b, "sealed") || strings.Contains(b, "spKey") {
		t.Fatalf("the key came back: %s", b)
	}
	list := w.do(http.MethodGet, conns, nil).Expect(t, 200, nil)["connections"].([]any)
	if len(list) != 2 || list[0].(map[string]any)["id"] != oidc.ID || list[1].(map[string]any)["id"] != id {
		t.Fatalf("list %v", list)
	}
	w.do(http.MethodGet, conns+"/"+id, nil).Expect(t, 200, map[string]any{"id": id, "type": "saml"})
	w.do(http.MethodGet, w.orgs()+"/"+globex+"/connections/"+id, nil).Expect(t, 404, map[string]any{"code": "connection_not_found"})
	// Under the org's own path only its owners: a connection signs in as any account of the
	// org's domains, its owners' too, whom an org admin may not unmake.
	own := "/v1/auth-core/orgs/" + acme + "/connections"
	for role, want := range map[string]int{"owner": 200, "admin": 403} {
		p := w.a.SignUpIn(t, w.project)
		w.do(http.MethodPost, w.orgs()+"/"+acme+"/members", map[string]any{"userId": p.UserID, "role": role}).Expect(t, 201, nil)
		w.a.Do(apptest.Req{Path: own + "/" + id, Header: p.Bearer()}).Expect(t, want, nil)
		if role == "admin" {
			w.a.Do(apptest.Req{Method: http.MethodPost, Path: own, Header: p.Bearer(), Body: base(nil)}).Expect(t, 403, nil)
		}
	}
	w.do(http.MethodPatch, conns+"/"+id, map[string]any{"type": "oidc"}).Expect(t, 400, map[string]any{"code": "validation_failed"})
	w.do(http.MethodPatch, conns+"/"+id, map[string]any{"allowIdpInitiated": true, "name": "Acme SAML"}).
		Expect(t, 200, map[string]any{"allowIdpInitiated": true, "name": "Acme SAML"})

	res, err := http.Get(c["metadataUrl"].(string))
	if err != nil {
		t.Fatal(err)
	}
	sp := body(t, res)
	for _, want := range []string{`entityID="` + c["spEntityId"].(string) + `"`, `AuthnRequestsSigned="true"`, `use="signing"`, `use="encryption"`,
		`Location="` + c["acsUrl"].(string) + `"`, "HTTP-POST"} {
		if !strings.Contains(sp, want) {
			t.Fatalf("SP metadata lacks %s:\n%s", want, sp)
		}
	}
	if strings.Contains(sp, "PRIVATE KEY") {
		t.Fatal("the SP metadata holds a private key")
	}
	sealed := w.a.Ent.SAMLConnection.Query().Where(samlconnection.ID(id)).OnlyX(t.Context()).SpKeySealed
	if sealed == "" || strings.Contains(sealed, "PRIVATE") {
		t.Fatal("the SP key is not sealed")
	}

	w.do(http.MethodPost, conns+"/"+id+"/metadata/refresh", nil).Expect(t, 200, map[string]any{"id": id})
	w.do(http.MethodPost, conns+"/"+oidc.ID+"/metadata/refresh", nil).Expect(t, 409, map[string]any{"code": "not_saml"})

	w.do(http.MethodDelete, conns+"/"+id, nil).Expect(t, 200, map[string]any{"ok": true, "id": id})
	w.do(http.MethodGet, conns+"/"+id, nil).Expect(t, 404, map[string]any{"code": "connection_not_found"})
}
