package federation_test

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/crewjam/saml/samlidp"
	dsig "github.com/russellhaering/goxmldsig"

	"github.com/authcore/authcore/internal/apptest"
)

// samlWorld is an org with a verified domain, crewjam's IdP, and a SAML connection of it.
type samlWorld struct {
	*orgWorld
	org, domain, conn string
	idp               *samlIdP
}

func newSAMLWorld(t *testing.T, st apptest.Store, extra map[string]any) *samlWorld {
	t.Helper()
	w := &samlWorld{orgWorld: newOrgWorld(t, st), domain: "acme-" + rnd(3) + ".example", idp: startSAMLIdP(t)}
	w.org = w.newOrg(t, "Acme", w.domain)
	w.conn = w.samlConnect(t, w.org, w.idp, extra)["id"].(string)
	return w
}

func (w *samlWorld) start(redirect string) string {
	return w.a.Config.PublicURL + "/saml/" + w.conn + "/login?redirect=" + url.QueryEscape(redirect)
}

// person is a new browser signed in at the IdP as a new IdP user with email.
func (w *samlWorld) person(t *testing.T, email string, groups ...string) (*samlPerson, string) {
	t.Helper()
	name := "u" + rnd(4)
	w.idp.addUser(t, name, email, groups...)
	p := newSAMLPerson(t)
	p.loginAtIdP(w.idp, name)
	return p, name
}

// samlRefused checks an ACS answer is the 400 (or status) naming code, with no session.
func samlRefused(t *testing.T, res *http.Response, status int, code string) {
	t.Helper()
	p := body(t, res)
	if res.StatusCode != status || cookie(res, "sAccessToken") != "" || !strings.Contains(p, code) {
		t.Fatalf("want %d %s; got %d %s", status, code, res.StatusCode, p)
	}
}

// nothingMade checks a refused sign-in made no account and no identity.
func (w *samlWorld) nothingMade(t *testing.T, email string) {
	t.Helper()
	if n, m := w.users(t, email), w.samlIdentities(t, w.conn); n != 0 || m != 0 {
		t.Fatalf("a refused sign-in made %d users, %d identities", n, m)
	}
}

var encryptedAssertion = regexp.MustCompile(`<(\w+:)?EncryptedAssertion[ >]`)

// The Responses crewjam's IdP sends to a connection are encrypted to the connection's own
// key (its SP metadata publishes it), and decrypt; the test flow signs in once at the IdP,
// answers the mapped attributes and makes no one; discovery sends the org's addresses to
// the SAML login.
func TestSAMLEncryptedAndTest(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newSAMLWorld(t, st, map[string]any{"groupRoles": map[string]any{"staff": "member"}})
		email := "grace@" + w.domain

		d := w.a.Do(apptest.Req{Method: http.MethodGet, Path: "/v1/auth-core/providers/discover?tenantId=" + w.project + "&email=" + url.QueryEscape(email)})
		d.Expect(t, 200, map[string]any{"providerId": w.conn, "orgId": w.org, "startUrl": w.a.Config.PublicURL + "/saml/" + w.conn + "/login"})

		conns := w.orgs() + "/" + w.org + "/connections/" + w.conn
		started := w.do(http.MethodPost, conns+"/test", nil).Expect(t, 201, nil)
		testID := started["testId"].(string)
		w.do(http.MethodGet, conns+"/test/"+testID, nil).Expect(t, 200, map[string]any{"status": "pending", "result": nil})
		tester, _ := w.person(t, email, "staff")
		acs, form := tester.response(started["url"].(string), "")
		raw, _ := base64.StdEncoding.DecodeString(form.Get("SAMLResponse"))
		if !encryptedAssertion.Match(raw) {
			t.Fatalf("the IdP did not encrypt the assertion:\n%s", raw)
		}
		ans := tester.post(acs, form)
		if p := body(t, ans); ans.StatusCode != 200 || !strings.Contains(p, email) || cookie(ans, "sAccessToken") != "" {
			t.Fatalf("test ACS: %d %s", ans.StatusCode, p)
		}
		w.do(http.MethodGet, conns+"/test/"+testID, nil).Expect(t, 200, map[string]any{"status": "done",
			"result": map[string]any{"subject": email, "email": email, "emailTrusted": true, "firstName": "Ada", "lastName": "Lovelace",
				"groups": []any{"staff"}, "role": "member", "name": "Ada Lovelace"}})
		w.nothingMade(t, email)
	})
}

