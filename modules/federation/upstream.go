package federation

import (
	"context"
	"crypto/subtle"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/go-jose/go-jose/v4"
	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/oauth2"
	"golang.org/x/sync/singleflight"

	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/outbound"
)

// Calls to an upstream (discovery, keys, token, userinfo) go through the outbound policy
// (SPEC §12's rules against request forgery), follow no redirect, and give up after
// callTimeout; answers are read up to maxAnswer.
const (
	callTimeout = 5 * time.Second
	maxAnswer   = 64 << 10
	// discoveryAge is how long a provider's discovery document is reused.
	discoveryAge = time.Hour
	// keysMinAge: an unknown key id refetches the key set at most this often (SPEC §20),
	// so a stream of tokens naming made-up keys cannot make us hammer the upstream.
	keysMinAge = time.Minute
)

// upstreams builds each provider's client — for OIDC after discovery — and keeps it for
// discoveryAge, or until the provider's configuration changes.
type upstreams struct {
	http     *http.Client
	clock    clock.Clock
	cache    *lru.Cache[string, cachedUpstream]
	building singleflight.Group
	// keys are shared by every provider naming the same key set URL.
	keysMu sync.Mutex
	keys   map[string]*keySet
}

type cachedUpstream struct {
	u     *upstream
	built time.Time
}

