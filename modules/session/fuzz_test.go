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
	e := &Engine{keys: &keys{public: map[string]ed25519.PublicKey{"key_1": pub}}}
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
		v, err := e.verifySignature(token)
		if err != nil {
			return
		}
		p := v.principal
		if p.UserID == "" || p.SessionHandle == "" || p.TenantID == "" || !e.ourIssuer(p.Claims["iss"].(string)) || !sessionAudience(p.Claims["aud"]) {
			t.Fatalf("accepted %q as %+v", token, p)
		}
	})
}
