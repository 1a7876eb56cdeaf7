// Package dpop checks DPoP proofs (RFC 9449, SPEC §22): a JWT of type dpop+jwt, signed
// by the key in its own header, naming the request's method and URL, the hash of the
// access token it is sent with, a fresh jti and a nonce this server handed out. It says
// which key proved possession (its RFC 7638 thumbprint); what that key is bound to is the
// caller's business.
//
// Hand-written on go-jose (which parses, verifies and computes thumbprints): no maintained
// Go DPoP library is served to this project, and what DPoP adds to a JWS is these checks.
//
// Nonces are minted per process: an HMAC under a key only this process holds, over a
// time bucket. A proof carrying one is valid on the process that minted it, so a jti
// remembered in that process's memory is single use across every replica without a
// store round trip (a proof replayed on another replica meets another nonce). A client
// sent to another replica is told the new nonce (use_dpop_nonce) and retries, as RFC 9449
// §8 has it.
package dpop

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"hash/maphash"
	"math/big"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-jose/go-jose/v4"
	lru "github.com/hashicorp/golang-lru/v2"
	"go.uber.org/fx"

	"github.com/authcore/authcore/platform/clock"
)

// Algorithms are the proof algorithms accepted (SPEC §22: ES256, EdDSA, RS256), as
// metadata's dpop_signing_alg_values_supported lists them.
var Algorithms = []jose.SignatureAlgorithm{jose.ES256, jose.EdDSA, jose.RS256}

// algEd25519 is RFC 9864's fully-specified name for EdDSA with Ed25519.
const algEd25519 = "Ed25519"

// AlgorithmNames are the proof algorithms accepted, as metadata lists them: Algorithms and
// Ed25519.
func AlgorithmNames() []string {
	out := make([]string, 0, len(Algorithms)+1)
	for _, a := range Algorithms {
		out = append(out, string(a))
	}
	return append(out, algEd25519)
}

// Window is how far a proof's iat may be from now, either way: clock skew and latency. A
// proof is taken while its iat is within it, and its jti is remembered exactly that long
// (RFC 9449 §11.1). Half a minute, not more: every proof here must also carry this
// process's nonce, which already says the proof was made in the last ten minutes at most
// (§11.2, pre-generation), so the iat has only the clocks to allow for, and the window
// sizes the memory of spent proofs (see memory).
const Window = 30 * time.Second

// headerCache is how many clients' proof headers are kept (a few hundred bytes each).
const headerCache = 10_000

// bucket is how long a nonce is minted the same; one of the previous bucket is accepted
// too, so a nonce lives between one and two buckets.
const bucket = 5 * time.Minute

// Proof is what a verified proof says.
type Proof struct {
	// JKT is the RFC 7638 SHA-256 thumbprint of the proving key, base64url.
	JKT string
	JTI string
	iat int64
}

// Error is a refused proof. UseNonce is set when the fix is to retry with the nonce the
// server sends (error use_dpop_nonce); otherwise the error is invalid_dpop_proof.
type Error struct {
	Why      string
	UseNonce bool
}

func (e *Error) Error() string { return e.Why }

// Code is the RFC 9449 error code.
func (e *Error) Code() string {
	if e.UseNonce {
		return "use_dpop_nonce"
	}
	return "invalid_dpop_proof"
}

// Checker checks proofs and mints nonces for one process.
type Checker struct {
	clock clock.Clock
	key   [32]byte
	// The proofs spent lately, by a keyed 64-bit hash of key and jti (an attacker cannot
	// aim at collisions without the seed; an accidental one among millions is a refusal
	// once in 2^40), filed by iat second so a second's worth is forgotten at once when no
	// proof of it can be taken any more; and how many each key holds, for its share.
	mu     sync.Mutex
	seed   maphash.Seed
	slots  [slotCount]slot
	floor  int64 // iat seconds below are forgotten
	total  int
	perKey map[uint64]int32
	size   int
	// headers are the protected headers seen lately (see parse).
	headers *lru.Cache[string, known]
	minted  atomic.Pointer[mintedNonce]
}

