package session

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/credential"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/oauth"
)

// Issuer signs and verifies every token made with authcore's key set: session access
// tokens, OAuth access tokens, id_tokens and ID-JAGs, and serves the JWKS. It owns the
// signing keys, loads them and keeps them fresh. It knows nothing of sessions: the
// engine asks it to sign a session's claims and to check a token's signature, then judges
// the session itself. Supplied as oauth.Signer and oauth.Verifier to the OAuth surface.
type Issuer struct {
	keys  *keys
	db    *database.DB
	clock clock.Clock
	self  string // config.SelfURL: the only iss accepted besides the legacy one
	log   *slog.Logger

	ready atomic.Bool
	stop  chan struct{}
	done  chan struct{}
	// newKey wakes the key loop when any replica made a signing key, so that a token it
	// signs verifies here within moments rather than at the next minute.
	newKey chan struct{}
}

// NewIssuer returns an issuer; its keys load in Run.
func NewIssuer(p IssuerParams) *Issuer {
	i := &Issuer{
		keys: newKeys(p.Ent, p.Ring, p.Clock, p.Bus), db: p.DB, clock: p.Clock, self: p.Config.SelfURL(), log: p.Log,
		stop: make(chan struct{}), done: make(chan struct{}), newKey: make(chan struct{}, 1),
	}
	p.Bus.Subscribe(topicKeys, func(string) {
		select {
		case i.newKey <- struct{}{}:
		default: // a reload is due already
		}
	})
	return i
}

// Ready reports whether the signing keys are loaded.
func (i *Issuer) Ready() bool { return i.ready.Load() }

func (i *Issuer) readyErr(context.Context) error {
	if !i.Ready() {
		return identity.ErrEngineNotReady
	}
	return nil
}

// Run loads the signing keys now if the store is up, else as soon as it is; then keeps
// them fresh (new keys from other replicas, rotation).
func (i *Issuer) Run(ctx context.Context) error {
	if i.db.Migrated() {
		if err := i.keys.load(ctx); err == nil {
			i.ready.Store(true)
		} else if !database.IsUnavailable(err) {
			return err
		}
	}
	go i.loop()
	return nil
}

// Halt ends the key loop.
func (i *Issuer) Halt(context.Context) error {
	close(i.stop)
	<-i.done
	return nil
}

// ReloadKeys reloads the signing keys now, making a new one when the current one is due
// for rotation. The background loop does this every minute.
func (i *Issuer) ReloadKeys(ctx context.Context) error { return i.keys.load(ctx) }

func (i *Issuer) loop() {
	defer close(i.done)
	select {
	case <-i.db.ReadyC():
	case <-i.stop:
		return
	}
	interval := time.Minute
	for {
		if !i.ready.Load() {
			interval = time.Second
		}
		ctx, cancel := context.WithTimeout(database.Background(context.Background()), 10*time.Second) // not a request's read
		err := i.keys.load(ctx)
		cancel()
		if err != nil {
			i.log.Warn("loading signing keys failed", "error", err)
		} else {
			if !i.ready.Load() {
				i.log.Info("session engine ready")
			}
			i.ready.Store(true)
			interval = time.Minute
		}
		select {
		case <-i.stop:
			return
		case <-i.newKey:
		case <-time.After(interval):
		}
	}
}

// signSession signs a session access token's claims (typ JWT) with the current key.
func (i *Issuer) signSession(claims map[string]any) (string, error) {
	signer := i.keys.Signer()
	if signer == nil {
		return "", errNotReady
	}
	return jwt.Signed(signer).Claims(claims).Serialize()
}

