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
	"strings"

	"go.uber.org/fx"
	"golang.org/x/crypto/hkdf"
)

// MasterKey is one master key (32 bytes).
type MasterKey []byte

// MasterKeys is AUTHCORE_MASTER_KEY, decoded: the first key seals, every key opens, so a
// key can be rotated without downtime (see `authcore keys reseal`). cmd resolves and
// supplies it.
type MasterKeys []MasterKey

// Module provides the keyring.
var Module = fx.Module("secret", fx.Provide(func(ks MasterKeys) (*Keyring, error) {
	if len(ks) == 0 {
		return nil, errors.New("AUTHCORE_MASTER_KEY: no key")
	}
	return NewKeyring(ks[0], ks[1:]...)
}))

// Keyring derives one independent key per purpose from the master key, so a key used to
// hash IP addresses can never decrypt a sealed secret.
type Keyring struct {
	sealing sealKey            // the first master key's: seals
	opening map[string]sealKey // every master key's, by key id: open
	mac     []byte
}

// sealKey is the sealing key derived from one master key, with its id.
type sealKey struct {
	id   string
	aead cipher.AEAD
}

// NewKeyring derives the keys with HKDF-SHA256: current seals and keys the MACs; older keys
// only open what they sealed.
func NewKeyring(current MasterKey, older ...MasterKey) (*Keyring, error) {
	k := &Keyring{opening: map[string]sealKey{}}
	for i, master := range append([]MasterKey{current}, older...) {
		if len(master) != 32 {
			return nil, fmt.Errorf("AUTHCORE_MASTER_KEY: want 32 bytes, got %d", len(master))
		}
		sk, err := newSealKey(master)
		if err != nil {
			return nil, err
		}
		if _, dup := k.opening[sk.id]; dup {
			return nil, errors.New("AUTHCORE_MASTER_KEY: the same key is listed twice")
		}
		k.opening[sk.id] = sk
		if i == 0 {
			k.sealing = sk
		}
	}
	mac, err := derive(current, "authcore mac v1")
	if err != nil {
		return nil, err
	}
	k.mac = mac
	return k, nil
}

func newSealKey(master MasterKey) (sealKey, error) {
	key, err := derive(master, "authcore seal v1")
	if err != nil {
		return sealKey{}, err
	}
	// The id names the key in what it sealed, so Open needs no trial decryption and the
	// reseal command can tell what is already sealed under the current key. It reveals
	// nothing of the key: a separate derivation, truncated.
	idKey, err := derive(master, "authcore key id v1")
	if err != nil {
		return sealKey{}, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return sealKey{}, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return sealKey{}, err
	}
	return sealKey{id: hex.EncodeToString(idKey[:4]), aead: aead}, nil
}

func derive(master []byte, info string) ([]byte, error) {
	k := make([]byte, 32)
	if _, err := io.ReadFull(hkdf.New(sha256.New, master, nil, []byte(info)), k); err != nil {
		return nil, err
	}
	return k, nil
}

// seal encrypts plaintext with AES-256-GCM under the current key, as
// "v2.<key id>.<base64 of nonce and ciphertext>". aad binds the ciphertext to its owner
// (say a row id) so a sealed value copied to another row does not open. Other packages
// seal through a declared column (Sealed.Seal), so `keys reseal` knows every one.
func (k *Keyring) seal(plaintext, aad []byte) (string, error) {
	a := k.sealing.aead
	nonce := make([]byte, a.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	out := a.Seal(nonce, nonce, plaintext, aad)
	return k.currentPrefix() + base64.RawStdEncoding.EncodeToString(out), nil
}

// current reports whether sealed was sealed under the current key (nothing to reseal).
func (k *Keyring) current(sealed string) bool {
	return strings.HasPrefix(sealed, k.currentPrefix())
}

// reseal opens sealed with whichever key sealed it and seals it again under the current key.
func (k *Keyring) reseal(sealed string, aad []byte) (string, error) {
	plain, err := k.Open(sealed, aad)
	if err != nil {
		return "", err
	}
	return k.seal(plain, aad)
}

// ErrSealed means a sealed value did not open: wrong key, wrong owner or tampered.
var ErrSealed = errors.New("sealed value does not open")

// Open reverses Seal with the key that sealed it. Values sealed before keys had ids
// ("v1.…") are tried with every key.
func (k *Keyring) Open(sealed string, aad []byte) ([]byte, error) {
	if rest, ok := strings.CutPrefix(sealed, "v2."); ok {
		id, body, _ := strings.Cut(rest, ".")
		sk, ok := k.opening[id]
		if !ok {
			return nil, ErrSealed
		}
		return open(sk.aead, body, aad)
	}
	if body, ok := strings.CutPrefix(sealed, "v1."); ok {
		for _, sk := range k.opening {
			if out, err := open(sk.aead, body, aad); err == nil {
				return out, nil
			}
		}
	}
	return nil, ErrSealed
}

func open(a cipher.AEAD, body string, aad []byte) ([]byte, error) {
	raw, err := base64.RawStdEncoding.DecodeString(body)
	if err != nil || len(raw) < a.NonceSize() {
		return nil, ErrSealed
	}
	n := a.NonceSize()
	out, err := a.Open(nil, raw[:n], raw[n:], aad)
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
