package account

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/alexedwards/argon2id"
	"golang.org/x/crypto/bcrypt"
	"golang.org/x/crypto/pbkdf2"
	"golang.org/x/crypto/scrypt"

	"github.com/authcore/authcore/platform/tracing"
)

var raw = base64.RawStdEncoding

func salt(t testing.TB) []byte {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

// importedHashes makes one hash of pw per accepted scheme with that scheme's own library
// (Firebase's is its published vector, made by Firebase's reference tool).
func importedHashes(t testing.TB, pw string) map[string]string {
	out := map[string]string{}
	b, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	out["bcrypt-2a"] = string(b)
	out["bcrypt-2b"] = "$2b$" + string(b)[4:]
	out["bcrypt-2y"] = "$2y$" + string(b)[4:]
	a, err := argon2id.CreateHash(pw, &cheap)
	if err != nil {
		t.Fatal(err)
	}
	out["argon2id"] = a
	s := salt(t)
	k, err := scrypt.Key([]byte(pw), s, 1<<10, 8, 1, 32)
	if err != nil {
		t.Fatal(err)
	}
	out["scrypt"] = fmt.Sprintf("$scrypt$ln=10,r=8,p=1$%s$%s", raw.EncodeToString(s), raw.EncodeToString(k))
	out["pbkdf2-sha256"] = fmt.Sprintf("$pbkdf2-sha256$i=1000$%s$%s", raw.EncodeToString(s), raw.EncodeToString(pbkdf2.Key([]byte(pw), s, 1000, 32, sha256.New)))
	out["pbkdf2-sha512"] = fmt.Sprintf("$pbkdf2-sha512$i=1000$%s$%s", raw.EncodeToString(s), raw.EncodeToString(pbkdf2.Key([]byte(pw), s, 1000, 64, sha512.New)))
	return out
}

// Firebase's published parameters and hash (github.com/firebase/scrypt README).
const firebaseVector = "$firebase-scrypt$n=14,r=8" +
	"$jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==" +
	"$Bw==$42xEC+ixf3L2lw==" +
	"$lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ=="

func TestImportedHashesVerify(t *testing.T) {
	h := newHasher(cheap, tracing.Off.Tracer(""))
	cases := importedHashes(t, "correct horse")
	for name, hash := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := parseImportedHash(hash); err != nil {
				t.Fatalf("refused: %v", err)
			}
			if ok, err := h.Verify(context.Background(), "correct horse", hash); !ok || err != nil {
				t.Fatalf("right password: %v %v", ok, err)
			}
			if ok, err := h.Verify(context.Background(), "correct horsf", hash); ok || err != nil {
				t.Fatalf("wrong password: %v %v", ok, err)
			}
			if NeedsRehash(hash) == strings.HasPrefix(hash, "$argon2id$") {
				t.Fatal("NeedsRehash is wrong")
			}
		})
	}
	t.Run("firebase-scrypt", func(t *testing.T) {
		if ok, err := h.Verify(context.Background(), "user1password", firebaseVector); !ok || err != nil {
			t.Fatalf("Firebase's own vector: %v %v", ok, err)
		}
		if ok, _ := h.Verify(context.Background(), "user1passwore", firebaseVector); ok {
			t.Fatal("a wrong password matched")
		}
	})
}

func TestImportedHashesMalformed(t *testing.T) {
	good := importedHashes(t, "pw")
	for name, hash := range map[string]string{
		"empty":              "",
		"plain text":         "hunter2",
		"md5 crypt":          "$1$saltsalt$2vnaRpHa6Jxjz5n83ok8Z0",
		"argon2i":            "$argon2i$v=19$m=16,t=2,p=1$c2FsdHNhbHQ$Ai7gt8p7lvQrnE4SVHQ2mw",
		"bcrypt truncated":   good["bcrypt-2a"][:59],
		"bcrypt $2x$":        "$2x$" + good["bcrypt-2a"][4:],
		"argon2id bad b64":   strings.Replace(good["argon2id"], "$", "$!", 5),
		"scrypt no params":   "$scrypt$$c2FsdA$aGFzaA",
		"scrypt huge N":      strings.Replace(good["scrypt"], "ln=10", "ln=30", 1),
		"scrypt unknown key": strings.Replace(good["scrypt"], "p=1", "q=1", 1),
		"scrypt dup key":     strings.Replace(good["scrypt"], "p=1", "r=1", 1),
		"scrypt short hash":  "$scrypt$ln=10,r=8,p=1$c2FsdA$aGFzaA",
		"pbkdf2 few rounds":  strings.Replace(good["pbkdf2-sha256"], "i=1000", "i=999", 1),
		"pbkdf2 sha1":        strings.Replace(good["pbkdf2-sha256"], "sha256", "sha1", 1),
		"pbkdf2 no hash":     strings.Join(strings.Split(good["pbkdf2-sha256"], "$")[:4], "$"),
		"firebase no signer": strings.Replace(firebaseVector, "$jxspr", "$", 1)[:40],
		"firebase bad b64":   strings.Replace(firebaseVector, "Bw==", "B*==", 1),
		"firebase mem 0":     strings.Replace(firebaseVector, "n=14", "n=0", 1),
		"firebase short":     firebaseVector[:len(firebaseVector)-10],
		// Bounds one above what a sign-in may cost (about a second or 64 MiB).
		"bcrypt cost 16":     good["bcrypt-2a"][:4] + "16" + good["bcrypt-2a"][6:],
		"scrypt 128 MiB":     strings.Replace(good["scrypt"], "ln=10", "ln=17", 1),
		"scrypt p=5":         strings.Replace(good["scrypt"], "p=1", "p=5", 1),
		"pbkdf2 2M+1 rounds": strings.Replace(good["pbkdf2-sha256"], "i=1000", "i=2000001", 1),
		"firebase 128 MiB":   strings.Replace(firebaseVector, "n=14,r=8", "n=17,r=8", 1),
		"argon2id 65 MiB":    argonWith(t, "m=66560,t=1,p=1"),
		"argon2id t=11":      argonWith(t, "m=64,t=11,p=1"),
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := parseImportedHash(hash); err == nil {
				t.Fatalf("accepted %q", hash)
			}
			// A bad hash already in the store is a mismatch, never an error (no 500).
			if ok, err := verifyImported("pw", hash); ok || err != nil {
				t.Fatalf("%v %v", ok, err)
			}
		})
	}
}

// A 73-byte password signs in against a bcrypt hash made by a system that used its first 72.
func TestImportedBcryptLongPassword(t *testing.T) {
	pw := strings.Repeat("x", 72)
	b, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := verifyImported(pw+"yz", string(b)); !ok || err != nil {
		t.Fatalf("%v %v", ok, err)
	}
}

// The cost of one sign-in against each imported scheme (at the parameters above, which are
// cheap test ones; Firebase's are its real defaults, N=2^14, r=8).
func BenchmarkImportedVerify(b *testing.B) {
	hashes := importedHashes(b, "pw")
	hashes["firebase-scrypt"] = firebaseVector
	for name, hash := range hashes {
		v, err := parseImportedHash(hash)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				_, _ = v.verify("pw")
			}
		})
	}
}

// argonWith is an argon2id PHC string with params in place of the made one's.
func argonWith(t *testing.T, params string) string {
	h := importedHashes(t, "pw")["argon2id"]
	parts := strings.Split(h, "$")
	parts[3] = params
	return strings.Join(parts, "$")
}
