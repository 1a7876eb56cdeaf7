package session

import (
	"crypto/ed25519"
	"crypto/rand"
	"strings"
	"testing"

	"github.com/authcore/authcore/platform/identity"
	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// FuzzVerifySignature: any string presented as an access token is judged without
// panicking, and whatever is accepted carries our issuer, a subject, a session and a
// tenant, and no audience but the session one.
func FuzzVerifySignature(f *testing.F) {
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	e := &Issuer{keys: &keys{public: map[string]verifying{"key_1": {key: pub, alg: jose.EdDSA}}}}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.EdDSA, Key: priv}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", "key_1"))
	if err != nil {
		f.Fatal(err)
	}
	sign := func(claims map[string]any) string {
		s, err := jwt.Signed(signer).Claims(claims).Serialize()
		if err != nil {
			f.Fatal(err)
		}
		return s
	}
	good := sign(map[string]any{"iss": identity.LegacyIssuer, "aud": SessionAudience, "sub": "usr_1", "sid": "ses_1", "tid": "public", "exp": 2e9})
	parts := strings.Split(good, ".")
	for _, s := range []string{
		good,
		sign(map[string]any{"iss": identity.LegacyIssuer, "aud": "authcore", "sub": "cli_1", "exp": 2e9}),
		sign(map[string]any{"iss": identity.LegacyIssuer, "sub": "usr_1", "sid": "ses_1", "tid": "public", "exp": 2e9}),
		"eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0." + parts[1] + ".",
		parts[0] + "." + parts[1] + "x." + parts[2],
		"", "a.b.c", "....",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, token string) {
		v, err := e.verifySession(token)
		if err != nil {
			return
		}
		p := v.principal
		if p.UserID == "" || p.SessionHandle == "" || p.TenantID == "" || !e.ourIssuer(p.Claims["iss"].(string)) || !sessionAudience(p.Claims["aud"]) {
			t.Fatalf("accepted %q as %+v", token, p)
		}
	})
}

// FuzzCompactSignerMatchesGoJose: for any payload and key id, the prepared signer writes
// byte for byte what go-jose's signer writes (Ed25519 signatures are deterministic), and
// go-jose verifies it to the same payload.
func FuzzCompactSignerMatchesGoJose(f *testing.F) {
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	f.Add([]byte(`{"iss":"http://localhost:8080","sub":"ai_01J","aud":["https://api.example.com"],"exp":1790000000,"scope":"read"}`), "key_01JABC")
	f.Add([]byte{}, "")
	f.Add([]byte("\x00\xff<>&\u2028"), `k"\<`)
	f.Add([]byte("0"), "\b")
	f.Add([]byte("0"), "key_01JABCDEFGHJKMNPQRSTVWXYZ")
	f.Fuzz(func(t *testing.T, payload []byte, kid string) {
		ours, err := newCompactSigner(priv, "at+jwt", kid)
		if err != nil {
			if strings.HasPrefix(kid, "key_") && len(kid) < 40 && strings.Trim(kid, "key_0123456789ABCDEFGHJKMNPQRSTVWXYZ") == "" {
				t.Fatalf("a key id of ours was refused: %q", kid)
			}
			t.Skip() // not a key id of ours: refused rather than risk another escaping
		}
		theirs, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.EdDSA, Key: priv}, (&jose.SignerOptions{}).WithType("at+jwt").WithHeader("kid", kid))
		if err != nil {
			t.Fatal(err)
		}
		jws, err := theirs.Sign(payload)
		if err != nil {
			t.Fatal(err)
		}
		want, err := jws.CompactSerialize()
		if err != nil {
			t.Fatal(err)
		}
		got := ours.Sign(payload)
		if got != want {
			t.Fatalf("ours %q\ngo-jose %q", got, want)
		}
		parsed, err := jose.ParseSigned(got, []jose.SignatureAlgorithm{jose.EdDSA})
		if err != nil {
			t.Fatal(err)
		}
		verified, err := parsed.Verify(priv.Public())
		if err != nil || string(verified) != string(payload) {
			t.Fatalf("go-jose does not verify it to the payload: %v", err)
		}
	})
}

// BenchmarkCompactSigner is signing an OAuth access token: the prepared signer, then
// go-jose's, on the same payload (see compactSigner).
func BenchmarkCompactSigner(b *testing.B) {
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	payload := []byte(`{"iss":"http://localhost:8080","sub":"ai_01JABCDEFGHJKMNPQRSTVWXYZ","aud":["https://api.example.com"],"exp":1790000000,"iat":1789999100,"nbf":1789999100,"jti":"01JABCDEFGHJKMNPQRSTVWXYZ0","scope":"read write","client_id":"ac_client_x","project_id":"prj_1"}`)
	b.Run("prepared", func(b *testing.B) {
		s, _ := newCompactSigner(priv, "at+jwt", "key_01JABCDEFGHJKMNPQRSTVWXYZ")
		b.ReportAllocs()
		for b.Loop() {
			_ = s.Sign(payload)
		}
	})
	b.Run("go-jose", func(b *testing.B) {
		s, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.EdDSA, Key: priv}, (&jose.SignerOptions{}).WithType("at+jwt").WithHeader("kid", "key_01JABCDEFGHJKMNPQRSTVWXYZ"))
		b.ReportAllocs()
		for b.Loop() {
			jws, _ := s.Sign(payload)
			_, _ = jws.CompactSerialize()
		}
	})
}