// Each refusal at the ACS names its rule and makes nothing: an address outside the org's
// verified domains; an unsolicited Response while IdP-initiated sign-in is off; a
// Response posted from another browser than the one that started; a DTD; more than 256
// KiB; an expired assertion.
func TestSAMLRefusals(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newSAMLWorld(t, st, nil)

		t.Run("an address outside the org's verified domains", func(t *testing.T) {
			email := "eve-" + rnd(3) + "@elsewhere.example"
			p, _ := w.person(t, email)
			samlRefused(t, p.signIn(w.start(""), ""), http.StatusForbidden, "email_not_verified")
			w.nothingMade(t, email)
		})
		t.Run("IdP-initiated while not allowed", func(t *testing.T) {
			email := "ivy-" + rnd(3) + "@" + w.domain
			p, _ := w.person(t, email)
			samlRefused(t, p.signIn(w.idp.idpInitiated(t, w.a.Config.PublicURL+"/saml/"+w.conn+"/metadata", ""), ""), 400, "saml_unsolicited")
			w.nothingMade(t, email)
		})
		t.Run("another browser's flow", func(t *testing.T) {
			email := "mallory-" + rnd(3) + "@" + w.domain
			p, _ := w.person(t, email)
			acs, form := p.response(w.start(""), "")
			samlRefused(t, newSAMLPerson(t).post(acs, form), 400, "saml_flow_not_this_browser")
			w.nothingMade(t, email)
		})
		t.Run("a DTD", func(t *testing.T) {
			email := "dtd-" + rnd(3) + "@" + w.domain
			p, _ := w.person(t, email)
			acs, form := p.response(w.start(""), "")
			raw, _ := base64.StdEncoding.DecodeString(form.Get("SAMLResponse"))
			doc := strings.Replace(string(raw), "<samlp:Response", `<!DOCTYPE r [<!ENTITY x "y">]><samlp:Response`, 1)
			if doc == string(raw) {
				t.Fatalf("no samlp:Response in %s", raw)
			}
			form.Set("SAMLResponse", base64.StdEncoding.EncodeToString([]byte(doc)))
			samlRefused(t, p.post(acs, form), 400, "saml_dtd_refused")
			w.nothingMade(t, email)
		})
		t.Run("over 256 KiB", func(t *testing.T) {
			email := "big-" + rnd(3) + "@" + w.domain
			p, _ := w.person(t, email)
			acs, form := p.response(w.start(""), "")
			raw, _ := base64.StdEncoding.DecodeString(form.Get("SAMLResponse"))
			doc := strings.Replace(string(raw), "<samlp:Response", "<!--"+strings.Repeat("x", 256<<10)+"--><samlp:Response", 1)
			form.Set("SAMLResponse", base64.StdEncoding.EncodeToString([]byte(doc)))
			samlRefused(t, p.post(acs, form), 400, "saml_too_large")
			w.nothingMade(t, email)
		})
		t.Run("signed with SHA-1", func(t *testing.T) {
			key, cert := newKeyPair(t, "sha1")
			old := startSAMLIdPTweaked(t, key, cert, func(s *samlidp.Server) { s.IDP.SignatureMethod = dsig.RSASHA1SignatureMethod })
			conn := w.samlConnect(t, w.org, old, map[string]any{"name": "SHA-1 IdP"})["id"].(string)
			email := "sha1-" + rnd(3) + "@" + w.domain
			old.addUser(t, "old", email)
			p := newSAMLPerson(t)
			p.loginAtIdP(old, "old")
			samlRefused(t, p.signIn(w.a.Config.PublicURL+"/saml/"+conn+"/login", ""), 400, "saml_weak_algorithm")
			if w.users(t, email) != 0 || w.samlIdentities(t, conn) != 0 {
				t.Fatal("a SHA-1 Response made something")
			}
		})
		t.Run("expired", func(t *testing.T) {
			email := "late-" + rnd(3) + "@" + w.domain
			p, _ := w.person(t, email)
			acs, form := p.response(w.start(""), "")
			w.a.Clock.Advance(6 * time.Minute) // past NotOnOrAfter and the 2 minutes of skew; the flow lives 10
			samlRefused(t, p.post(acs, form), 400, "saml_expired")
			w.nothingMade(t, email)
		})
	})
}

// IdP-initiated sign-in: refused while off (TestSAMLRefusals), signed in once on; its
// RelayState sends the person only where a sign-in's redirect may; the same Response
// posted again (as to another replica: the spent id is a row of the shared store) is
// refused as replayed.
func TestSAMLIdPInitiated(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newSAMLWorld(t, st, map[string]any{"allowIdpInitiated": true})
		sp := w.a.Config.PublicURL + "/saml/" + w.conn + "/metadata"
		email := "ida-" + rnd(3) + "@" + w.domain
		p, _ := w.person(t, email)
		res := p.signIn(w.idp.idpInitiated(t, sp, "https://evil.example/steal"), "")
		if res.StatusCode != http.StatusFound || res.Header.Get("Location") != w.a.Config.PublicURL+"/console" || cookie(res, "sAccessToken") == "" {
			t.Fatalf("IdP-initiated: %d %s %s", res.StatusCode, res.Header.Get("Location"), body(t, res))
		}
		again := newSAMLPerson(t).post(p.ACS, p.Posted)
		samlRefused(t, again, 400, "saml_assertion_replayed")

		res = p.signIn(w.idp.idpInitiated(t, sp, "/console/apps"), "")
		if res.StatusCode != http.StatusFound || res.Header.Get("Location") != w.a.Config.PublicURL+"/console/apps" {
			t.Fatalf("IdP-initiated to a console path: %d %s", res.StatusCode, res.Header.Get("Location"))
		}
		if w.users(t, email) != 1 || w.samlIdentities(t, w.conn) != 1 {
			t.Fatalf("users %d identities %d", w.users(t, email), w.samlIdentities(t, w.conn))
		}
	})
}

