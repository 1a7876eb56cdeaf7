package dpop_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/dpop"
)

const (
	htu   = "https://auth.example.com/v1/auth-core/ai/me"
	token = "ac_ai_0123456789abcdefghijklmnopqrstuvwxyz01"
)

// holder is a client's key and the proofs it makes.
type holder struct {
	key crypto.Signer
	alg jose.SignatureAlgorithm
	jwk jose.JSONWebKey
	n   int
}

func newHolder(t testing.TB, alg jose.SignatureAlgorithm) *holder {
	t.Helper()
	var key crypto.Signer
	var err error
	switch alg {
	case jose.ES256:
		key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case jose.EdDSA:
		_, key, err = ed25519.GenerateKey(rand.Reader)
	case jose.RS256:
		key, err = rsa.GenerateKey(rand.Reader, 2048)
	}
	if err != nil {
		t.Fatal(err)
	}
	return &holder{key: key, alg: alg, jwk: jose.JSONWebKey{Key: key.Public()}}
}

func (h *holder) jkt(t *testing.T) string {
	tp, err := h.jwk.Thumbprint(crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	return base64.RawURLEncoding.EncodeToString(tp)
}

// proof signs claims (a fresh jti unless given) with typ dpop+jwt and the public key in
// the header; header edits the signer's options.
func (h *holder) proof(t testing.TB, claims map[string]any, header func(*jose.SignerOptions) *jose.SignerOptions) string {
	t.Helper()
	h.n++
	c := map[string]any{"jti": "jti-" + string(rune('a'+h.n%26)) + time.Now().Format("150405.000000000")}
	for k, v := range claims {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	opts := (&jose.SignerOptions{EmbedJWK: true}).WithType("dpop+jwt")
	if header != nil {
		opts = header(opts)
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: h.alg, Key: h.key}, opts)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jwt.Signed(s).Claims(c).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func ath(tok string) string {
	sum := sha256.Sum256([]byte(tok))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

func refusal(t *testing.T, err error) *dpop.Error {
	t.Helper()
	var e *dpop.Error
	if !errors.As(err, &e) {
		t.Fatalf("err %v, want a *dpop.Error", err)
	}
	return e
}

var now = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

func newChecker(t *testing.T, clk clock.Clock, size int) *dpop.Checker {
	t.Helper()
	c, err := dpop.NewChecker(clk, size)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A good proof of each algorithm names the key that made it.
func TestProofOfEachAlgorithm(t *testing.T) {
	clk := clock.NewFake(now)
	c := newChecker(t, clk, 100)
	for _, alg := range dpop.Algorithms {
		t.Run(string(alg), func(t *testing.T) {
			h := newHolder(t, alg)
			p, err := c.Verify(h.proof(t, map[string]any{"htm": "GET", "htu": htu, "iat": now.Unix(), "ath": ath(token), "nonce": c.Nonce()}, nil),
				dpop.Request{Method: "GET", URL: htu, AccessToken: token})
			if err != nil {
				t.Fatal(err)
			}
			if p.JKT != h.jkt(t) || !dpop.ValidJKT(p.JKT) {
				t.Fatalf("jkt %q, want %q", p.JKT, h.jkt(t))
			}
			// The same header again: its key is known, the signature still checked.
			again := h.proof(t, map[string]any{"htm": "GET", "htu": htu, "iat": now.Unix(), "ath": ath(token), "nonce": c.Nonce()}, nil)
			if p, err := c.Verify(again, dpop.Request{Method: "GET", URL: htu, AccessToken: token}); err != nil || p.JKT != h.jkt(t) {
				t.Fatalf("a second proof: %v %v", p, err)
			}
			parts := strings.Split(h.proof(t, map[string]any{"htm": "GET", "htu": htu, "iat": now.Unix(), "ath": ath(token), "nonce": c.Nonce()}, nil), ".")
			forged := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"jti":"forged","htm":"GET","htu":"`+htu+`","iat":`+
				fmt.Sprint(now.Unix())+`,"ath":"`+ath(token)+`","nonce":"`+c.Nonce()+`"}`)) + "." + parts[2]
			refusal(t, second(c.Verify(forged, dpop.Request{Method: "GET", URL: htu, AccessToken: token})))
			stranger := newHolder(t, alg)
			swapped := stranger.proof(t, map[string]any{"htm": "GET", "htu": htu, "iat": now.Unix(), "ath": ath(token), "nonce": c.Nonce()},
				func(o *jose.SignerOptions) *jose.SignerOptions { o.EmbedJWK = false; return o.WithHeader("jwk", h.jwk) })
			refusal(t, second(c.Verify(swapped, dpop.Request{Method: "GET", URL: htu, AccessToken: token})))
		})
	}
}

// ed25519Proof is a proof with RFC 9864's alg Ed25519, as oauth4webapi and the dpop
// package make them (go-jose writes EdDSA); key signs, jwk is put in the header.
func ed25519Proof(t testing.TB, key ed25519.PrivateKey, jwk any, claims map[string]any) string {
	t.Helper()
	h, _ := json.Marshal(map[string]any{"alg": "Ed25519", "typ": "dpop+jwt", "jwk": jwk})
	p, _ := json.Marshal(claims)
	input := base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(p)
	return input + "." + base64.RawURLEncoding.EncodeToString(ed25519.Sign(key, []byte(input)))
}

func TestProofWithTheFullySpecifiedEd25519(t *testing.T) {
	clk := clock.NewFake(now)
	c := newChecker(t, clk, 100)
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	pub := jose.JSONWebKey{Key: key.Public()}
	claims := func() map[string]any {
		return map[string]any{"jti": time.Now().String(), "htm": "GET", "htu": htu, "iat": now.Unix(), "ath": ath(token), "nonce": c.Nonce()}
	}
	req := dpop.Request{Method: "GET", URL: htu, AccessToken: token}
	p, err := c.Verify(ed25519Proof(t, key, pub, claims()), req)
	tp, _ := pub.Thumbprint(crypto.SHA256)
	if err != nil || p.JKT != base64.RawURLEncoding.EncodeToString(tp) {
		t.Fatalf("%v %v", p, err)
	}
	_, other, _ := ed25519.GenerateKey(rand.Reader)
	refusal(t, second(c.Verify(ed25519Proof(t, other, pub, claims()), req)))
	ec := newHolder(t, jose.ES256)
	refusal(t, second(c.Verify(ed25519Proof(t, key, ec.jwk, claims()), req)))
}

// Every rule refuses with its own reason; only a missing or stale nonce asks for a retry.
func TestProofRefusals(t *testing.T) {
	clk := clock.NewFake(now)
	c := newChecker(t, clk, 100)
	other := newChecker(t, clk, 100)
	h := newHolder(t, jose.ES256)
	req := dpop.Request{Method: "GET", URL: htu, AccessToken: token}
	good := func() map[string]any {
		return map[string]any{"htm": "GET", "htu": htu, "iat": clk.Now().Unix(), "ath": ath(token), "nonce": c.Nonce()}
	}
	with := func(k string, v any) map[string]any { m := good(); m[k] = v; return m }
	hs256, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: []byte("0123456789abcdef0123456789abcdef")}, (&jose.SignerOptions{}).WithType("dpop+jwt"))
	if err != nil {
		t.Fatal(err)
	}
	symmetric, _ := jwt.Signed(hs256).Claims(good()).Serialize()
	private := newHolder(t, jose.ES256)
	withPrivate := private.proof(t, good(), func(o *jose.SignerOptions) *jose.SignerOptions {
		o.EmbedJWK = false
		return o.WithHeader("jwk", jose.JSONWebKey{Key: private.key})
	})
	stranger := newHolder(t, jose.ES256)
	swapped := stranger.proof(t, good(), func(o *jose.SignerOptions) *jose.SignerOptions {
		o.EmbedJWK = false // another key in the header than the one that signed
		return o.WithHeader("jwk", h.jwk)
	})
	for _, c2 := range []struct {
		name  string
		proof string
		req   dpop.Request
		nonce bool
	}{
		{"none", "", req, false},
		{"not a JWS", "abc.def.ghi", req, false},
		{"HS256", symmetric, req, false},
		{"typ JWT", h.proof(t, good(), func(o *jose.SignerOptions) *jose.SignerOptions { return o.WithType("JWT") }), req, false},
		{"no jwk", h.proof(t, good(), func(o *jose.SignerOptions) *jose.SignerOptions { o.EmbedJWK = false; return o }), req, false},
		{"a private jwk", withPrivate, req, false},
		{"signed by another key", swapped, req, false},
		{"no jti", h.proof(t, with("jti", nil), nil), req, false},
		{"another method", h.proof(t, with("htm", "POST"), nil), req, false},
		{"another URL", h.proof(t, with("htu", "https://auth.example.com/v1/auth-core/session/me"), nil), req, false},
		{"another host", h.proof(t, with("htu", "https://evil.example.com/v1/auth-core/ai/me"), nil), req, false},
		{"no iat", h.proof(t, with("iat", nil), nil), req, false},
		{"iat 31 s ago", h.proof(t, with("iat", clk.Now().Add(-dpop.Window-time.Second).Unix()), nil), req, false},
		{"iat 31 s ahead", h.proof(t, with("iat", clk.Now().Add(dpop.Window+time.Second).Unix()), nil), req, false},
		{"ath of another token", h.proof(t, with("ath", ath("ac_ai_other")), nil), req, false},
		{"no ath", h.proof(t, with("ath", nil), nil), req, false},
		{"ath where no token is sent", h.proof(t, good(), nil), dpop.Request{Method: "GET", URL: htu}, false},
		{"no nonce", h.proof(t, with("nonce", nil), nil), req, true},
		{"another server's nonce", h.proof(t, with("nonce", other.Nonce()), nil), req, true},
		{"a made-up nonce", h.proof(t, with("nonce", "AAAAAAAAAAAAAAAAAAAAAAAAAAA"), nil), req, true},
	} {
		t.Run(c2.name, func(t *testing.T) {
			_, err := c.Verify(c2.proof, c2.req)
			e := refusal(t, err)
			if e.UseNonce != c2.nonce {
				t.Fatalf("%q: use_dpop_nonce %v, want %v", e.Why, e.UseNonce, c2.nonce)
			}
			want := "invalid_dpop_proof"
			if c2.nonce {
				want = "use_dpop_nonce"
			}
			if e.Code() != want {
				t.Fatalf("code %s, want %s", e.Code(), want)
			}
		})
	}
	t.Run("iat 30 s either way", func(t *testing.T) {
		for _, d := range []time.Duration{-dpop.Window, dpop.Window} {
			if _, err := c.Verify(h.proof(t, with("iat", clk.Now().Add(d).Unix()), nil), req); err != nil {
				t.Fatalf("%v: %v", d, err)
			}
		}
	})
	t.Run("the URL's query and the host's case do not matter", func(t *testing.T) {
		if _, err := c.Verify(h.proof(t, with("htu", "https://AUTH.example.com/v1/auth-core/ai/me?x=1"), nil), dpop.Request{Method: "GET", URL: htu, AccessToken: token}); err != nil {
			t.Fatal(err)
		}
	})
}

// A proof is spent once; nonces rotate, the last one still taken while the new one spreads.
func TestReplayAndNonces(t *testing.T) {
	clk := clock.NewFake(now)
	c := newChecker(t, clk, 100)
	h := newHolder(t, jose.EdDSA)
	req := dpop.Request{Method: "POST", URL: "https://auth.example.com/v1/oauth/token"}
	p := h.proof(t, map[string]any{"htm": "POST", "htu": req.URL, "iat": now.Unix(), "nonce": c.Nonce()}, nil)
	if _, err := c.Verify(p, req); err != nil {
		t.Fatal(err)
	}
	if e := refusal(t, second(c.Verify(p, req))); e.UseNonce {
		t.Fatalf("a replay asked for a nonce: %s", e.Why)
	}
	// Another process (replica) never takes this one's proofs: its nonces are its own.
	if e := refusal(t, second(newChecker(t, clk, 100).Verify(h.proof(t, map[string]any{"htm": "POST", "htu": req.URL, "iat": now.Unix(), "nonce": c.Nonce()}, nil), req))); !e.UseNonce {
		t.Fatalf("another replica: %s", e.Why)
	}

	old := c.Nonce()
	clk.Advance(5 * time.Minute)
	if c.Nonce() == old {
		t.Fatal("the nonce did not rotate")
	}
	if _, err := c.Verify(h.proof(t, map[string]any{"htm": "POST", "htu": req.URL, "iat": clk.Now().Unix(), "nonce": old}, nil), req); err != nil {
		t.Fatalf("the previous nonce: %v", err)
	}
	clk.Advance(5 * time.Minute)
	if e := refusal(t, second(c.Verify(h.proof(t, map[string]any{"htm": "POST", "htu": req.URL, "iat": clk.Now().Unix(), "nonce": old}, nil), req))); !e.UseNonce {
		t.Fatalf("a nonce two rotations old: %s", e.Why)
	}
}

// Memory for jtis is bounded, and one key may hold only what leaves as much free: when
// its share is full of live proofs a new one is refused rather than an old one forgotten
// (which would let it be replayed), and another key is still served. A proof is
// remembered as long as its iat is within the window, and no longer.
func TestFullMemoryRefusesRatherThanForgets(t *testing.T) {
	clk := clock.NewFake(now)
	c := newChecker(t, clk, 4)
	h, other := newHolder(t, jose.ES256), newHolder(t, jose.ES256)
	req := dpop.Request{Method: "GET", URL: htu}
	proof := func(h *holder) string {
		return h.proof(t, map[string]any{"htm": "GET", "htu": htu, "iat": clk.Now().Unix(), "nonce": c.Nonce()}, nil)
	}
	first := proof(h)
	for _, p := range []string{first, proof(h)} {
		if _, err := c.Verify(p, req); err != nil {
			t.Fatal(err)
		}
	}
	// h holds 2 of 4: as much as is free.
	if e := refusal(t, second(c.Verify(proof(h), req))); !strings.Contains(e.Why, "slow down") {
		t.Fatalf("a key over its share: %s", e.Why)
	}
	if e := refusal(t, second(c.Verify(first, req))); !strings.Contains(e.Why, "used already") {
		t.Fatalf("a replay: %s", e.Why)
	}
	if _, err := c.Verify(proof(other), req); err != nil {
		t.Fatalf("another key while the first holds its share: %v", err)
	}
	clk.Advance(dpop.Window) // the remembered ones are still live: their iat is within the window
	refusal(t, second(c.Verify(proof(h), req)))
	clk.Advance(time.Second) // now they are not, and are forgotten
	refusal(t, second(c.Verify(first, req)))
	for range 2 {
		if _, err := c.Verify(proof(h), req); err != nil {
			t.Fatal(err)
		}
	}
}

// A proof whose request was refused is forgotten: a flood of refused requests fills no
// memory; a proof of a request that got something is never forgotten that way early.
func TestReleasedProofsTakeNoRoom(t *testing.T) {
	clk := clock.NewFake(now)
	c := newChecker(t, clk, 1)
	h := newHolder(t, jose.ES256)
	req := dpop.Request{Method: "GET", URL: htu}
	proof := func() string {
		return h.proof(t, map[string]any{"htm": "GET", "htu": htu, "iat": clk.Now().Unix(), "nonce": c.Nonce()}, nil)
	}
	for range 3 {
		p, err := c.Verify(proof(), req)
		if err != nil {
			t.Fatal(err)
		}
		c.Release(p)
	}
	kept := proof()
	if _, err := c.Verify(kept, req); err != nil {
		t.Fatal(err)
	}
	refusal(t, second(c.Verify(kept, req)))
}

func second[T any](_ T, err error) error { return err }

func TestValidJKT(t *testing.T) {
	for s, want := range map[string]bool{
		"NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs":  true,
		"NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9X":   false,
		"NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs=": false,
		"NzbLsXh8uDCcd+6MNwXF4W/7noWXFZAfHkxZsRGC9Xs":  false,
		"": false,
	} {
		if dpop.ValidJKT(s) != want {
			t.Errorf("ValidJKT(%q) != %v", s, want)
		}
	}
}

// No proof, however malformed, panics the checker or is taken without its key's signature.
func FuzzVerify(f *testing.F) {
	clk := clock.NewFake(now)
	c, err := dpop.NewChecker(clk, 1000)
	if err != nil {
		f.Fatal(err)
	}
	h := newHolder(f, jose.ES256)
	good := h.proof(f, map[string]any{"htm": "GET", "htu": htu, "iat": now.Unix(), "ath": ath(token), "nonce": c.Nonce()}, nil)
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	f.Add(good)
	f.Add(ed25519Proof(f, edKey, jose.JSONWebKey{Key: edKey.Public()}, map[string]any{"jti": "x", "htm": "GET", "htu": htu, "iat": now.Unix(), "ath": ath(token), "nonce": c.Nonce()}))
	f.Add("..")
	f.Add("a.b.c")
	f.Add("eyJhbGciOiJub25lIn0.e30.")
	f.Fuzz(func(t *testing.T, proof string) {
		p, err := c.Verify(proof, dpop.Request{Method: "GET", URL: htu, AccessToken: token})
		if err == nil && !dpop.ValidJKT(p.JKT) {
			t.Fatalf("accepted with jkt %q", p.JKT)
		}
	})
}

// A proof may alias a request buffer the server reuses (Fiber's zero-copy strings): what
// the checker keeps of it must not change when the buffer does.
func TestProofBufferReused(t *testing.T) {
	clk := clock.NewFake(now)
	c := newChecker(t, clk, 100)
	req := dpop.Request{Method: "GET", URL: htu, AccessToken: token}
	claims := func() map[string]any {
		return map[string]any{"htm": "GET", "htu": htu, "iat": now.Unix(), "ath": ath(token), "nonce": c.Nonce()}
	}
	first, second := newHolder(t, jose.ES256), newHolder(t, jose.ES256)
	buf := []byte(first.proof(t, claims(), nil))
	if _, err := c.Verify(unsafe.String(&buf[0], len(buf)), req); err != nil {
		t.Fatal(err)
	}
	next := second.proof(t, claims(), nil)
	header := next[:strings.IndexByte(next, '.')]
	if strings.IndexByte(string(buf), '.') != len(header) {
		t.Fatal("the two headers differ in length; the test needs them equal")
	}
	copy(buf, header) // the next request lands where the first was
	if _, err := c.Verify(second.proof(t, claims(), nil), req); err != nil {
		t.Fatalf("a proof after the buffer was reused: %v", err)
	}
}

// A warm proof's cost by algorithm: the header known, one signature check, the claims, the
// nonce and the jti. The bound ai/me's floor (docs/operations.md has the bench's figures).
func BenchmarkVerify(b *testing.B) {
	for _, alg := range dpop.Algorithms {
		b.Run(string(alg), func(b *testing.B) {
			clk := clock.NewFake(now)
			c, err := dpop.NewChecker(clk, dpop.Memory)
			if err != nil {
				b.Fatal(err)
			}
			h := newHolder(b, alg)
			proofs := make([]string, b.N+1)
			for i := range proofs {
				proofs[i] = h.proof(b, map[string]any{"jti": fmt.Sprint("b", i), "htm": "GET", "htu": htu, "iat": now.Unix(), "ath": ath(token), "nonce": c.Nonce()}, nil)
			}
			req := dpop.Request{Method: "GET", URL: htu, AccessToken: token}
			if _, err := c.Verify(proofs[b.N], req); err != nil { // the header is known from here on
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				if _, err := c.Verify(proofs[i], req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A proof's jti is remembered for as long as its iat lets it be taken, however far ahead
// its client's clock: one made Window ahead is refused as a replay 2*Window later, and by
// its iat after that.
func TestAProofIsRememberedWhileItsIatIsInTheWindow(t *testing.T) {
	clk := clock.NewFake(now)
	c := newChecker(t, clk, 100)
	h := newHolder(t, jose.EdDSA)
	req := dpop.Request{Method: "GET", URL: htu}
	ahead := h.proof(t, map[string]any{"htm": "GET", "htu": htu, "iat": now.Add(dpop.Window).Unix(), "nonce": c.Nonce()}, nil)
	if _, err := c.Verify(ahead, req); err != nil {
		t.Fatal(err)
	}
	clk.Advance(2 * dpop.Window)
	if e := refusal(t, second(c.Verify(ahead, req))); !strings.Contains(e.Why, "used already") {
		t.Fatalf("a replay while its iat is in the window: %s", e.Why)
	}
	clk.Advance(time.Second)
	if e := refusal(t, second(c.Verify(ahead, req))); !strings.Contains(e.Why, "iat") {
		t.Fatalf("a replay after: %s", e.Why)
	}
}
