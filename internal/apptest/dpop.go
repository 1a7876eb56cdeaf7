package apptest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// DPoPKey is a client's DPoP key (RFC 9449), ES256, making proofs as a client library does.
type DPoPKey struct {
	key    *ecdsa.PrivateKey
	signer jose.Signer
	// JKT is the key's RFC 7638 thumbprint: what tokens bound to it carry in cnf.jkt.
	JKT string
}

// NewDPoPKey makes a key.
func NewDPoPKey(t testing.TB) *DPoPKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, (&jose.SignerOptions{EmbedJWK: true}).WithType("dpop+jwt"))
	if err != nil {
		t.Fatal(err)
	}
	tp, err := (&jose.JSONWebKey{Key: key.Public()}).Thumbprint(crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	return &DPoPKey{key: key, signer: signer, JKT: base64.RawURLEncoding.EncodeToString(tp)}
}

// Proof is a fresh proof for method and url at now, carrying nonce (when not "") and the
// hash of accessToken (when not "").
func (k *DPoPKey) Proof(t testing.TB, method, url, accessToken, nonce string, now time.Time) string {
	t.Helper()
	c := map[string]any{"jti": base64.RawURLEncoding.EncodeToString(randomBytes(t, 16)), "htm": method, "htu": url, "iat": now.Unix()}
	if nonce != "" {
		c["nonce"] = nonce
	}
	if accessToken != "" {
		sum := sha256.Sum256([]byte(accessToken))
		c["ath"] = base64.RawURLEncoding.EncodeToString(sum[:])
	}
	s, err := jwt.Signed(k.signer).Claims(c).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func randomBytes(t testing.TB, n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}
