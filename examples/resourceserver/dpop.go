package resourceserver

import (
	"crypto"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// The DPoP proof checks of RFC 9449 §4.3 a resource server makes, on go-jose (parsing, the
// signature, the RFC 7638 thumbprint): no maintained Go library does the rest, which is a
// handful of comparisons. This server hands out no nonces (RFC 9449 §9 makes them
// optional for a resource server); a proof lives a minute, and its jti is spent here.

var proofAlgorithms = []jose.SignatureAlgorithm{jose.ES256, jose.EdDSA, jose.RS256}

var proofAlgorithmNames = []string{"ES256", "EdDSA", "RS256"}

// proofWindow is how far a proof's iat may be from now, either way.
const proofWindow = time.Minute

type proofError struct{ why string }

func (e *proofError) Error() string { return e.why }

// proofs remembers the jtis of the proofs accepted while they could still be replayed.
type proofs struct {
	mu    sync.Mutex
	seen  map[string]time.Time
	sweep time.Time
}

func newProofs() *proofs { return &proofs{seen: map[string]time.Time{}} }

// check verifies r's DPoP proof for token, bound to the key with thumbprint jkt; resource
// is this server's URL as clients know it (htu is compared with it, not the Host header).
func (p *proofs) check(r *http.Request, resource, token, jkt string) error {
	values := r.Header.Values("DPoP")
	if len(values) != 1 {
		return &proofError{"send one DPoP proof"}
	}
	tok, err := jwt.ParseSigned(values[0], proofAlgorithms)
	if err != nil || len(tok.Headers) != 1 {
		return &proofError{"the proof is not a JWS of ES256, EdDSA or RS256"}
	}
	h := tok.Headers[0]
	if typ, _ := h.ExtraHeaders[jose.HeaderType].(string); typ != "dpop+jwt" {
		return &proofError{"the proof's typ is not dpop+jwt"}
	}
	if h.JSONWebKey == nil || !h.JSONWebKey.IsPublic() || !h.JSONWebKey.Valid() {
		return &proofError{"the proof carries no public key"}
	}
	var c struct {
		JTI string `json:"jti"`
		HTM string `json:"htm"`
		HTU string `json:"htu"`
		IAT int64  `json:"iat"`
		ATH string `json:"ath"`
	}
	if err := tok.Claims(h.JSONWebKey.Key, &c); err != nil {
		return &proofError{"the proof's signature does not verify"}
	}
	tp, err := h.JSONWebKey.Thumbprint(crypto.SHA256)
	if err != nil || subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(tp)), []byte(jkt)) != 1 {
		return &proofError{"the proof is by another key than the token is bound to"}
	}
	sum := sha256.Sum256([]byte(token))
	now := time.Now()
	switch {
	case c.JTI == "":
		return &proofError{"the proof has no jti"}
	case c.HTM != r.Method:
		return &proofError{"the proof is for another method"}
	case !sameURL(c.HTU, strings.TrimRight(resource, "/")+r.URL.Path):
		return &proofError{"the proof is for another URL"}
	case now.Sub(time.Unix(c.IAT, 0)).Abs() > proofWindow:
		return &proofError{"the proof is not from the last minute"}
	case c.ATH != base64.RawURLEncoding.EncodeToString(sum[:]):
		return &proofError{"the proof is for another token"}
	}
	if !p.spend(jkt+" "+c.JTI, now) {
		return &proofError{"the proof was used already"}
	}
	return nil
}

// spend remembers key for two windows; false when it is remembered already. Once a
// window, the lapsed ones are swept: memory follows the last two minutes' proofs.
func (p *proofs) spend(key string, now time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if until, ok := p.seen[key]; ok && now.Before(until) {
		return false
	}
	if now.After(p.sweep) {
		for k, until := range p.seen {
			if now.After(until) {
				delete(p.seen, k)
			}
		}
		p.sweep = now.Add(proofWindow)
	}
	p.seen[key] = now.Add(2 * proofWindow)
	return true
}

func sameURL(htu, want string) bool {
	a, err1 := url.Parse(htu)
	b, err2 := url.Parse(want)
	return err1 == nil && err2 == nil && strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Host, b.Host) && a.EscapedPath() == b.EscapedPath()
}
