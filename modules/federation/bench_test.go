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
