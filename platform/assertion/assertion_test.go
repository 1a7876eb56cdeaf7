package assertion_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/authcore/authcore/platform/assertion"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/outbound"
)

// Every refusal of Verify, each with the words the party that sent the assertion reads,
// and what ParseKeySet, Remote and Unverified refuse.

const (
	iss = "https://client.example"
	aud = "https://authcore.example"
)

var now = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)

// memory is an assertion.Replay in memory; fail makes Spend fail as a store would.
type memory struct {
	mu   sync.Mutex
	seen map[string]time.Time
	fail error
}

func (m *memory) Spend(_ context.Context, issuer, jti string, until time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return false, m.fail
	}
	if m.seen == nil {
		m.seen = map[string]time.Time{}
	}
	if _, ok := m.seen[issuer+" "+jti]; ok {
		return false, nil
	}
	m.seen[issuer+" "+jti] = until
	return true, nil
}

type party struct {
	key  *ecdsa.PrivateKey
	kid  string
	keys assertion.KeySet
}

func newParty(t *testing.T, kid string) party {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &k.PublicKey, KeyID: kid, Algorithm: "ES256", Use: "sig"}}}
	return party{key: k, kid: kid, keys: assertion.Static{Set: set}}
}

// sign signs claims (a good client assertion, changed by change) with header typ.
func (p party) sign(t *testing.T, typ string, change func(map[string]any)) string {
	t.Helper()
	opts := (&jose.SignerOptions{}).WithHeader("kid", p.kid)
	if typ != "" {
		opts = opts.WithType(jose.ContentType(typ))
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: p.key}, opts)
	if err != nil {
		t.Fatal(err)
	}
	c := map[string]any{"iss": iss, "sub": iss, "aud": aud, "iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(), "jti": "j-" + t.Name()}
	if change != nil {
		change(c)
	}
	raw, err := jwt.Signed(s).Claims(c).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

var expect = assertion.Expect{Issuer: iss, Subject: iss, Audiences: []string{aud}, MaxLifetime: time.Hour, OneAudience: true}

func TestVerifyAccepts(t *testing.T) {
	p := newParty(t, "k1")
	c, err := assertion.Verify(context.Background(), p.sign(t, "JWT", nil), p.keys, expect, now, &memory{})
	if err != nil || c.Issuer != iss || c.Subject != iss || c.ID != "j-"+t.Name() || !c.Expiry.Equal(now.Add(5*time.Minute)) || !c.IssuedAt.Equal(now) {
		t.Fatalf("claims %+v, %v", c, err)
	}
	// A list of one audience is one value; an hour is within MaxLifetime.
	_, err = assertion.Verify(context.Background(), p.sign(t, "", func(c map[string]any) {
		c["aud"], c["jti"], c["exp"] = []string{aud}, "other", now.Add(time.Hour).Unix()
	}), p.keys, expect, now, &memory{})
	if err != nil {
		t.Fatal(err)
	}
	// Without OneAudience, aud may list others beside this server (JWT bearer grants).
	many := expect
	many.OneAudience = false
	if _, err = assertion.Verify(context.Background(), p.sign(t, "", func(c map[string]any) { c["aud"] = []string{"x", aud} }), p.keys, many, now, &memory{}); err != nil {
		t.Fatal(err)
	}
}

func TestVerifyRefuses(t *testing.T) {
	p := newParty(t, "k1")
	stranger := newParty(t, "k1") // the same kid, another key
	edit := func(f func(map[string]any)) string { return p.sign(t, "", f) }
	hs256 := func() string {
		s, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: []byte(strings.Repeat("k", 32))}, nil)
		raw, _ := jwt.Signed(s).Claims(map[string]any{"iss": iss, "sub": iss, "aud": aud, "exp": now.Add(time.Minute).Unix(), "jti": "x"}).Serialize()
		return raw
	}()
	alg := func(e assertion.Expect, f func(*assertion.Expect)) assertion.Expect { f(&e); return e }
	for name, c := range map[string]struct {
		raw  string
		keys assertion.KeySet
		e    assertion.Expect
		why  string
	}{
		"not a JWT":                 {raw: "not.a.jwt", why: "not a JWS"},
		"signed with a shared key":  {raw: hs256, why: "asymmetric"},
		"alg none":                  {raw: "eyJhbGciOiJub25lIn0." + strings.Split(edit(nil), ".")[1] + ".", why: "not a JWS"},
		"the wrong typ":             {raw: p.sign(t, "JWT", nil), e: alg(expect, func(e *assertion.Expect) { e.Typ = "oauth-id-jag+jwt" }), why: "typ must be oauth-id-jag+jwt"},
		"no typ where one is asked": {raw: edit(nil), e: alg(expect, func(e *assertion.Expect) { e.Typ = "oauth-id-jag+jwt" }), why: "typ"},
		"an unknown kid":            {raw: newParty(t, "k2").sign(t, "", nil), why: `no key of the party's set has kid "k2"`},
		"another key's signature":   {raw: stranger.sign(t, "", nil), why: "signature does not verify"},
		"a key of another alg": {raw: edit(nil), keys: assertion.Static{Set: jose.JSONWebKeySet{Keys: []jose.JSONWebKey{
			{Key: &p.key.PublicKey, KeyID: "k1", Algorithm: "ES384"}}}}, why: "signature does not verify"},
		"another issuer":            {raw: edit(func(c map[string]any) { c["iss"] = "https://evil.example" }), why: "iss is not"},
		"another subject":           {raw: edit(func(c map[string]any) { c["sub"] = "someone" }), why: "sub is not"},
		"another audience":          {raw: edit(func(c map[string]any) { c["aud"] = "https://other.example" }), why: "aud is not this server"},
		"two audiences":             {raw: edit(func(c map[string]any) { c["aud"] = []string{aud, "https://other.example"} }), why: "aud must be one value"},
		"this server twice":         {raw: edit(func(c map[string]any) { c["aud"] = []string{aud, aud} }), why: "aud must be one value"},
		"no audience":               {raw: edit(func(c map[string]any) { delete(c, "aud") }), why: "aud"},
		"no exp":                    {raw: edit(func(c map[string]any) { delete(c, "exp") }), why: "no exp"},
		"no jti":                    {raw: edit(func(c map[string]any) { delete(c, "jti") }), why: "jti"},
		"a jti of 257 characters":   {raw: edit(func(c map[string]any) { c["jti"] = strings.Repeat("j", 257) }), why: "jti of at most 256"},
		"a control char in the jti": {raw: edit(func(c map[string]any) { c["jti"] = "a\x00b" }), why: "control character"},
		"expired":                   {raw: edit(func(c map[string]any) { c["exp"] = now.Add(-31 * time.Second).Unix() }), why: "expired"},
		"living too long":           {raw: edit(func(c map[string]any) { c["exp"] = now.Add(61 * time.Minute).Unix() }), why: "more than 1h0m0s away"},
		"not valid yet":             {raw: edit(func(c map[string]any) { c["nbf"] = now.Add(time.Minute).Unix() }), why: "not valid yet"},
		"issued in the future":      {raw: edit(func(c map[string]any) { c["iat"] = now.Add(time.Minute).Unix() }), why: "issued in the future"},
	} {
		t.Run(name, func(t *testing.T) {
			keys, e := c.keys, c.e
			if keys == nil {
				keys = p.keys
			}
			if e.Audiences == nil {
				e = expect
			}
			_, err := assertion.Verify(context.Background(), c.raw, keys, e, now, &memory{})
			var refused *assertion.Error
			if !errors.As(err, &refused) || !strings.Contains(refused.Why, c.why) {
				t.Fatalf("got %v, want an *assertion.Error saying %q", err, c.why)
			}
		})
	}
	t.Run("within the leeway", func(t *testing.T) {
		raw := edit(func(c map[string]any) {
			c["exp"], c["iat"] = now.Add(-29*time.Second).Unix(), now.Add(29*time.Second).Unix()
		})
		if _, err := assertion.Verify(context.Background(), raw, p.keys, expect, now, &memory{}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("replayed", func(t *testing.T) {
		m := &memory{}
		raw := edit(func(c map[string]any) { c["exp"] = now.Add(time.Hour).Unix() })
		if _, err := assertion.Verify(context.Background(), raw, p.keys, expect, now, m); err != nil {
			t.Fatal(err)
		}
		// Remembered until exp (and the leeway): a replay 50 minutes on is refused.
		for _, until := range m.seen {
			if !until.Equal(now.Add(time.Hour + 30*time.Second)) {
				t.Fatalf("remembered until %v", until)
			}
		}
		_, err := assertion.Verify(context.Background(), raw, p.keys, expect, now.Add(50*time.Minute), m)
		var refused *assertion.Error
		if !errors.As(err, &refused) || !strings.Contains(refused.Why, "used already") {
			t.Fatalf("a replay: %v", err)
		}
	})
	t.Run("the store fails", func(t *testing.T) {
		boom := errors.New("store down")
		_, err := assertion.Verify(context.Background(), edit(nil), p.keys, expect, now, &memory{fail: boom})
		var refused *assertion.Error
		if !errors.Is(err, boom) || errors.As(err, &refused) {
			t.Fatalf("got %v, want the store's error, not a refusal", err)
		}
	})
}

func TestParseKeySet(t *testing.T) {
	p := newParty(t, "k1")
	pub := map[string]any{"kty": "EC", "crv": "P-256", "kid": "k1",
		"x": b64(p.key.PublicKey.X.FillBytes(make([]byte, 32))), "y": b64(p.key.PublicKey.Y.FillBytes(make([]byte, 32)))}
	if set, err := assertion.ParseKeySet(map[string]any{"keys": []any{pub}}); err != nil || len(set.Keys) != 1 {
		t.Fatalf("%v %v", set, err)
	}
	private := map[string]any{}
	for k, v := range pub {
		private[k] = v
	}
	private["d"] = b64(p.key.D.FillBytes(make([]byte, 32)))
	enc := map[string]any{"use": "enc"}
	for k, v := range pub {
		enc[k] = v
	}
	for name, c := range map[string]struct {
		v   any
		why string
	}{
		"not a set":     {v: []any{1}, why: "not a JSON Web Key Set"},
		"no key":        {v: map[string]any{"keys": []any{}}, why: "holds no key"},
		"a private key": {v: map[string]any{"keys": []any{private}}, why: "private key"},
		"a key for enc": {v: map[string]any{"keys": []any{enc}}, why: "not for signing"},
		"unencodable":   {v: map[string]any{"keys": make(chan int)}, why: "not a JSON Web Key Set"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := assertion.ParseKeySet(c.v); err == nil || !strings.Contains(err.Error(), c.why) {
				t.Fatalf("got %v, want %q", err, c.why)
			}
		})
	}
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// A remote key set that cannot be fetched, or is no key set, refuses with words.
func TestRemoteRefuses(t *testing.T) {
	body := `{"keys":[]}`
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/missing" {
			http.NotFound(rw, r)
			return
		}
		rw.Header().Set("Content-Type", "application/json")
		_, _ = rw.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	f := outbound.NewFetcher(outbound.Policy{AllowHTTP: true}, nil, clock.System, outbound.FetcherOptions{
		Limit: 4096, Timeout: 2 * time.Second, MinAge: time.Minute, MaxAge: time.Hour, Entries: 8})
	p := newParty(t, "k1")
	for name, c := range map[string]struct{ path, why string }{
		"an empty set": {"/jwks", "the key set holds no key"},
		"a 404":        {"/missing", "the key set: "},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := assertion.Verify(context.Background(), p.sign(t, "", nil), assertion.Remote{Fetcher: f, URL: srv.URL + c.path}, expect, now, &memory{})
			var refused *assertion.Error
			if !errors.As(err, &refused) || !strings.Contains(refused.Why, c.why) {
				t.Fatalf("got %v, want %q", err, c.why)
			}
		})
	}
}

func TestUnverified(t *testing.T) {
	p := newParty(t, "k1")
	if i, s, ok := assertion.Unverified(p.sign(t, "", nil)); !ok || i != iss || s != iss {
		t.Fatalf("%q %q %v", i, s, ok)
	}
	for name, raw := range map[string]string{
		"not a JWT":            "x",
		"a NUL in the issuer":  p.sign(t, "", func(c map[string]any) { c["iss"] = "a\x00" }),
		"a control in the sub": p.sign(t, "", func(c map[string]any) { c["sub"] = "a\nb" }),
	} {
		t.Run(name, func(t *testing.T) {
			if _, _, ok := assertion.Unverified(raw); ok {
				t.Fatal("read as lookup-able")
			}
		})
	}
}
