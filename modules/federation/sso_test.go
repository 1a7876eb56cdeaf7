package federation_test

import (
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/descope/virtualwebauthn"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/internal/testkit"
	"github.com/authcore/authcore/platform/config"
)

// passkeyOf registers a software passkey (descope/virtualwebauthn) for the signed-in
// access token and returns what signs in with it alone.
func (w *world) passkeyOf(t *testing.T, userID, access string) func(t *testing.T) *apptest.Response {
	t.Helper()
	rp := virtualwebauthn.RelyingParty{ID: "localhost", Name: "authcore", Origin: w.a.Config.PublicURL}
	auth := virtualwebauthn.NewAuthenticatorWithOptions(virtualwebauthn.AuthenticatorOptions{UserHandle: []byte(userID)})
	cred := testkit.PasskeyCredential()
	begin := w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/mfa/passkeys/register/begin", Body: map[string]any{"name": "key"}, Header: bearer(access)})
	begin.Expect(t, 200, nil)
	opts, err := virtualwebauthn.ParseAttestationOptions(string(begin.Body))
	if err != nil {
		t.Fatal(err)
	}
	created := virtualwebauthn.CreateAttestationResponse(rp, auth, cred, *opts)
	w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/mfa/passkeys/register/finish", Body: json.RawMessage(created), Header: bearer(access)}).Expect(t, 201, nil)
	auth.AddCredential(cred)
	return func(t *testing.T) *apptest.Response {
		t.Helper()
		b := w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/mfa/passkeys/signin/begin", Body: map[string]any{"tenantId": w.project}}).Expect(t, 200, nil)
		raw, _ := json.Marshal(b)
		o, err := virtualwebauthn.ParseAssertionOptions(string(raw))
		if err != nil {
			t.Fatal(err)
		}
		assertion := virtualwebauthn.CreateAssertionResponse(rp, auth, cred, *o)
		return w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/mfa/passkeys/signin/finish",
			Body: map[string]any{"challengeId": b["challengeId"], "credential": json.RawMessage(assertion)}})
	}
}

// SSO required by domain (SPEC §20, issue 46): once a domain's provider requires itself,
// every other way in refuses the domain's addresses with the same 403 sso_required naming
// the provider — password, mailed code, mailed link, passkey alone, another provider for a
// returning subject and for a new one — and the domain's own provider still signs in.
func TestSSORequiredEveryWayIn(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		// A public URL on localhost: WebAuthn takes no IP address for a relying party.
		w := newWorld(t, st, apptest.WithConfig(func(c *config.Config) {
			_, port, _ := net.SplitHostPort(c.Addr)
			c.PublicURL = "http://localhost:" + port
		}))
		corp, other := w.addProvider(t, map[string]any{"name": "Corp"}), w.addProvider(t, map[string]any{"name": "Other"})
		// The browser starts where the callback comes back: the binding cookie is the host's.
		corp.Start = strings.Replace(corp.Start, w.a.Base, w.a.Config.PublicURL, 1)
		other.Start = strings.Replace(other.Start, w.a.Base, w.a.Config.PublicURL, 1)
		w.a.Do(apptest.Req{Method: http.MethodPut, Path: "/v1/projects/" + w.project + "/auth/methods", Header: w.admin.Bearer(),
			Body: map[string]any{"password": true, "emailLink": true}}).Expect(t, 200, nil)
		domain := strings.SplitN(w.admin.Email, "@", 2)[1]

		// Before the domain requires its provider, people of the domain made every way in.
		alice := "alice-" + rnd(3) + "@" + domain
		aliceID, access := w.signUpIn(t, alice)
		passkey := w.passkeyOf(t, aliceID, access)
		// Two mails: the link of the first, the code of the second (a code meets the newest).
		w.mailRequest(t, alice).Expect(t, 202, nil)
		_, link := w.waitMail(t, alice, 1)
		w.mailRequest(t, alice).Expect(t, 202, nil)
		code, _ := w.waitMail(t, alice, 2)
		bob := w.account(t, "bob-"+rnd(3)+"@"+domain, true)
		if res := newPerson(t).via(other.Start, bob.Login); cookie(res, "sAccessToken") == "" {
			t.Fatalf("bob's first sign-in through the other provider: %d %s", res.StatusCode, body(t, res))
		}

		w.verifyEmail(t, w.admin.UserID)
		w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + w.project + "/auth/providers/" + corp.ID + "/domains", Header: w.admin.Bearer(),
			Body: map[string]any{"domain": domain}}).Expect(t, 201, map[string]any{"verified": true})
		w.a.Do(apptest.Req{Method: http.MethodPatch, Path: "/v1/projects/" + w.project + "/auth/providers/" + corp.ID, Header: w.admin.Bearer(),
			Body: map[string]any{"ssoRequired": true}}).Expect(t, 200, map[string]any{"ssoRequired": true})
		want := map[string]any{"code": "sso_required", "providerId": corp.ID}
		page := func(t *testing.T, res *http.Response) {
			t.Helper()
			p := body(t, res)
			if res.StatusCode != http.StatusForbidden || cookie(res, "sAccessToken") != "" || !strings.Contains(p, "sso_required") {
				t.Fatalf("want 403 sso_required; got %d %s", res.StatusCode, p)
			}
		}

		t.Run("password", func(t *testing.T) {
			w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signin",
				Body: map[string]any{"email": alice, "password": "correct horse battery", "tenantId": w.project}}).Expect(t, 403, want)
		})
		t.Run("email code", func(t *testing.T) {
			w.mailSignIn(t, map[string]any{"email": alice, "code": code, "tenantId": w.project}).Expect(t, 403, want)
		})
		t.Run("email link", func(t *testing.T) {
			w.mailSignIn(t, map[string]any{"token": link}).Expect(t, 403, want)
		})
		t.Run("passkey alone", func(t *testing.T) {
			passkey(t).Expect(t, 403, want)
		})
		t.Run("another provider, returning subject", func(t *testing.T) {
			page(t, newPerson(t).via(other.Start, bob.Login))
		})
		t.Run("another provider, new subject", func(t *testing.T) {
			carol := w.account(t, "carol-"+rnd(3)+"@"+domain, true)
			page(t, newPerson(t).via(other.Start, carol.Login))
			if w.users(t, carol.Email) != 0 {
				t.Fatal("the other provider made an account in the domain")
			}
		})
		t.Run("the domain's own provider", func(t *testing.T) {
			dave := w.account(t, "dave-"+rnd(3)+"@"+domain, true)
			if res := newPerson(t).via(corp.Start, dave.Login); cookie(res, "sAccessToken") == "" {
				t.Fatalf("%d %s", res.StatusCode, body(t, res))
			}
			// Addresses of other domains keep every way in.
			outside := w.account(t, "erin-"+rnd(3)+"@elsewhere.test", true)
			if res := newPerson(t).via(other.Start, outside.Login); cookie(res, "sAccessToken") == "" {
				t.Fatalf("%d %s", res.StatusCode, body(t, res))
			}
		})
	})
}
