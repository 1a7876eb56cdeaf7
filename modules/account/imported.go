package account

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"hash"
	"strconv"
	"strings"

	"github.com/alexedwards/argon2id"
	"golang.org/x/crypto/bcrypt"
	"golang.org/x/crypto/pbkdf2"
	"golang.org/x/crypto/scrypt"
)

// Password hashes made elsewhere (SPEC §25 import). A user imported with one of these
// signs in against it once; the first successful sign-in re-hashes the password to
// argon2id, the scheme used everywhere else in this module. Accepted encodings (docs/api.md
// "Importing users"):
//
//	bcrypt           $2a$ / $2b$ / $2y$ (cost 4..15)
//	argon2id         $argon2id$v=19$m=…,t=…,p=…$salt$hash                (PHC)
//	scrypt           $scrypt$ln=…,r=…,p=…$salt$hash                      (PHC, passlib)
//	PBKDF2           $pbkdf2-sha256$i=…$salt$hash, $pbkdf2-sha512$i=…$salt$hash (PHC)
//	Firebase scrypt  $firebase-scrypt$n=<mem_cost>,r=<rounds>$<signer key>$<salt separator>$<salt>$<hash>
//
// Salts and hashes are base64 (standard or URL alphabet, padding optional; passlib's "."
// for "+" is accepted too). The Firebase form carries the project's hash parameters
// (Firebase console → Authentication → password hash parameters) on every line, so one
// import may mix Firebase projects.

// Limits that keep a hostile import from making each sign-in attempt for its people
// expensive (anyone who knows an address may try a password): about a second of one core
// or 64 MiB per check at most, above what the systems people import from use (bcrypt
// 10–12, scrypt 2^14–2^15 × 8, argon2id 19–64 MiB, PBKDF2 under a million).
const (
	maxBcryptCost   = 15
	maxScryptLogN   = 20
	maxScryptR      = 32
	maxScryptP      = 4
	maxScryptMemory = 1 << 19 // N·r: 128·N·r bytes is 64 MiB
	maxPBKDF2Iter   = 2_000_000
	minPBKDF2Iter   = 1000
	maxHashBytes    = 256
	maxArgonMemory  = 1 << 16 // KiB: 64 MiB
	maxArgonTime    = 10
	maxArgonThreads = 16
)

var errBadHash = errors.New("unknown or malformed password hash")

// importedVerifier is a parsed imported hash: it compares a password in constant time.
type importedVerifier interface {
	verify(password string) (bool, error)
}

// parseImportedHash recognises one of the accepted schemes and checks its parameters; an
// import line whose hash fails here is refused (and nothing of it written).
func parseImportedHash(s string) (importedVerifier, error) {
	switch {
	case strings.HasPrefix(s, "$2a$"), strings.HasPrefix(s, "$2b$"), strings.HasPrefix(s, "$2y$"):
		cost, err := bcrypt.Cost([]byte(s))
		if err != nil || len(s) != 60 || cost < bcrypt.MinCost || cost > maxBcryptCost {
			return nil, errBadHash
		}
		return bcryptHash(s), nil
	case strings.HasPrefix(s, "$argon2id$"):
		p, salt, key, err := argon2id.DecodeHash(s)
		if err != nil || p.Memory > maxArgonMemory || p.Iterations > maxArgonTime || p.Parallelism > maxArgonThreads ||
			p.Parallelism == 0 || p.Iterations == 0 || len(salt) == 0 || len(key) < 16 || len(key) > maxHashBytes {
			return nil, errBadHash
		}
		return argonHash(s), nil
	case strings.HasPrefix(s, "$scrypt$"):
		return parseScrypt(s)
	case strings.HasPrefix(s, "$pbkdf2-sha256$"), strings.HasPrefix(s, "$pbkdf2-sha512$"):
		return parsePBKDF2(s)
	case strings.HasPrefix(s, "$firebase-scrypt$"):
		return parseFirebase(s)
	}
	return nil, errBadHash
}

type bcryptHash string

func (h bcryptHash) verify(pw string) (bool, error) {
	// bcrypt reads at most 72 bytes; a longer password is compared on its first 72, as the
	// system that made the hash did (x/crypto refuses it instead).
	b := []byte(pw)
	if len(b) > 72 {
		b = b[:72]
	}
	err := bcrypt.CompareHashAndPassword([]byte(h), b)
	if errors.Is(err, bcrypt.ErrMismatchedHashAndPassword) {
		return false, nil
	}
	return err == nil, err
}

type argonHash string

func (h argonHash) verify(pw string) (bool, error) {
	return argon2id.ComparePasswordAndHash(pw, string(h))
}

// b64 decodes the alphabets other systems export salts and hashes in.
func b64(s string) ([]byte, error) {
	s = strings.ReplaceAll(s, ".", "+") // passlib's adapted base64
	s = strings.TrimRight(s, "=")
	if strings.ContainsAny(s, "-_") {
		return base64.RawURLEncoding.DecodeString(s)
	}
	return base64.RawStdEncoding.DecodeString(s)
}

// params parses "k=v,k=v" with integer values; every key must be one of want.
func params(s string, want ...string) (map[string]int, bool) {
	out := map[string]int{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		n, err := strconv.Atoi(v)
		if !ok || err != nil || n < 0 {
			return nil, false
		}
		known := false
		for _, w := range want {
			known = known || w == k
		}
		if _, dup := out[k]; dup || !known {
			return nil, false
		}
		out[k] = n
	}
	return out, len(out) == len(want)
}