func newUpstreams(policy outbound.Policy, roots *x509.CertPool, clk clock.Clock) *upstreams {
	cache, _ := lru.New[string, cachedUpstream](1024) // cannot fail: the size is positive
	return &upstreams{clock: clk, cache: cache, keys: map[string]*keySet{},
		http: &http.Client{Transport: policy.Transport(callTimeout, roots), Timeout: callTimeout,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// upstream is one provider's client.
type upstream struct {
	p        Provider
	oauth    oauth2.Config
	verifier *oidc.IDTokenVerifier // oidc only
	userinfo string
	// revocation is the provider's RFC 7009 endpoint, when its discovery names one (the
	// vault revokes a connection there, SPEC §23).
	revocation string
	// issuerTemplate is a multi-directory issuer ("…/{tenantid}/v2.0"): the id_token's
	// iss must be it with the token's tid.
	issuerTemplate string
}

// get is p's client, built when needed: errUpstreamUnavailable when its discovery fails.
func (us *upstreams) get(ctx context.Context, p Provider, clientSecret, callback string) (*upstream, error) {
	key := p.version() + "\x00" + callback
	if c, ok := us.cache.Get(key); ok && us.clock.Now().Sub(c.built) < discoveryAge {
		return c.u, nil
	}
	v, err, _ := us.building.Do(key, func() (any, error) {
		u, err := us.build(ctx, p, clientSecret, callback)
		if err != nil {
			return nil, err
		}
		us.cache.Add(key, cachedUpstream{u: u, built: us.clock.Now()})
		return u, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*upstream), nil
}

func (us *upstreams) build(ctx context.Context, p Provider, clientSecret, callback string) (*upstream, error) {
	u := &upstream{p: p, oauth: oauth2.Config{ClientID: p.ClientID, ClientSecret: clientSecret, RedirectURL: callback, Scopes: p.Scopes}}
	if p.Type == "oauth2" {
		u.oauth.Endpoint = oauth2.Endpoint{AuthURL: p.AuthorizationEndpoint, TokenURL: p.TokenEndpoint}
		u.userinfo = p.UserinfoEndpoint
		return u, nil
	}
	ctx, cancel := context.WithTimeout(oidc.ClientContext(ctx, us.http), callTimeout)
	defer cancel()
	issuer := p.Issuer
	if multiDirectory(issuer) {
		// Microsoft's common endpoints publish a template as their issuer; each token names
		// its directory. The template is checked in place of the exact issuer.
		u.issuerTemplate = "https://login.microsoftonline.com/{tenantid}/v2.0"
		ctx = oidc.InsecureIssuerURLContext(ctx, u.issuerTemplate)
	}
	disc, err := oidc.NewProvider(ctx, issuer)
	if err != nil {
		return nil, errUpstreamUnavailable.Wrap(fmt.Errorf("discovery of %s: %w", issuer, err))
	}
	var meta struct {
		JWKS       string   `json:"jwks_uri"`
		Algs       []string `json:"id_token_signing_alg_values_supported"`
		Revocation string   `json:"revocation_endpoint"`
	}
	if err := disc.Claims(&meta); err != nil || meta.JWKS == "" {
		return nil, errUpstreamUnavailable.Wrap(fmt.Errorf("discovery of %s names no jwks_uri", issuer))
	}
	u.oauth.Endpoint = disc.Endpoint()
	u.userinfo = disc.UserInfoEndpoint()
	u.revocation = meta.Revocation
	u.verifier = oidc.NewVerifier(issuer, us.keySet(meta.JWKS), &oidc.Config{
		ClientID: p.ClientID, SupportedSigningAlgs: asymmetric(meta.Algs), Now: us.clock.Now, SkipIssuerCheck: u.issuerTemplate != "",
	})
	return u, nil
}

func multiDirectory(issuer string) bool {
	for _, d := range []string{"common", "organizations", "consumers"} {
		if issuer == "https://login.microsoftonline.com/"+d+"/v2.0" {
			return true
		}
	}
	return false
}

// asymmetric keeps the signing algorithms a provider names that use its published keys:
// never none, never HMAC (whose key would be our client secret). Empty, go-oidc's RS256.
func asymmetric(algs []string) []string {
	var out []string
	for _, a := range algs {
		switch a {
		case oidc.RS256, oidc.RS384, oidc.RS512, oidc.ES256, oidc.ES384, oidc.ES512, oidc.PS256, oidc.PS384, oidc.PS512, oidc.EdDSA:
			out = append(out, a)
		}
	}
	return out
}

// authURL is where the person is sent: code flow with PKCE (S256), state and, for OIDC, nonce.
func (u *upstream) authURL(state, nonce, verifier string) string {
	opts := []oauth2.AuthCodeOption{oauth2.S256ChallengeOption(verifier)}
	if u.verifier != nil {
		opts = append(opts, oidc.Nonce(nonce))
	}
	if u.p.Offline {
		// OpenID Connect Core §11: offline_access is honoured only with prompt=consent (an
		// OP drops the scope otherwise, and no refresh token comes); Google also wants
		// access_type=offline.
		opts = append(opts, oauth2.AccessTypeOffline, oauth2.SetAuthURLParam("prompt", "consent"))
	}
	return u.oauth.AuthCodeURL(state, opts...)
}

// answer is what a finished upstream sign-in yields.
type answer struct {
	claims  claims
	tokens  *oauth2.Token
	idToken string
}

// exchange trades the code for tokens and reads who signed in: the id_token checked for
// iss, aud, exp, signature (by the issuer's keys), nonce and azp; the userinfo endpoint
// when the id_token names no email (OIDC) or always (oauth2).
func (us *upstreams) exchange(ctx context.Context, u *upstream, code, verifier, nonce string) (answer, error) {
	ctx, cancel := context.WithTimeout(context.WithValue(ctx, oauth2.HTTPClient, us.http), 2*callTimeout)
	defer cancel()
	tok, err := u.oauth.Exchange(ctx, code, oauth2.VerifierOption(verifier))
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.Response != nil && re.Response.StatusCode >= 400 && re.Response.StatusCode < 500 {
			return answer{}, errUpstreamRefused.Wrap(err)
		}
		return answer{}, errUpstreamUnavailable.Wrap(err)
	}
	var raw map[string]any
	var idToken string
	if u.verifier != nil {
		idToken, _ = tok.Extra("id_token").(string)
		if idToken == "" {
			return answer{}, errIDToken.Wrap(errors.New("the token response holds no id_token"))
		}
		if raw, err = u.checkIDToken(oidc.ClientContext(ctx, us.http), idToken, nonce); err != nil {
			return answer{}, err
		}
	}
	m := u.p.Claims
	if raw == nil || scalar(raw[m.withDefaults().Email]) == "" {
		if u.userinfo == "" && raw == nil {
			return answer{}, errUpstreamRefused.Wrap(errors.New("no userinfo endpoint"))
		}
		if u.userinfo != "" {
			info, err := us.fetchUserinfo(ctx, u.userinfo, tok.AccessToken)
			if err != nil {
				return answer{}, err
			}
			if raw == nil {
				raw = info
			} else {
				// OpenID Connect Core §5.3.2: userinfo's sub must be the id_token's, or it
				// describes someone else and is ignored.
				if scalar(info["sub"]) != scalar(raw["sub"]) {
					return answer{}, errIDToken.Wrap(errors.New("userinfo names another subject"))
				}
				for k, v := range info {
					if _, ok := raw[k]; !ok {
						raw[k] = v
					}
				}
			}
		}
	}
	c, ok := read(raw, m)
	if !ok {
		return answer{}, errUpstreamRefused.Wrap(errors.New("no subject in the upstream's claims"))
	}
	return answer{claims: c, tokens: tok, idToken: idToken}, nil
}

func (u *upstream) checkIDToken(ctx context.Context, raw, nonce string) (map[string]any, error) {
	t, err := u.verifier.Verify(ctx, raw)
	if err != nil {
		return nil, errIDToken.Wrap(err)
	}
	if subtle.ConstantTimeCompare([]byte(t.Nonce), []byte(nonce)) != 1 {
		return nil, errIDToken.Wrap(errors.New("nonce mismatch"))
	}
	var c map[string]any
	if err := t.Claims(&c); err != nil {
		return nil, errIDToken.Wrap(err)
	}
	// azp (OpenID Connect Core §3.1.3.7): when present it is us; with several audiences
	// it must be.
	azp, _ := c["azp"].(string)
	if (azp != "" || len(t.Audience) > 1) && azp != u.p.ClientID {
		return nil, errIDToken.Wrap(errors.New("azp is not this client"))
	}
	if u.issuerTemplate != "" {
		tid, _ := c["tid"].(string)
		if tid == "" || t.Issuer != strings.Replace(u.issuerTemplate, "{tenantid}", tid, 1) {
			return nil, errIDToken.Wrap(errors.New("issuer is not the token's directory"))
		}
	}
	return c, nil
}

func (us *upstreams) fetchUserinfo(ctx context.Context, endpoint, accessToken string) (map[string]any, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint, nil)
	if err != nil {
		return nil, errUpstreamUnavailable.Wrap(err)
	}
	req.Header.Set("Authorization", "Bearer "+accessToken)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "authcore") // GitHub refuses requests without one
	res, err := us.http.Do(req)
	if err != nil {
		return nil, errUpstreamUnavailable.Wrap(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, maxAnswer+1))
	if err != nil || len(body) > maxAnswer {
		return nil, errUpstreamUnavailable.Wrap(fmt.Errorf("userinfo: unreadable or over 64 KiB"))
	}
	switch {
	case res.StatusCode >= 500:
		return nil, errUpstreamUnavailable.Wrap(fmt.Errorf("userinfo answered %d", res.StatusCode))
	case res.StatusCode != http.StatusOK:
		return nil, errUpstreamRefused.Wrap(fmt.Errorf("userinfo answered %d", res.StatusCode))
	}
	var info map[string]any
	if err := json.Unmarshal(body, &info); err != nil {
		// A signed userinfo (application/jwt) is not asked for: we register no such thing.
		return nil, errUpstreamRefused.Wrap(fmt.Errorf("userinfo is not a JSON object"))
	}
	return info, nil
}

// keySet is an issuer's published keys for go-oidc's verifier. go-oidc's RemoteKeySet
// refetches on every unknown key id; SPEC §20 wants at most one refetch a minute, so this
// small cache does the fetching, and go-jose (through go-oidc) does the verifying.
type keySet struct {
	url   string
	http  *http.Client
	clock clock.Clock

	mu      sync.Mutex
	keys    []jose.JSONWebKey
	fetched time.Time
	fetch   singleflight.Group
}

func (us *upstreams) keySet(url string) *keySet {
	us.keysMu.Lock()
	defer us.keysMu.Unlock()
	if k, ok := us.keys[url]; ok {
		return k
	}
	k := &keySet{url: url, http: us.http, clock: us.clock}
	us.keys[url] = k
	return k
}

var signingAlgs = []jose.SignatureAlgorithm{jose.RS256, jose.RS384, jose.RS512, jose.ES256, jose.ES384, jose.ES512, jose.PS256, jose.PS384, jose.PS512, jose.EdDSA}

// VerifySignature implements oidc.KeySet: the verifier has checked the alg already.
func (k *keySet) VerifySignature(ctx context.Context, raw string) ([]byte, error) {
	jws, err := jose.ParseSigned(raw, signingAlgs)
	if err != nil {
		return nil, fmt.Errorf("malformed jwt: %w", err)
	}
	if len(jws.Signatures) != 1 {
		return nil, errors.New("one signature expected")
	}
	kid := jws.Signatures[0].Header.KeyID
	if payload, ok := k.try(jws, kid); ok {
		return payload, nil
	}
	if err := k.refresh(ctx); err != nil {
		return nil, err
	}
	if payload, ok := k.try(jws, kid); ok {
		return payload, nil
	}
	return nil, errors.New("no key of the issuer verifies the signature")
}

func (k *keySet) try(jws *jose.JSONWebSignature, kid string) ([]byte, bool) {
	k.mu.Lock()
	keys := k.keys
	k.mu.Unlock()
	for _, key := range keys {
		if kid != "" && key.KeyID != kid {
			continue
		}
		if key.Use != "" && key.Use != "sig" {
			continue
		}
		if payload, err := jws.Verify(key); err == nil {
			return payload, true
		}
	}
	return nil, false
}

// refresh fetches the key set unless it was fetched less than keysMinAge ago.
func (k *keySet) refresh(ctx context.Context) error {
	k.mu.Lock()
	recent := !k.fetched.IsZero() && k.clock.Now().Sub(k.fetched) < keysMinAge
	k.mu.Unlock()
	if recent {
		return errors.New("unknown key, and the key set was fetched less than a minute ago")
	}
	_, err, _ := k.fetch.Do("", func() (any, error) {
		ctx, cancel := context.WithTimeout(ctx, callTimeout)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, k.url, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Accept", "application/json")
		res, err := k.http.Do(req)
		k.mu.Lock()
		k.fetched = k.clock.Now() // a failed fetch waits its minute too
		k.mu.Unlock()
		if err != nil {
			return nil, err
		}
		defer res.Body.Close()
		if res.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("jwks answered %d", res.StatusCode)
		}
		var set jose.JSONWebKeySet
		if err := json.NewDecoder(io.LimitReader(res.Body, maxAnswer)).Decode(&set); err != nil {
			return nil, fmt.Errorf("jwks: %w", err)
		}
		var pub []jose.JSONWebKey
		for _, key := range set.Keys {
			if key.Valid() && key.IsPublic() {
				pub = append(pub, key)
			}
		}
		k.mu.Lock()
		k.keys = pub
		k.mu.Unlock()
		return nil, nil
	})
	return err
}
