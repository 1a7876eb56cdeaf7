package apptest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/authcore/authcore/platform/config"
)

// Scanner is a secret-scanning partner as GitHub is one: a P-256 key whose public half
// the app trusts, signing leak reports.
type Scanner struct {
	key *ecdsa.PrivateKey
	// Trusted is the option that makes an app trust it (AUTHCORE_SECRET_SCANNING_KEYS).
	Trusted Option
}

// NewScanner makes a partner key and writes GitHub's public-keys file for it.
func NewScanner(t testing.TB) *Scanner {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	doc := map[string]any{"public_keys": []map[string]any{{"key_identifier": "scanner-1",
		"key": string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})), "is_current": true}}}
	b, _ := json.Marshal(doc)
	path := filepath.Join(t.TempDir(), "scanner-keys.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return &Scanner{key: k, Trusted: WithConfig(func(c *config.Config) { c.SecretScanningKeys = path })}
}

// Report sends a signed leak report of tokens to a, as GitHub does: ECDSA P-256 over
// SHA-256 of the raw body, ASN.1, base64.
func (s *Scanner) Report(t testing.TB, a *App, tokens ...string) *Response {
	t.Helper()
	var report []map[string]string
	for _, tok := range tokens {
		report = append(report, map[string]string{"token": tok, "type": "authcore", "url": "https://github.com/o/r/blob/main/.env", "source": "content"})
	}
	body, _ := json.Marshal(report)
	sum := sha256.Sum256(body)
	sig, err := ecdsa.SignASN1(rand.Reader, s.key, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	return a.Do(Req{Method: http.MethodPost, Path: "/v1/secret-scanning/report", Body: string(body), Header: map[string]string{
		"Content-Type": "application/json", "Github-Public-Key-Identifier": "scanner-1",
		"Github-Public-Key-Signature": base64.StdEncoding.EncodeToString(sig)}})
}