// SignAccessToken signs an OAuth access token (header typ at+jwt, RFC 9068) with the
// current key, setting iss. The claims are encoded here, from their struct, and the
// compact signer signs the bytes under its prepared header.
func (i *Issuer) SignAccessToken(ctx context.Context, claims oauth.Claims) (string, error) {
	signer := i.keys.AccessSigner()
	if !i.Ready() || signer == nil {
		return "", identity.ErrEngineNotReady
	}
	claims.Issuer = identity.IssuerFrom(ctx)
	if claims.NotBefore == 0 {
		claims.NotBefore = claims.IssuedAt
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	return signer.Sign(payload), nil
}

// SignIDToken signs an OpenID Connect id_token (SPEC §21) with the current key of alg
// (RS256 when ""), setting iss.
func (i *Issuer) SignIDToken(ctx context.Context, claims map[string]any, alg string) (string, error) {
	return i.SignTyped(ctx, claims, alg, "JWT")
}

// SignTyped signs claims as a JWT of typ (JWT, oauth-id-jag+jwt) with the current
// id_token key of alg (RS256 when ""), setting iss.
func (i *Issuer) SignTyped(ctx context.Context, claims map[string]any, alg, typ string) (string, error) {
	if alg == "" {
		alg = string(jose.RS256)
	}
	if !i.Ready() {
		return "", identity.ErrEngineNotReady
	}
	signer, err := i.keys.IDTokenSigner(ctx, jose.SignatureAlgorithm(alg), typ)
	if err != nil {
		return "", err
	}
	if signer == nil {
		return "", identity.ErrEngineNotReady
	}
	claims["iss"] = identity.IssuerFrom(ctx)
	return jwt.Signed(signer).Claims(claims).Serialize()
}

// JWKS is the public key set every token the issuer signs verifies with (RFC 7517).
func (i *Issuer) JWKS() ([]byte, error) {
	if !i.Ready() {
		return nil, errNotReady
	}
	return i.keys.JWKS(), nil
}

// verifySession checks a session access token's signature and the claims every one
// carries; whether its session is live is the engine's to judge.
func (i *Issuer) verifySession(token string) (*verified, error) {
	invalid := verifyFailed(identity.ReasonInvalidToken)
	tok, err := jwt.ParseSigned(token, []jose.SignatureAlgorithm{jose.EdDSA})
	if err != nil || len(tok.Headers) != 1 {
		return nil, invalid
	}
	pub, ok := i.keys.Public(tok.Headers[0].KeyID)
	if !ok {
		return nil, invalid
	}
	var claims map[string]any
	if err := tok.Claims(pub, &claims); err != nil {
		return nil, invalid
	}
	sub, _ := claims["sub"].(string)
	sid, _ := claims["sid"].(string)
	tid, _ := claims["tid"].(string)
	iss, _ := claims["iss"].(string)
	exp, _ := claims["exp"].(float64)
	if sub == "" || sid == "" || tid == "" || !i.ourIssuer(iss) || exp == 0 || !sessionAudience(claims["aud"]) {
		return nil, invalid
	}
	raw, err := json.Marshal(claims)
	if err != nil {
		return nil, invalid
	}
	var authTime time.Time
	if at, ok := claims["authTime"].(float64); ok {
		authTime = time.Unix(int64(at), 0)
	}
	return &verified{
		principal: identity.Principal{UserID: sub, TenantID: tid, SessionHandle: sid, Claims: claims, ClaimsJSON: raw, AuthTime: authTime},
		expires:   time.Unix(int64(exp), 0),
	}, nil
}

// ourIssuer accepts the iss of tokens this service signs: its own URL (config.SelfURL),
// and the legacy "authcore" of tokens signed before issuers were URLs (they live out their
// short lives).
func (i *Issuer) ourIssuer(iss string) bool {
	return iss == i.self || iss == identity.LegacyIssuer
}

// VerifySigned checks only the signature of a JWT by a key of the set, of either
// algorithm: what an id_token_hint needs, since it may have expired.
func (i *Issuer) VerifySigned(token string) (string, map[string]any, error) {
	tok, err := jwt.ParseSigned(token, []jose.SignatureAlgorithm{jose.EdDSA, jose.RS256})
	if err != nil || len(tok.Headers) != 1 {
		return "", nil, credential.ErrNotLive
	}
	key, ok := i.keys.Verifying(tok.Headers[0].KeyID)
	if !ok || jose.SignatureAlgorithm(tok.Headers[0].Algorithm) != key.alg {
		return "", nil, credential.ErrNotLive
	}
	var claims map[string]any
	if err := tok.Claims(key.key, &claims); err != nil {
		return "", nil, credential.ErrNotLive
	}
	typ, _ := tok.Headers[0].ExtraHeaders["typ"].(string)
	return typ, claims, nil
}

// VerifyJWT checks any JWT signed with the key set: EdDSA, a known key id, the signature,
// and exp (and nbf, when present) against the clock.
func (i *Issuer) VerifyJWT(token string) (string, map[string]any, error) {
	tok, err := jwt.ParseSigned(token, []jose.SignatureAlgorithm{jose.EdDSA})
	if err != nil || len(tok.Headers) != 1 {
		return "", nil, credential.ErrNotLive
	}
	pub, ok := i.keys.Public(tok.Headers[0].KeyID)
	if !ok {
		return "", nil, credential.ErrNotLive
	}
	var claims map[string]any
	if err := tok.Claims(pub, &claims); err != nil {
		return "", nil, credential.ErrNotLive
	}
	now := float64(i.clock.Now().Unix())
	exp, _ := claims["exp"].(float64)
	if nbf, ok := claims["nbf"].(float64); exp == 0 || now >= exp || (ok && now < nbf) {
		return "", nil, credential.ErrNotLive
	}
	typ, _ := tok.Headers[0].ExtraHeaders["typ"].(string)
	return typ, claims, nil
}
