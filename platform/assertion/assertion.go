// Package assertion verifies JWTs that other parties sign to prove something to authcore:
// a client's private_key_jwt authentication (RFC 7523 §2.2, SPEC §21) and, for the grants
// that build on it, JWT bearer assertions (RFC 7523 §2.1, SPEC §22). One verifier serves
// them all, so that the rules — an allowed algorithm and a key of the party's set, the
// issuer, subject and audience expected, a short lifetime, and a jti used once across
// every replica — are written once. Signatures are go-jose's; this package decides only
// what a valid assertion is. It must not decide whom to trust: callers say which keys.
package assertion

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/authcore/authcore/platform/outbound"
)

// Algorithms are the signature algorithms accepted: asymmetric only (a shared secret
// would let the verifier forge), and never none.
var Algorithms = []jose.SignatureAlgorithm{jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512, jose.EdDSA}

// KeySet finds a party's public keys.
type KeySet interface {
	// Keys are the keys that may have signed with kid ("" when the header names none),
	// fetching the set anew when it lacks kid and may be stale.
	Keys(ctx context.Context, kid string) ([]jose.JSONWebKey, error)
}

// ParseKeySet reads a JWK Set (RFC 7517 §5) given as a decoded JSON object: public
// signing keys only, at least one.
func ParseKeySet(v any) (jose.JSONWebKeySet, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return jose.JSONWebKeySet{}, errors.New("is not a JSON Web Key Set")
	}
	return parseKeySet(raw)
}

func parseKeySet(raw []byte) (jose.JSONWebKeySet, error) {
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(raw, &set); err != nil {
		return jose.JSONWebKeySet{}, errors.New("is not a JSON Web Key Set")
	}
	if len(set.Keys) == 0 {
		return set, errors.New("holds no key")
	}
	for _, k := range set.Keys {
		if !k.IsPublic() {
			return set, errors.New("holds a private key: publish public keys only")
		}
		if k.Use != "" && k.Use != "sig" {
			return set, errors.New("holds a key not for signing")
		}
	}
	return set, nil
}

// Static is a key set given inline.
type Static struct{ Set jose.JSONWebKeySet }

// Keys implements KeySet.
func (s Static) Keys(_ context.Context, kid string) ([]jose.JSONWebKey, error) {
	return pick(s.Set, kid), nil
}

// Remote is a key set published at an https URL (jwks_uri), fetched under the outbound
// policy and cached as the fetcher says; a kid it lacks makes it fetch again, at most
// once per the fetcher's minimum age, so an unknown kid cannot make authcore fetch at will.
type Remote struct {
	Fetcher *outbound.Fetcher
	URL     string
}

// Keys implements KeySet.
func (r Remote) Keys(ctx context.Context, kid string) ([]jose.JSONWebKey, error) {
	set, err := r.read(r.Fetcher.Get(ctx, r.URL))
	if keys := pick(set, kid); err == nil && len(keys) > 0 {
		return keys, nil
	}
	if set, err = r.read(r.Fetcher.Refresh(ctx, r.URL)); err != nil {
		return nil, err
	}
	return pick(set, kid), nil
}

func (r Remote) read(d outbound.Document) (jose.JSONWebKeySet, error) {
	if d.Err != nil {
		return jose.JSONWebKeySet{}, &Error{"the key set: " + d.Err.Error()}
	}
	set, err := parseKeySet(d.Body)
	if err != nil {
		return jose.JSONWebKeySet{}, &Error{"the key set " + err.Error()}
	}
	return set, nil
}

// pick is the keys of set that may have signed with kid.
func pick(set jose.JSONWebKeySet, kid string) []jose.JSONWebKey {
	if kid == "" {
		return set.Keys
	}
	return set.Key(kid)
}

// Replay remembers the jti of every assertion accepted until it expires, across replicas.
type Replay interface {
	// Spend records jti of issuer until until; false when it was recorded already.
	Spend(ctx context.Context, issuer, jti string, until time.Time) (bool, error)
}

// Expect is what an assertion must say.
type Expect struct {
	// Issuer and Subject, when set, are what iss and sub must be.
	Issuer, Subject string
	// Audiences are the values one of which aud must hold.
	Audiences []string
	// OneAudience requires aud to be one value (a string, or a list of one): a client
	// assertion names this server alone (SPEC §29), so that one made for another server
	// that also lists this one cannot be replayed here (the audience injection of
	// draft-ietf-oauth-rfc7523bis).
	OneAudience bool
	// MaxLifetime bounds how far in the future exp may be.
	MaxLifetime time.Duration
	// Typ, when set, is what the header's typ must be (ignoring case, RFC 7515 §4.1.9).
	Typ string
}

// Claims are a verified assertion's claims: the registered ones, and all of them.
type Claims struct {
	Issuer, Subject, ID string
	Audience            []string
	IssuedAt, Expiry    time.Time
	All                 map[string]any
}