// A rollover: the IdP signs with its new key while its metadata lists the old certificate
// and the new; a connection trusting that metadata signs in. A connection whose metadata
// names only the old certificate refuses the same IdP's Response.
func TestSAMLRollover(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newOrgWorld(t, st)
		domain := "acme-" + rnd(3) + ".example"
		org := w.newOrg(t, "Acme", domain)
		oldKey, oldCert := newKeyPair(t, "old")
		newKey, newCrt := newKeyPair(t, "new")
		idp := startSAMLIdPWith(t, newKey, newCrt, oldCert)
		if md := idp.metadata(t); strings.Count(md, `KeyDescriptor use="signing"`) < 2 {
			t.Fatalf("the IdP's metadata does not list two certificates:\n%s", md)
		}
		both := w.samlConnect(t, org, idp, nil)["id"].(string)

		// The same IdP as it was before the rollover: the old key alone.
		before := startSAMLIdPWith(t, oldKey, oldCert)
		oldOnly := strings.ReplaceAll(before.metadata(t), before.URL, idp.URL)
		stale := w.samlConnect(t, org, idp, map[string]any{"metadataUrl": nil, "metadataXml": oldOnly, "name": "stale"})["id"].(string)

		email := "roll-" + rnd(3) + "@" + domain
		idp.addUser(t, "roll", email)
		p := newSAMLPerson(t)
		p.loginAtIdP(idp, "roll")
		// crewjam's IdP encrypts the assertion, and of an encrypted assertion a signature
		// that does not hold is the one code saml_invalid (no oracle; the log names it).
		samlRefused(t, p.signIn(w.a.Config.PublicURL+"/saml/"+stale+"/login", ""), 400, "saml_invalid")
		if w.users(t, email) != 0 {
			t.Fatal("a Response signed by a key the metadata does not name made a user")
		}
		res := p.signIn(w.a.Config.PublicURL+"/saml/"+both+"/login", "")
		if res.StatusCode != http.StatusFound || cookie(res, "sAccessToken") == "" {
			t.Fatalf("signed by the new key: %d %s", res.StatusCode, body(t, res))
		}
	})
}

// Under the org's ssoRequired, its SAML connection is the org's connection (SPEC §26,
// §27): a password sign-in of the domain is refused naming it, and the SAML sign-in of the
// same person (an existing account whose address both proved) links and signs in, in the
// org.
func TestSAMLSSORequired(t *testing.T) {
	w := newSAMLWorld(t, apptest.Stores(t)[0], nil)
	w.do(http.MethodPut, "/v1/projects/"+w.project+"/auth/methods", map[string]any{"password": true, "emailLink": false}).Expect(t, 200, nil)
	alice := "alice-" + rnd(3) + "@" + w.domain
	aliceID, _ := w.signUpIn(t, alice)
	// Unproven, the account is no one's to join by address (409 account_exists); proven, it is.
	p, _ := w.person(t, alice)
	samlRefused(t, p.signIn(w.start(""), ""), http.StatusConflict, "account_exists")
	w.verifyEmail(t, aliceID)
	w.do(http.MethodPut, w.orgs()+"/"+w.org+"/policy", map[string]any{"ssoRequired": true, "mfaRequired": false, "sessionMaxHours": 0,
		"revokeMintedOnDeprovision": false, "autoJoin": map[string]any{"role": "member"}}).Expect(t, 200, nil)
	w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signin",
		Body: map[string]any{"email": alice, "password": "correct horse battery", "tenantId": w.project}}).
		Expect(t, 403, map[string]any{"code": "sso_required", "orgId": w.org, "providerId": w.conn})

	res := p.signIn(w.start(""), "")
	if res.StatusCode != http.StatusFound || cookie(res, "sAccessToken") == "" {
		t.Fatalf("SAML under ssoRequired: %d %s", res.StatusCode, body(t, res))
	}
	if w.users(t, alice) != 1 || w.members(t, w.org, aliceID) != 1 {
		t.Fatalf("alice: %d accounts, member %d", w.users(t, alice), w.members(t, w.org, aliceID))
	}
}
