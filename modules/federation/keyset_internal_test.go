package federation

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/authcore/authcore/platform/clock"
)

// The issuer's key set is fetched when a key id is unknown, at most once a minute (SPEC
// §20): tokens naming made-up keys cannot make us hammer the upstream.
func TestKeySetRefetchesAtMostOnceAMinute(t *testing.T) {
	key, _ := rsa.GenerateKey(rand.Reader, 2048)
	published := jose.JSONWebKey{Key: &key.PublicKey, KeyID: "k1", Algorithm: "RS256", Use: "sig"}
	var fetches atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fetches.Add(1)
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{published}})
	}))
	defer srv.Close()
	clk := clock.NewFake(time.Now())
	ks := &keySet{url: srv.URL, http: srv.Client(), clock: clk}
	sign := func(kid string, k *rsa.PrivateKey) string {
		s, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: k, KeyID: kid}}, nil)
		jws, _ := s.Sign([]byte(`{"iss":"x"}`))
		out, _ := jws.CompactSerialize()
		return out
	}
	ctx := context.Background()
	if _, err := ks.VerifySignature(ctx, sign("k1", key)); err != nil || fetches.Load() != 1 {
		t.Fatalf("a good token: %v after %d fetches", err, fetches.Load())
	}
	if _, err := ks.VerifySignature(ctx, sign("k1", key)); err != nil || fetches.Load() != 1 {
		t.Fatalf("a known key is not fetched again: %v, %d fetches", err, fetches.Load())
	}
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	for range 5 {
		if _, err := ks.VerifySignature(ctx, sign("made-up", other)); err == nil {
			t.Fatal("a token of an unknown key verified")
		}
	}
	if fetches.Load() != 1 {
		t.Fatalf("%d fetches within the minute", fetches.Load())
	}
	if _, err := ks.VerifySignature(ctx, sign("k1", other)); err == nil {
		t.Fatal("a token signed by another key under a known kid verified")
	}
	clk.Advance(time.Minute + time.Second)
	_, _ = ks.VerifySignature(ctx, sign("made-up", other))
	if fetches.Load() != 2 {
		t.Fatalf("%d fetches after the minute", fetches.Load())
	}
}