// slot is the jtis spent with one iat second, and how many of them each key spent.
type slot struct {
	sec  int64
	jtis map[uint64]struct{}
	keys map[uint64]int32
}

// slotCount is a power of two above the 2*Window+1 iat seconds a proof may carry at any
// one time, so a live second never shares a slot with another.
const slotCount = 64

var _ [slotCount - 2*int(Window/time.Second) - 2]struct{} // slotCount is enough

// memory is how many spent proofs Module remembers at most, and the sizing.
//
// A proof's jti is kept from its use until its iat is more than Window ago: about Window
// for a client whose clock is right, 2*Window+1 s at most (iat Window ahead). At the most
// one instance is sized for, maxRate proofs a second (a 2-core one verifies about 25,000:
// docs/operations.md), that is 40,000 * 31 = 1.24 million proofs remembered when clocks
// are right, 2.48 million if every client's were 30 s ahead.
//
// One key may hold at most what leaves as much free as it holds: a proof is taken while
// the proofs remembered plus its key's own are under memory. A key alone gets half, and
// k keys flooding together 1/(k+1) each, the last 1/(k+1) staying free, so a flooding key
// is refused on its own while clients with fewer proofs in flight are served. With
// memory at 3 Mi (3,145,728), one client may send the whole maxRate with its clock right
// (2 * 1.24 million), and any number of clients together the whole maxRate even with
// their clocks 30 s ahead (2.48 million plus the sender's own share).
//
// The bound: at most memory proofs, about 28 bytes each in Go's maps (measured), so
// about 90 MB full; 230 MB if every proof came by a key of its own, which no CPU here
// makes in time (each is a signature check and a request that succeeded; refused ones
// give their jti back). A load holds what it spends in a window: 37 MB at maxRate with
// clocks right, 67 MB with every clock 25 s ahead. A second's maps are dropped whole
// when it lapses.
const (
	maxRate = 40_000
	memory  = 3 << 20
)

// NewChecker returns a checker with a key of its own, remembering up to size jtis (see
// memory for the share one key may hold and what a full memory does).
func NewChecker(clk clock.Clock, size int) (*Checker, error) {
	c := &Checker{clock: clk, size: size, seed: maphash.MakeSeed(), perKey: map[uint64]int32{}}
	if _, err := rand.Read(c.key[:]); err != nil {
		return nil, err
	}
	var err error
	if c.headers, err = lru.New[string, known](headerCache); err != nil {
		return nil, err
	}
	return c, nil
}

// Nonce is the nonce to hand out now (the DPoP-Nonce header): minted once a bucket, since
// every token answer names it.
func (c *Checker) Nonce() string {
	b := c.bucketOf(c.clock.Now())
	if n := c.minted.Load(); n != nil && n.bucket == b {
		return n.nonce
	}
	n := &mintedNonce{bucket: b, nonce: c.nonceAt(b)}
	c.minted.Store(n)
	return n.nonce
}

type mintedNonce struct {
	bucket uint32
	nonce  string
}

func (c *Checker) bucketOf(t time.Time) uint32 { return uint32(t.Unix() / int64(bucket/time.Second)) }

func (c *Checker) nonceAt(b uint32) string {
	var raw [4 + 16]byte
	binary.BigEndian.PutUint32(raw[:4], b)
	m := hmac.New(sha256.New, c.key[:])
	m.Write(raw[:4])
	copy(raw[4:], m.Sum(nil))
	return base64.RawURLEncoding.EncodeToString(raw[:])
}

// validNonce reports whether n is a nonce this process minted for now or just before.
func (c *Checker) validNonce(n string) bool {
	raw, err := base64.RawURLEncoding.DecodeString(n)
	if err != nil || len(raw) != 20 {
		return false
	}
	b, now := binary.BigEndian.Uint32(raw[:4]), c.bucketOf(c.clock.Now())
	if b != now && b+1 != now {
		return false
	}
	return hmac.Equal([]byte(n), []byte(c.nonceAt(b)))
}

