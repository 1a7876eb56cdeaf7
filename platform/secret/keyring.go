// Package secret holds the cryptography every credential shares: the keyring derived from
// the master key (sealing secrets the server must use again, keyed hashes), and, for bearer
// credentials, generation, digests and constant-time comparison. It must never log or
// return a secret it was given.
package secret

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"

	"go.uber.org/fx"
	"golang.org/x/crypto/hkdf"
)

// MasterKey is AUTHCORE_MASTER_KEY, decoded (32 bytes). cmd resolves and supplies it.
type MasterKey []byte

// Module provides the keyring.
var Module = fx.Module("secret", fx.Provide(NewKeyring))

// Keyring derives one independent key per purpose from the master key, so a key used to
// hash IP addresses can never decrypt a sealed secret.
type Keyring struct {
	seal cipher.AEAD
	mac  []byte
}

// NewKeyring derives the keys with HKDF-SHA256.
func NewKeyring(master MasterKey) (*Keyring, error) {
	if len(master) != 32 {
		return nil, fmt.Errorf("AUTHCORE_MASTER_KEY: want 32 bytes, got %d", len(master))
	}
	sealKey, err := derive(master, "authcore seal v1")
	if err != nil {
		return nil, err
	}
	macKey, err := derive(master, "authcore mac v1")
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(sealKey)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Keyring{seal: aead, mac: macKey}, nil
}

func derive(master []byte, info string) ([]byte, error) {
	k := make([]byte, 32)
	if _, err := io.ReadFull(hkdf.New(sha256.New, master, nil, []byte(info)), k); err != nil {
		return nil, err
	}
	return k, nil
}

// Seal encrypts plaintext with AES-256-GCM. aad binds the ciphertext to its owner (say a
// row id) so a sealed value copied to another row does not open.
func (k *Keyring) Seal(plaintext, aad []byte) (string, error) {
	nonce := make([]byte, k.seal.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	out := k.seal.Seal(nonce, nonce, plaintext, aad)
	return "v1." + base64.RawStdEncoding.EncodeToString(out), nil
}

// ErrSealed means a sealed value did not open: wrong key, wrong owner or tampered.
var ErrSealed = errors.New("sealed value does not open")

// Open reverses Seal.
func (k *Keyring) Open(sealed string, aad []byte) ([]byte, error) {
	if len(sealed) < 3 || sealed[:3] != "v1." {
		return nil, ErrSealed
	}
	raw, err := base64.RawStdEncoding.DecodeString(sealed[3:])
	if err != nil || len(raw) < k.seal.NonceSize() {
		return nil, ErrSealed
	}
	n := k.seal.NonceSize()
	out, err := k.seal.Open(nil, raw[:n], raw[n:], aad)
	if err != nil {
		return nil, ErrSealed
	}
	return out, nil
}

// MAC is hex HMAC-SHA256 of data under the server's MAC key, labelled by purpose so the
// same input hashes differently for different uses.
func (k *Keyring) MAC(purpose string, data []byte) string {
	m := hmac.New(sha256.New, k.mac)
	m.Write([]byte(purpose))
	m.Write([]byte{0})
	m.Write(data)
	return hex.EncodeToString(m.Sum(nil))
}

// NewMasterKey returns 32 random bytes, for a development master key.
func NewMasterKey() ([]byte, error) {
	k := make([]byte, 32)
	_, err := rand.Read(k)
	return k, err
}
