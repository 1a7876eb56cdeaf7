package testkit

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"

	"github.com/descope/virtualwebauthn"
)

// PasskeyCredential is a virtual authenticator's P-256 credential that every relying party
// accepts. virtualwebauthn writes the key's coordinates with big.Int.Bytes, which drops
// leading zero bytes, so about one key in 64 carries a 31-byte coordinate; go-webauthn
// rightly refuses that COSE key, and a test that drew one failed at random. Keys are drawn
// until both coordinates are whole.
func PasskeyCredential() virtualwebauthn.Credential {
	for {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			panic(err)
		}
		if len(k.X.Bytes()) != 32 || len(k.Y.Bytes()) != 32 {
			continue
		}
		der, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			panic(err)
		}
		return virtualwebauthn.NewCredentialWithImportedKey(virtualwebauthn.KeyTypeEC2, der)
	}
}