// Request is what a proof must name.
type Request struct {
	Method string
	URL    string // the request's URL without query and fragment (htu)
	// AccessToken, when set, is the token the proof accompanies: ath must be its hash.
	AccessToken string
}

// Verify checks proof for r. Every refusal is an *Error.
func (c *Checker) Verify(proof string, r Request) (Proof, error) {
	if proof == "" {
		return Proof{}, &Error{Why: "a DPoP proof is required"}
	}
	h, payload, err := c.parse(proof)
	if err != nil {
		return Proof{}, err
	}
	if h.typ != "dpop+jwt" {
		return Proof{}, &Error{Why: "the DPoP proof's typ must be dpop+jwt"}
	}
	var claims struct {
		JTI   string `json:"jti"`
		HTM   string `json:"htm"`
		HTU   string `json:"htu"`
		IAT   *int64 `json:"iat"`
		ATH   string `json:"ath"`
		Nonce string `json:"nonce"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil {
		return Proof{}, &Error{Why: "the DPoP proof's claims are not a JSON object of the right types"}
	}
	now := c.clock.Now()
	switch {
	case claims.JTI == "" || len(claims.JTI) > 256:
		return Proof{}, &Error{Why: "the DPoP proof needs a jti"}
	case claims.HTM != r.Method:
		return Proof{}, &Error{Why: "the DPoP proof is for another method"}
	case !sameURL(claims.HTU, r.URL):
		return Proof{}, &Error{Why: "the DPoP proof is for another URL"}
	case claims.IAT == nil || now.Sub(time.Unix(*claims.IAT, 0)).Abs() > Window:
		return Proof{}, &Error{Why: "the DPoP proof's iat is not within 30 seconds of now"}
	case r.AccessToken != "" && claims.ATH != hashOf(r.AccessToken):
		return Proof{}, &Error{Why: "the DPoP proof's ath is not the access token's hash"}
	case r.AccessToken == "" && claims.ATH != "":
		return Proof{}, &Error{Why: "the DPoP proof names an access token where none is sent"}
	case !c.validNonce(claims.Nonce):
		return Proof{}, &Error{Why: "the DPoP proof must carry the nonce this server sent (DPoP-Nonce)", UseNonce: true}
	}
	p := Proof{JKT: h.jkt, JTI: claims.JTI, iat: *claims.IAT}
	if err := c.spend(p, now); err != nil {
		return Proof{}, err
	}
	return p, nil
}

// header is what a proof's protected header says.
type header struct {
	Alg string           `json:"alg"`
	Typ string           `json:"typ"`
	JWK *jose.JSONWebKey `json:"jwk"`
}

// known is a protected header seen before: a client's proofs all carry the same one (alg,
// typ, its key), so its key, parsed and checked once, and its thumbprint are kept.
type known struct {
	alg string
	typ string
	key crypto.PublicKey
	jkt string
}

// parse verifies proof's signature with the key in its own header and returns the header
// and the payload.
//
// The first proof with a given header goes through go-jose, which parses and checks the
// key and verifies ES256, EdDSA and RS256; Ed25519 — the fully-specified name of RFC 9864
// that oauth4webapi and the dpop package write for Ed25519 keys, EdDSA by another name
// that go-jose does not know — is verified here with crypto/ed25519. Later proofs with the
// same header are verified here too, with the standard library's primitive for the
// algorithm go-jose accepted: go-jose would parse the key again on every call, which was
// a third of a bound ai/me's cost.
func (c *Checker) parse(proof string) (known, []byte, error) {
	parts := strings.Split(proof, ".")
	if len(parts) != 3 {
		return known{}, nil, &Error{Why: "the DPoP proof is not a compact JWS"}
	}
	payload, err1 := base64.RawURLEncoding.DecodeString(parts[1])
	sig, err2 := base64.RawURLEncoding.DecodeString(parts[2])
	if err1 != nil || err2 != nil {
		return known{}, nil, &Error{Why: "the DPoP proof is not base64url"}
	}
	bad := &Error{Why: "the DPoP proof's signature does not verify with its own key"}
	if k, ok := c.headers.Get(parts[0]); ok {
		if !verifySignature(k, parts[0]+"."+parts[1], sig) {
			return known{}, nil, bad
		}
		return k, payload, nil
	}
	var h header
	raw, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil || json.Unmarshal(raw, &h) != nil {
		return known{}, nil, &Error{Why: "the DPoP proof's header is not base64url JSON"}
	}
	if h.JWK == nil || !h.JWK.IsPublic() || !h.JWK.Valid() {
		return known{}, nil, &Error{Why: "the DPoP proof's header must carry its public key (jwk)"}
	}
	tp, err := h.JWK.Thumbprint(crypto.SHA256)
	if err != nil {
		return known{}, nil, &Error{Why: "the DPoP proof's key has no thumbprint"}
	}
	k := known{alg: h.Alg, typ: h.Typ, key: h.JWK.Key, jkt: base64.RawURLEncoding.EncodeToString(tp)}
	if h.Alg == algEd25519 {
		if _, ok := k.key.(ed25519.PublicKey); !ok || !verifySignature(k, parts[0]+"."+parts[1], sig) {
			return known{}, nil, bad
		}
	} else {
		jws, err := jose.ParseSigned(proof, Algorithms)
		if err != nil || len(jws.Signatures) != 1 {
			return known{}, nil, &Error{Why: "the DPoP proof is not a JWS signed with " + strings.Join(AlgorithmNames(), ", ")}
		}
		if _, err := jws.Verify(h.JWK); err != nil {
			return known{}, nil, bad
		}
	}
	// A copy: the proof may alias the server's request buffer, which the next request
	// overwrites (Fiber's zero-copy strings).
	c.headers.Add(strings.Clone(parts[0]), k)
	return k, payload, nil
}

// verifySignature checks sig over input with k's key under k's algorithm, one go-jose (or
// the Ed25519 branch) accepted for this very header.
func verifySignature(k known, input string, sig []byte) bool {
	switch k.alg {
	case string(jose.ES256):
		pub, ok := k.key.(*ecdsa.PublicKey)
		if !ok || len(sig) != 64 {
			return false
		}
		sum := sha256.Sum256([]byte(input))
		return ecdsa.Verify(pub, sum[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:]))
	case string(jose.EdDSA), algEd25519:
		pub, ok := k.key.(ed25519.PublicKey)
		return ok && ed25519.Verify(pub, []byte(input), sig)
	case string(jose.RS256):
		pub, ok := k.key.(*rsa.PublicKey)
		if !ok {
			return false
		}
		sum := sha256.Sum256([]byte(input))
		return rsa.VerifyPKCS1v15(pub, crypto.SHA256, sum[:], sig) == nil
	}
	return false
}

// keys are the memory's keyed hashes of p's key, and of its key and jti.
func (c *Checker) keys(p Proof) (key, jti uint64) {
	var h maphash.Hash
	h.SetSeed(c.seed)
	h.WriteString(p.JKT)
	key = h.Sum64()
	h.WriteByte(0)
	h.WriteString(p.JTI)
	return key, h.Sum64()
}

var (
	errReplayed = &Error{Why: "the DPoP proof was used already (jti)"}
	errTooMany  = &Error{Why: "too many DPoP proofs by this key are in flight to remember another: slow down"}
)

// spend remembers p's jti until its iat is more than Window before now; an error when it
// is remembered already, or when p's key holds its share (forgetting a live one instead
// would let its proof be replayed).
func (c *Checker) spend(p Proof, now time.Time) error {
	key, jti := c.keys(p)
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.spendLocked(key, jti, p.iat, now.Unix())
}

func (c *Checker) spendLocked(key, jti uint64, iat, sec int64) error {
	c.forget(sec - int64(Window/time.Second))
	// Below the floor only when the clock went back past forgotten seconds; beyond the
	// window ahead never from Verify. Either might meet a live second's slot.
	if iat < c.floor || iat > sec+int64(Window/time.Second)+1 {
		return errReplayed
	}
	s := &c.slots[iat&(slotCount-1)]
	if s.sec != iat || s.jtis == nil {
		// Sized as the second before, which the next is like (growing a map step by step
		// under the lock is a tenth of the cost at load); a flood's second hints no more
		// than a maxRate second.
		hint := min(len(c.slots[(iat-1)&(slotCount-1)].jtis), maxRate)
		s.sec, s.jtis, s.keys = iat, make(map[uint64]struct{}, hint), map[uint64]int32{}
	}
	held := c.perKey[key]
	if c.total+int(held) >= c.size {
		if _, seen := s.jtis[jti]; seen {
			return errReplayed
		}
		return errTooMany
	}
	n := len(s.jtis)
	if s.jtis[jti] = struct{}{}; len(s.jtis) == n { // one map operation, not a lookup and an insert
		return errReplayed
	}
	s.keys[key]++
	c.perKey[key] = held + 1
	c.total++
	return nil
}

// forget drops the seconds below floor: no proof of them can be taken any more.
func (c *Checker) forget(floor int64) {
	if floor <= c.floor {
		return
	}
	from := c.floor
	if floor-from > slotCount {
		from = floor - slotCount
	}
	for sec := from; sec < floor; sec++ {
		if s := &c.slots[sec&(slotCount-1)]; s.sec == sec && s.jtis != nil {
			c.drop(s)
		}
	}
	c.floor = floor
}

// drop forgets s whole (a new map next time: one that held a flood keeps no room for it).
func (c *Checker) drop(s *slot) {
	for key, n := range s.keys {
		if left := c.perKey[key] - n; left > 0 {
			c.perKey[key] = left
		} else {
			delete(c.perKey, key)
		}
	}
	c.total -= len(s.jtis)
	s.jtis, s.keys = nil, nil
}

// Release forgets p's jti: the request it came with was refused before anything was
// issued, so a flood of refused requests fills no memory (a client may send that proof
// again, which gets it nothing more than its first use did).
func (c *Checker) Release(p Proof) {
	key, jti := c.keys(p)
	c.mu.Lock()
	defer c.mu.Unlock()
	s := &c.slots[p.iat&(slotCount-1)]
	if s.sec != p.iat || s.jtis == nil {
		return
	}
	if _, ok := s.jtis[jti]; !ok {
		return
	}
	delete(s.jtis, jti)
	if s.keys[key]--; s.keys[key] == 0 {
		delete(s.keys, key)
	}
	if c.perKey[key]--; c.perKey[key] == 0 {
		delete(c.perKey, key)
	}
	c.total--
}

// sameURL compares htu with the request's URL (RFC 9449 §4.3: without query and
// fragment, scheme and host compared without case).
func sameURL(htu, want string) bool {
	a, err1 := url.Parse(htu)
	b, err2 := url.Parse(want)
	if err1 != nil || err2 != nil {
		return false
	}
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Host, b.Host) && a.EscapedPath() == b.EscapedPath()
}

// hashOf is ath: the base64url SHA-256 of the access token.
func hashOf(token string) string {
	sum := sha256.Sum256([]byte(token))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// ValidJKT reports whether s can be a thumbprint: 43 base64url characters (SHA-256).
func ValidJKT(s string) bool {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	return err == nil && len(raw) == sha256.Size && len(s) == 43
}

// Module provides the process's checker, remembering up to memory proofs.
var Module = fx.Module("dpop", fx.Provide(func(clk clock.Clock) (*Checker, error) { return NewChecker(clk, memory) }))
