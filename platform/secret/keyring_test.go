package secret

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
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
	sealed, err := k.Seal([]byte("wJalrXUtnFEMI/K7MDENG"), []byte("bdg_1"))
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
	again, _ := k.Seal([]byte("wJalrXUtnFEMI/K7MDENG"), []byte("bdg_1"))
	if again == sealed {
		t.Fatal("two seals of the same value are equal: nonce reused")
	}
}

func TestOpenRefuses(t *testing.T) {
	k := testKeyring(t)
	sealed, _ := k.Seal([]byte("secret"), []byte("bdg_1"))
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
