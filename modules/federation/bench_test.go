package federation_test

import (
	"net/http"
	"testing"

	"github.com/authcore/authcore/internal/apptest"
)

// BenchmarkUpstreamSignIn is one returning person signing in through the local upstream
// (oidc-provider) per iteration, as a browser would: start, the upstream's login and
// consent forms, the callback (code exchange, id_token check against the cached keys,
// the identity's update and its audit record in one transaction), a session. Each
// iteration is a new browser, so the upstream asks for login and consent every time.
// Figures are taken on a quiet machine (docs/operations.md); run with
//
//	go test ./modules/federation/ -run '^$' -bench UpstreamSignIn -benchtime 200x
func BenchmarkUpstreamSignIn(b *testing.B) {
	w := newWorld(b, apptest.Stores(b)[0])
	p := w.addProvider(b, nil)
	acc := w.account(b, apptest.UniqueEmail(b), true)
	if res := newPerson(b).via(p.Start, acc.Login); cookie(res, "sAccessToken") == "" { // the sign-up
		b.Fatalf("first sign-in: %d", res.StatusCode)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		res := newPerson(b).via(p.Start, acc.Login)
		if res.StatusCode != http.StatusFound || cookie(res, "sAccessToken") == "" {
			b.Fatalf("sign-in: %d", res.StatusCode)
		}
		res.Body.Close()
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "signins/s")
}

// BenchmarkSAMLSignIn is SPEC §27's figure: SAML sign-ins per second at the ACS — the
// POST of an (encrypted, signed) Response from crewjam's IdP to a session: the flow spent,
// the XML screened, decrypted and verified, the assertion id spent, the identity's
// update, the org enrolment and the audit records in one transaction, a session. Getting
// each Response from the IdP is outside the timer. Its baseline, in the same app and run,
// is a password sign-in (POST /v1/auth-core/signin) of a person of another domain; the
// ratio of the two signins/s is the figure to report:
//
//	go test ./modules/federation/ -run '^$' -bench SAMLSignIn -benchtime 100x
func BenchmarkSAMLSignIn(b *testing.B) {
	w := newOrgWorld(b, apptest.Stores(b)[0])
	domain := "acme-" + rnd(3) + ".example"
	org := w.newOrg(b, "Acme", domain)
	idp := startSAMLIdP(b)
	conn := w.samlConnect(b, org, idp, nil)["id"].(string)
	start := w.a.Config.PublicURL + "/saml/" + conn + "/login"
	idp.addUser(b, "bench", "bench@"+domain)
	p := newSAMLPerson(b)
	p.loginAtIdP(idp, "bench")
	if res := p.signIn(start, ""); cookie(res, "sAccessToken") == "" { // the sign-up
		b.Fatalf("first sign-in: %d %s", res.StatusCode, body(b, res))
	}
	pw := "pw-" + rnd(3) + "@elsewhere.example"
	w.signUpIn(b, pw)

	b.Run("acs", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			b.StopTimer()
			acs, form := p.response(start, "")
			b.StartTimer()
			res := p.post(acs, form)
			if res.StatusCode != http.StatusFound || cookie(res, "sAccessToken") == "" {
				b.Fatalf("ACS: %d %s", res.StatusCode, body(b, res))
			}
			res.Body.Close()
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "signins/s")
	})
	b.Run("password", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signin",
				Body: map[string]any{"email": pw, "password": "correct horse battery", "tenantId": w.project}}).Expect(b, 200, nil)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "signins/s")
	})
}