type scryptHash struct {
	logN, r, p int
	salt, key  []byte
}

func parseScrypt(s string) (importedVerifier, error) {
	f := strings.Split(s, "$") // "", "scrypt", params, salt, hash
	if len(f) != 5 {
		return nil, errBadHash
	}
	ps, ok := params(f[2], "ln", "r", "p")
	if !ok {
		return nil, errBadHash
	}
	salt, err1 := b64(f[3])
	key, err2 := b64(f[4])
	h := scryptHash{logN: ps["ln"], r: ps["r"], p: ps["p"], salt: salt, key: key}
	if err1 != nil || err2 != nil || !h.sane() {
		return nil, errBadHash
	}
	return h, nil
}

func (h scryptHash) sane() bool {
	return h.logN >= 1 && h.logN <= maxScryptLogN && h.r >= 1 && h.r <= maxScryptR && h.p >= 1 && h.p <= maxScryptP &&
		(1<<h.logN)*h.r <= maxScryptMemory &&
		len(h.salt) > 0 && len(h.key) >= 16 && len(h.key) <= maxHashBytes
}

func (h scryptHash) verify(pw string) (bool, error) {
	got, err := scrypt.Key([]byte(pw), h.salt, 1<<h.logN, h.r, h.p, len(h.key))
	if err != nil {
		return false, err
	}
	return subtle.ConstantTimeCompare(got, h.key) == 1, nil
}

type pbkdf2Hash struct {
	prf  func() hash.Hash
	iter int
	salt []byte
	key  []byte
}

func parsePBKDF2(s string) (importedVerifier, error) {
	f := strings.Split(s, "$") // "", "pbkdf2-sha256", "i=N" (or passlib's bare N), salt, hash
	if len(f) != 5 {
		return nil, errBadHash
	}
	h := pbkdf2Hash{prf: sha256.New}
	if f[1] == "pbkdf2-sha512" {
		h.prf = sha512.New
	}
	iter := strings.TrimPrefix(f[2], "i=")
	n, err := strconv.Atoi(iter)
	if err != nil || n < minPBKDF2Iter || n > maxPBKDF2Iter {
		return nil, errBadHash
	}
	h.iter = n
	salt, err1 := b64(f[3])
	key, err2 := b64(f[4])
	if err1 != nil || err2 != nil || len(salt) == 0 || len(key) < 16 || len(key) > maxHashBytes {
		return nil, errBadHash
	}
	h.salt, h.key = salt, key
	return h, nil
}

func (h pbkdf2Hash) verify(pw string) (bool, error) {
	got := pbkdf2.Key([]byte(pw), h.salt, h.iter, len(h.key), h.prf)
	return subtle.ConstantTimeCompare(got, h.key) == 1, nil
}

// firebaseHash is Firebase Authentication's modified scrypt. It is hand-written because no
// maintained Go implementation is served here (go-partial.tsv lists none); it follows
// Firebase's published reference (github.com/firebase/scrypt): the scrypt key of the
// password with salt‖separator (N = 2^mem_cost, r = rounds, p = 1, 32 bytes) is the
// AES-256-CTR key, with a zero IV, that encrypts the project's signer key; the result is
// the stored hash. Only the scrypt and AES parts are library code, which is all the
// cryptography there is.
type firebaseHash struct {
	memCost, rounds         int
	signer, sep, salt, want []byte
}

func parseFirebase(s string) (importedVerifier, error) {
	f := strings.Split(s, "$") // "", "firebase-scrypt", "n=…,r=…", signer, sep, salt, hash
	if len(f) != 7 {
		return nil, errBadHash
	}
	ps, ok := params(f[2], "n", "r")
	if !ok {
		return nil, errBadHash
	}
	var dec [4][]byte
	for i := range dec {
		b, err := b64(f[3+i])
		if err != nil {
			return nil, errBadHash
		}
		dec[i] = b
	}
	h := firebaseHash{memCost: ps["n"], rounds: ps["r"], signer: dec[0], sep: dec[1], salt: dec[2], want: dec[3]}
	if h.memCost < 1 || h.memCost > maxScryptLogN || h.rounds < 1 || h.rounds > maxScryptR || (1<<h.memCost)*h.rounds > maxScryptMemory ||
		len(h.signer) == 0 || len(h.signer) > maxHashBytes || len(h.salt) == 0 || len(h.want) != len(h.signer) {
		return nil, errBadHash
	}
	return h, nil
}

func (h firebaseHash) verify(pw string) (bool, error) {
	got, err := firebaseScrypt(pw, h.salt, h.sep, h.signer, h.memCost, h.rounds)
	if err != nil {
		return false, err
	}
	return subtle.ConstantTimeCompare(got, h.want) == 1, nil
}

func firebaseScrypt(pw string, salt, sep, signer []byte, memCost, rounds int) ([]byte, error) {
	s := append(append([]byte{}, salt...), sep...)
	key, err := scrypt.Key([]byte(pw), s, 1<<memCost, rounds, 1, 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	out := make([]byte, len(signer))
	cipher.NewCTR(block, make([]byte, aes.BlockSize)).XORKeyStream(out, signer)
	return out, nil
}
