package federation_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/authcore/authcore/ent/identity"
	"github.com/authcore/authcore/ent/session"
	"github.com/authcore/authcore/ent/user"
	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/internal/interop"
)

// A second IdP from another ecosystem (issue 44): npm's saml-idp, on Node's samlp and
// xml-crypto, signs in a new hire, driven in headless Chromium through SP-initiated
// sign-in: the connection reads the IdP's metadata from its URL, the browser carries the
// signed AuthnRequest to the IdP by redirect, the person fills in saml-idp's own sign-in
// page, and its auto-posting form brings the Response to the ACS: a session in the org.
func TestSAMLSignInThroughNpmSamlIdp(t *testing.T) {
	idp := interop.StartSAMLIdP(t)
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newOrgWorld(t, st)
		domain := "acme-" + rnd(3) + ".example"
		org := w.newOrg(t, "Acme", domain)
		conn := w.do(http.MethodPost, w.orgs()+"/"+org+"/connections", map[string]any{"type": "saml", "name": "Acme (saml-idp)",
			"metadataUrl": idp.MetadataURL, "attributeMapping": map[string]any{"email": "email", "firstName": "firstName",
				"lastName": "lastName", "groups": "groups"}}).Expect(t, 201, map[string]any{"type": "saml"})
		idp.Serve(t, conn["spEntityId"].(string), conn["acsUrl"].(string))

		hire := "new.hire-" + rnd(3) + "@" + domain
		p := tab(t)
		p.Do(chromedp.Navigate(conn["loginUrl"].(string)+"?redirect="+url.QueryEscape("/console")),
			chromedp.WaitVisible(`#userName`))
		p.Shot("saml-idp-sign-in")
		// saml-idp's page shows the person it will assert: the new hire sets who they are.
		for id, v := range map[string]string{"userName": hire, "email": hire, "firstName": "New", "lastName": "Hire"} {
			p.Do(chromedp.SetValue(`#`+id, v))
		}
		p.Do(chromedp.Click(chromedp.CSS(`#btn-sign-in`)))
		// saml-idp's form posts itself to the ACS, which sends the browser on to the
		// console, which loads and routes: the page navigates several times, so its address
		// is asked until it is the console's, through navigations that cut a question off.
		href := ""
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if v, err := chromedp.Run(p.Ctx(), chromedp.Evaluate[string](`location.href`)); err == nil {
				if href = v; strings.HasPrefix(href, w.a.Config.PublicURL+"/console") {
					break
				}
			}
		}
		if !strings.HasPrefix(href, w.a.Config.PublicURL+"/console") {
			p.Shot("ended")
			t.Fatalf("the browser ended at %s, not authcore's console", href)
		}

		ctx := t.Context()
		u := w.a.Ent.User.Query().Where(user.Email(hire)).OnlyX(ctx)
		if n := w.a.Ent.Identity.Query().Where(identity.UserID(u.ID), identity.ProviderID(conn["id"].(string)), identity.Subject(hire)).CountX(ctx); n != 1 {
			t.Fatalf("%d identities (connection, NameID) for the new hire", n)
		}
		if n := w.a.Ent.Session.Query().Where(session.UserID(u.ID), session.OrgID(org)).CountX(ctx); n != 1 {
			t.Fatalf("%d sessions in Acme for the new hire", n)
		}
		if w.members(t, org, u.ID) != 1 {
			t.Fatal("the new hire is not a member of Acme")
		}
	})
}