// Error is why an assertion was refused, in words for the party that sent it.
type Error struct{ Why string }

func (e *Error) Error() string { return e.Why }

// leeway is the clock skew allowed between the signer's clock and ours.
const leeway = 30 * time.Second

// Verify checks raw against keys and e at now, and spends its jti: any failure is an
// *Error (or the store's error).
func Verify(ctx context.Context, raw string, keys KeySet, e Expect, now time.Time, replay Replay) (Claims, error) {
	tok, err := jwt.ParseSigned(raw, Algorithms)
	if err != nil || len(tok.Headers) != 1 {
		return Claims{}, &Error{"the assertion is not a JWS signed with an asymmetric algorithm"}
	}
	h := tok.Headers[0]
	if e.Typ != "" {
		if typ, _ := h.ExtraHeaders[jose.HeaderType].(string); !strings.EqualFold(typ, e.Typ) && !strings.EqualFold(typ, "application/"+e.Typ) {
			return Claims{}, &Error{"the assertion's typ must be " + e.Typ}
		}
	}
	candidates, err := keys.Keys(ctx, h.KeyID)
	if err != nil {
		return Claims{}, err
	}
	var std jwt.Claims
	var all map[string]any
	verified := false
	for _, k := range candidates {
		if k.Algorithm != "" && k.Algorithm != h.Algorithm {
			continue
		}
		if tok.Claims(k.Key, &std, &all) == nil {
			verified = true
			break
		}
	}
	if !verified {
		if len(candidates) == 0 {
			return Claims{}, &Error{fmt.Sprintf("no key of the party's set has kid %q", h.KeyID)}
		}
		return Claims{}, &Error{"the assertion's signature does not verify with the party's keys"}
	}
	c := Claims{Issuer: std.Issuer, Subject: std.Subject, ID: std.ID, Audience: std.Audience, All: all}
	switch {
	case e.Issuer != "" && std.Issuer != e.Issuer:
		return Claims{}, &Error{"the assertion's iss is not " + e.Issuer}
	case e.Subject != "" && std.Subject != e.Subject:
		return Claims{}, &Error{"the assertion's sub is not " + e.Subject}
	case e.OneAudience && len(std.Audience) != 1:
		return Claims{}, &Error{"the assertion's aud must be one value: this server (" + strings.Join(e.Audiences, " or ") + ")"}
	case !slices.ContainsFunc(e.Audiences, func(a string) bool { return slices.Contains([]string(std.Audience), a) }):
		return Claims{}, &Error{"the assertion's aud is not this server (" + strings.Join(e.Audiences, " or ") + ")"}
	case std.Expiry == nil:
		return Claims{}, &Error{"the assertion has no exp"}
	case std.ID == "" || len(std.ID) > 256 || !text(std.ID):
		return Claims{}, &Error{"the assertion needs a jti of at most 256 characters, none a control character"}
	}
	c.Expiry = std.Expiry.Time()
	if std.IssuedAt != nil {
		c.IssuedAt = std.IssuedAt.Time()
	}
	switch {
	case !now.Before(c.Expiry.Add(leeway)):
		return Claims{}, &Error{"the assertion expired"}
	case c.Expiry.After(now.Add(e.MaxLifetime + leeway)):
		return Claims{}, &Error{fmt.Sprintf("the assertion's exp is more than %s away", e.MaxLifetime)}
	case std.NotBefore != nil && now.Add(leeway).Before(std.NotBefore.Time()):
		return Claims{}, &Error{"the assertion is not valid yet (nbf)"}
	case std.IssuedAt != nil && now.Add(leeway).Before(c.IssuedAt):
		return Claims{}, &Error{"the assertion was issued in the future (iat)"}
	}
	fresh, err := replay.Spend(ctx, std.Issuer, std.ID, c.Expiry.Add(leeway))
	if err != nil {
		return Claims{}, err
	}
	if !fresh {
		return Claims{}, &Error{"the assertion was used already (jti)"}
	}
	return c, nil
}

// Unverified reads iss and sub of an assertion without verifying anything: which party's
// keys to verify it with. Nothing it returns may be trusted before Verify.
func Unverified(raw string) (iss, sub string, ok bool) {
	tok, err := jwt.ParseSigned(raw, Algorithms)
	if err != nil {
		return "", "", false
	}
	var c jwt.Claims
	if tok.UnsafeClaimsWithoutVerification(&c) != nil || !text(c.Issuer) || !text(c.Subject) {
		return "", "", false
	}
	return c.Issuer, c.Subject, true
}

// text reports whether s can be looked up as it is: valid UTF-8 without control
// characters (a store refuses NUL and broken UTF-8 in text, which would be a 500 for a
// client's mistake).
func text(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsFunc(s, unicode.IsControl)
}
