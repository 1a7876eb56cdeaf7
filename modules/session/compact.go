package session

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
)

// compactSigner signs OAuth access tokens as compact JWS with EdDSA. It writes exactly
// what go-jose's signer with the same key, typ and kid writes — Ed25519 is deterministic,
// and FuzzCompactSignerMatchesGoJose compares the two byte for byte — but encodes the
// protected header once instead of per token: in a client-credentials grant, go-jose's
// reflective marshaling of that header map was 14% of the grant's own CPU (the rest
// being the Ed25519 signature itself). Every token is still verified by go-jose.
type compactSigner struct {
	key ed25519.PrivateKey
	// header is base64url({"alg":"EdDSA","kid":…,"typ":…}) and the dot after it.
	header []byte
}

func newCompactSigner(key ed25519.PrivateKey, typ, kid string) (*compactSigner, error) {
	// Key ids are ours (key_ and a ULID) and typ a media type: plain characters, which
	// every JSON encoder writes alike. Anything else could be escaped otherwise than
	// go-jose would (encoding/json writes a backspace \b, go-jose's fork \u0008).
	for _, v := range []string{typ, kid} {
		if v == "" || strings.TrimLeft(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-+.") != "" {
			return nil, fmt.Errorf("session: %q is not a plain header value", v)
		}
	}
	// encoding/json writes a map's keys sorted, as go-jose does: alg, kid, typ.
	h, err := json.Marshal(map[string]string{"alg": "EdDSA", "kid": kid, "typ": typ})
	if err != nil {
		return nil, err
	}
	header := base64.RawURLEncoding.AppendEncode(nil, h)
	return &compactSigner{key: key, header: append(header, '.')}, nil
}

// Sign returns header.payload.signature, the signature over header.payload (RFC 7515).
func (s *compactSigner) Sign(payload []byte) string {
	enc := base64.RawURLEncoding
	buf := make([]byte, 0, len(s.header)+enc.EncodedLen(len(payload))+1+enc.EncodedLen(ed25519.SignatureSize))
	buf = append(buf, s.header...)
	buf = enc.AppendEncode(buf, payload)
	sig := ed25519.Sign(s.key, buf)
	buf = append(buf, '.')
	return string(enc.AppendEncode(buf, sig))
}
