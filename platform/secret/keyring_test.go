package secret

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"io"
	"testing"

	"golang.org/x/crypto/hkdf"
)

func testKeyring(t *testing.T) *Keyring {
	k, err := NewKeyring(bytes.Repeat([]byte{1}, 32))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestSealRoundTrip(t *testing.T) {
	k := testKeyring(t)
	sealed, err := k.seal([]byte("wJalrXUtnFEMI/K7MDENG"), []byte("bdg_1"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains([]byte(sealed), []byte("wJalrXUtnFEMI")) {
		t.Fatal("sealed value holds the plaintext")
	}
	got, err := k.Open(sealed, []byte("bdg_1"))
	if err != nil || string(got) != "wJalrXUtnFEMI/K7MDENG" {
		t.Fatalf("open = %q, %v", got, err)
	}
	again, _ := k.seal([]byte("wJalrXUtnFEMI/K7MDENG"), []byte("bdg_1"))
	if again == sealed {
		t.Fatal("two seals of the same value are equal: nonce reused")
	}
}

func TestOpenRefuses(t *testing.T) {
	k := testKeyring(t)
	sealed, _ := k.seal([]byte("secret"), []byte("bdg_1"))
	other, _ := NewKeyring(bytes.Repeat([]byte{2}, 32))
	tampered := []byte(sealed)
	tampered[len(tampered)-2] ^= 1
	for name, f := range map[string]func() ([]byte, error){
		"other owner": func() ([]byte, error) { return k.Open(sealed, []byte("bdg_2")) },
		"other key":   func() ([]byte, error) { return other.Open(sealed, []byte("bdg_1")) },
		"tampered":    func() ([]byte, error) { return k.Open(string(tampered), []byte("bdg_1")) },
		"no version":  func() ([]byte, error) { return k.Open(sealed[3:], []byte("bdg_1")) },
		"empty":       func() ([]byte, error) { return k.Open("", nil) },
	} {
		if _, err := f(); err != ErrSealed {
			t.Errorf("%s: err = %v, want ErrSealed", name, err)
		}
	}
}

func TestMACIsHMACUnderDerivedKey(t *testing.T) {
	master := bytes.Repeat([]byte{1}, 32)
	k := testKeyring(t)
	macKey := make([]byte, 32)
	if _, err := io.ReadFull(hkdf.New(sha256.New, master, nil, []byte("authcore mac v1")), macKey); err != nil {
		t.Fatal(err)
	}
	m := hmac.New(sha256.New, macKey)
	m.Write([]byte("ip\x00203.0.113.9"))
	if want := hex.EncodeToString(m.Sum(nil)); k.MAC("ip", []byte("203.0.113.9")) != want {
		t.Fatal("MAC is not HMAC-SHA256 under the derived key")
	}
	if k.MAC("ip", []byte("x")) == k.MAC("other", []byte("x")) {
		t.Fatal("purposes do not separate")
	}
}

func TestNewKeyringNeeds32Bytes(t *testing.T) {
	if _, err := NewKeyring(make([]byte, 31)); err == nil {
		t.Fatal("31-byte key accepted")
	}
}

// Rotation: the first key seals; every listed key opens what it sealed, old-format values
// included; a keyring without the sealing key opens nothing it sealed.
func TestKeyRotation(t *testing.T) {
	oldKey, newKey := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)
	before, _ := NewKeyring(oldKey)
	sealedBefore, _ := before.seal([]byte("s3 secret"), []byte("AKAC1"))
	during, err := NewKeyring(newKey, oldKey)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := during.Open(sealedBefore, []byte("AKAC1")); err != nil || string(got) != "s3 secret" {
		t.Fatalf("an older key's value: %q %v", got, err)
	}
	if during.current(sealedBefore) || !before.current(sealedBefore) {
		t.Fatal("Current misjudges which key sealed a value")
	}
	resealed, err := during.reseal(sealedBefore, []byte("AKAC1"))
	if err != nil || !during.current(resealed) {
		t.Fatalf("reseal: %v", err)
	}
	after, _ := NewKeyring(newKey)
	if got, err := after.Open(resealed, []byte("AKAC1")); err != nil || string(got) != "s3 secret" {
		t.Fatalf("after the old key is gone: %q %v", got, err)
	}
	if _, err := after.Open(sealedBefore, []byte("AKAC1")); err == nil {
		t.Fatal("a value sealed by a removed key still opens")
	}
	if _, err := NewKeyring(newKey, newKey); err == nil {
		t.Fatal("the same key twice is accepted")
	}
}

// Values sealed before keys had ids ("v1.") still open, with whichever listed key sealed them.
func TestLegacyValuesOpen(t *testing.T) {
	oldKey := bytes.Repeat([]byte{1}, 32)
	k, _ := NewKeyring(bytes.Repeat([]byte{2}, 32), oldKey)
	sk, _ := newSealKey(oldKey)
	nonce := make([]byte, sk.aead.NonceSize())
	legacy := "v1." + base64.RawStdEncoding.EncodeToString(sk.aead.Seal(nonce, nonce, []byte("seed"), []byte("key_1")))
	if got, err := k.Open(legacy, []byte("key_1")); err != nil || string(got) != "seed" {
		t.Fatalf("%q %v", got, err)
	}
	if k.current(legacy) {
		t.Fatal("a v1 value counts as current")
	}
}
