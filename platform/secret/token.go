package secret

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"hash/crc32"
	"math/big"
	"regexp"
	"strconv"
	"strings"
)

// Bearer credentials look like ac_<kind>_ + 32 base62 characters of randomness + 6 base62
// characters of a CRC32 of everything before them. The fixed prefix lets secret scanners
// find leaked tokens, and the checksum lets them (and us) tell a real token from a typo or
// a guess without a store lookup.
const (
	tokenPrefix  = "ac_"
	randomLen    = 32
	checksumLen  = 6
	base62Digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
)

var sixtyTwo = big.NewInt(62)

// NewToken returns a new bearer secret of the given kind ("ai", "db", "rt", …).
func NewToken(kind string) (string, error) {
	var random [randomLen]byte
	for i := range random {
		n, err := rand.Int(rand.Reader, sixtyTwo) // uniform: no modulo bias
		if err != nil {
			return "", err
		}
		random[i] = base62Digits[n.Int64()]
	}
	return TokenOf(kind, string(random[:])), nil
}

// RandomLen is how many base62 characters of randomness a token carries.
const RandomLen = randomLen

// TokenOf is the token of kind whose random part is random (RandomLen base62 characters),
// with its checksum. A token is as secret as its random part: outside NewToken only the load
// command calls this, to recompute millions of tokens of a throw-away store instead of
// keeping them.
func TokenOf(kind, random string) string {
	body := tokenPrefix + kind + "_" + random
	return body + checksum(body)
}

// RandomString returns n base62 characters from crypto/rand, for secrets that need no
// prefix or checksum (e.g. a secret a product must read back).
func RandomString(n int, alphabet string) (string, error) {
	if alphabet == "" {
		alphabet = base62Digits
	}
	max := big.NewInt(int64(len(alphabet)))
	out := make([]byte, n)
	for i := range out {
		k, err := rand.Int(rand.Reader, max)
		if err != nil {
			return "", err
		}
		out[i] = alphabet[k.Int64()]
	}
	return string(out), nil
}

func checksum(body string) string {
	c := crc32.ChecksumIEEE([]byte(body))
	var out [checksumLen]byte
	for i := checksumLen - 1; i >= 0; i-- {
		out[i] = base62Digits[c%62]
		c /= 62
	}
	return string(out[:])
}

// CheckToken reports whether token is well-formed for kind: the right prefix, the right
// length, only base62 characters, and a checksum that matches. Cheap, and done before any
// store lookup, so garbage never reaches the store.
func CheckToken(kind, token string) bool {
	prefix := tokenPrefix + kind + "_"
	if len(token) != len(prefix)+randomLen+checksumLen || !strings.HasPrefix(token, prefix) {
		return false
	}
	for i := len(prefix); i < len(token); i++ {
		if !isBase62(token[i]) {
			return false
		}
	}
	split := len(token) - checksumLen
	return subtle.ConstantTimeCompare([]byte(checksum(token[:split])), []byte(token[split:])) == 1
}

// Prefix is how the secrets NewToken(kind) makes begin: ac_<kind>_.
func Prefix(kind string) string { return tokenPrefix + kind + "_" }

// KindOf returns the kind of a token shaped like ac_<kind>_…, or "".
func KindOf(token string) string {
	if !strings.HasPrefix(token, tokenPrefix) {
		return ""
	}
	rest := token[len(tokenPrefix):]
	i := strings.IndexByte(rest, '_')
	if i <= 0 {
		return ""
	}
	return rest[:i]
}

func isBase62(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z'
}

// Digest is the SHA-256 of a bearer secret: the only form in which one is stored.
type Digest [sha256.Size]byte

// DigestOf hashes a secret. A plain (unkeyed) hash suffices: the secrets carry 190 bits of
// randomness, so there is nothing to brute-force.
func DigestOf(token string) Digest { return sha256.Sum256([]byte(token)) }

// Bytes returns the digest as a slice, for storing.
func (d Digest) Bytes() []byte { return d[:] }

// Equal compares two digests in constant time.
func Equal(a, b []byte) bool { return subtle.ConstantTimeCompare(a, b) == 1 }

// Hint is what a list may show of a secret: its prefix, the first 4 and last 4 characters
// after it, never enough to use.
func Hint(token string) string {
	kind := KindOf(token)
	prefix := tokenPrefix + kind + "_"
	rest := strings.TrimPrefix(token, prefix)
	if len(rest) < 8 {
		return prefix + "…"
	}
	return prefix + rest[:4] + "…" + rest[len(rest)-4:]
}

// Pattern is the regular expression (without anchors) that matches tokens of kind, for
// secret scanners.
func Pattern(kind string) string {
	return tokenPrefix + regexp.QuoteMeta(kind) + "_[0-9A-Za-z]{" + strconv.Itoa(randomLen+checksumLen) + "}"
}
