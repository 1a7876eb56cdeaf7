package federation_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/authcore/authcore/ent/orgmember"
	"github.com/authcore/authcore/ent/user"
	"github.com/authcore/authcore/internal/apptest"
)

// SP-initiated sign-in through crewjam's own IdP (SPEC §27): the login route sends a
// signed AuthnRequest by redirect, the IdP posts its (encrypted, signed) Response to the
// ACS, and the person, new, is made with the address of the org's verified domain, joins
// the org (admin by their group), and lands on the redirect signed in, in the org. The
// same person again is the same account; the same Response posted again is refused.
func TestSAMLSignIn(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newOrgWorld(t, st)
		domain := "acme-" + rnd(3) + ".example"
		acme := w.newOrg(t, "Acme", domain)
		idp := startSAMLIdP(t)
		conn := w.samlConnect(t, acme, idp, map[string]any{"groupRoles": map[string]any{"it-admins": "admin"}})
		id := conn["id"].(string)
		if conn["acsUrl"] != w.a.Config.PublicURL+"/saml/"+id+"/acs" || conn["spEntityId"] != w.a.Config.PublicURL+"/saml/"+id+"/metadata" ||
			conn["idpEntityId"] != idp.URL+"/metadata" {
			t.Fatalf("connection: %v", conn)
		}
		email := "ada@" + domain
		idp.addUser(t, "ada", email, "it-admins", "staff")

		who := newSAMLPerson(t)
		who.loginAtIdP(idp, "ada")
		start := w.a.Config.PublicURL + "/saml/" + id + "/login?redirect=" + "/console/welcome"
		res := who.signIn(start, "ada")
		if res.StatusCode != http.StatusFound || res.Header.Get("Location") != w.a.Config.PublicURL+"/console/welcome" || cookie(res, "sAccessToken") == "" {
			t.Fatalf("ACS: %d %s %s", res.StatusCode, res.Header.Get("Location"), body(t, res))
		}
		u := w.a.Ent.User.Query().Where(user.Email(email)).OnlyX(t.Context())
		if !u.EmailVerified {
			t.Fatal("the address of the org's domain is not verified")
		}
		m := w.a.Ent.OrgMember.Query().Where(orgmember.OrgID(acme), orgmember.UserID(u.ID)).OnlyX(t.Context())
		if m.Role != "admin" {
			t.Fatalf("role %q, want admin by the it-admins group", m.Role)
		}
		me := w.a.Do(apptest.Req{Method: http.MethodGet, Path: "/v1/auth-core/session/me", Header: bearer(cookie(res, "sAccessToken"))}).Expect(t, 200, nil)
		if !strings.Contains(fmt.Sprint(me), acme) {
			t.Fatalf("the session is not in the org: %v", me)
		}

		// The same Response again: its flow is spent.
		again := who.post(who.ACS, who.Posted)
		if p := body(t, again); again.StatusCode != 400 || !strings.Contains(p, "saml_invalid_relay_state") {
			t.Fatalf("replayed Response: %d %s", again.StatusCode, p)
		}

		// Signing in again is the same account, through the same identity.
		again2 := newSAMLPerson(t)
		again2.loginAtIdP(idp, "ada")
		res = again2.signIn(start, "ada")
		if res.StatusCode != http.StatusFound || cookie(res, "sAccessToken") == "" {
			t.Fatalf("second sign-in: %d %s", res.StatusCode, body(t, res))
		}
		if w.users(t, email) != 1 || w.samlIdentities(t, id) != 1 {
			t.Fatalf("users %d identities %d", w.users(t, email), w.samlIdentities(t, id))
		}
	})
}
