package session

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/signingkey"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/invalidation"
	"github.com/authcore/authcore/platform/secret"
)

// Key rotation: a key signs for signPeriod, then only verifies for as long as a token it
// signed can live (verifyGrace). Tokens signed by the previous key stay valid through a
// rotation, so nobody is logged out by it.
const (
	signPeriod  = 30 * 24 * time.Hour
	verifyGrace = 24 * time.Hour
)

// keys is the set of signing keys this replica knows, reloaded from the store so that a
// key made by another replica is trusted here too. Ed25519 signs everything of authcore's
// own; an RSA key beside it signs OpenID Connect id_tokens, whose RS256 every relying
// party must accept (OIDC Core §15.1), and rotates with it. Both are made at the first
// start (SPEC §29): a relying party that fetches the JWKS at boot, before anyone signs
// in, must find the key of the first id_token there. That costs one RSA generation (a
// CPU-bound moment) per new key, every 30 days.
type keys struct {
	ent   *ent.Client
	ring  *secret.Keyring
	clock clock.Clock
	bus   invalidation.Bus

	// loading serializes loads on this replica (the key loop, a reload at start or
	// by an operator), so that two of them never both make a key the other made.
	loading sync.Mutex

	mu      sync.RWMutex
	signer  jose.Signer                                        // typ JWT: session access tokens
	access  *compactSigner                                     // typ at+jwt: OAuth access tokens (RFC 9068)
	ids     map[jose.SignatureAlgorithm]map[string]jose.Signer // by algorithm and typ: id_tokens (JWT), ID-JAGs
	current string
	public  map[string]verifying
	jwks    []byte
}

// verifying is a key that verifies: its public half and algorithm.
type verifying struct {
	key any // ed25519.PublicKey or *rsa.PublicKey
	alg jose.SignatureAlgorithm
}

// rsaBits is the size of the id_token key: RS256 with 2048 bits, as OIDC deployments use.
const rsaBits = 2048

func newKeys(client *ent.Client, ring *secret.Keyring, c clock.Clock, bus invalidation.Bus) *keys {
	return &keys{ent: client, ring: ring, clock: c, bus: bus, public: map[string]verifying{}}
}

// topicKeys tells every replica that a signing key was made.
const topicKeys = "signing_key"

// load reads the keys still verifying, making a new signing key of each algorithm when
// none of it is signing.
func (k *keys) load(ctx context.Context) error {
	k.loading.Lock()
	defer k.loading.Unlock()
	now := k.clock.Now()
	rows, err := k.ent.SigningKey.Query().
		Where(signingkey.RetireAtGT(now.Add(-verifyGrace))).
		All(ctx)
	if err != nil {
		return err
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].ID > rows[j].ID }) // newest first
	newest := map[jose.SignatureAlgorithm]*ent.SigningKey{}
	for _, r := range rows {
		if alg := jose.SignatureAlgorithm(r.Algorithm); newest[alg] == nil {
			newest[alg] = r
		}
	}
	for _, alg := range []jose.SignatureAlgorithm{jose.EdDSA, jose.RS256} {
		if newest[alg] == nil || !newest[alg].RetireAt.After(now) {
			nk, err := k.create(ctx, alg, now)
			if err != nil {
				return err
			}
			newest[alg] = nk
			rows = append([]*ent.SigningKey{nk}, rows...)
		}
	}
	ed := newest[jose.EdDSA]
	private, err := k.private(ed)
	if err != nil {
		return err
	}
	sk := jose.SigningKey{Algorithm: jose.EdDSA, Key: private}
	signer, err := jose.NewSigner(sk, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", ed.ID))
	if err != nil {
		return err
	}
	access, err := newCompactSigner(private.(ed25519.PrivateKey), "at+jwt", ed.ID)
	if err != nil {
		return err
	}
	ids := map[jose.SignatureAlgorithm]map[string]jose.Signer{}
	for alg, r := range newest {
		priv, err := k.private(r)
		if err != nil {
			return err
		}
		ids[alg] = map[string]jose.Signer{}
		for _, typ := range signedTypes {
			if ids[alg][typ], err = jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: priv}, (&jose.SignerOptions{}).WithType(jose.ContentType(typ)).WithHeader("kid", r.ID)); err != nil {
				return err
			}
		}
	}
	public := make(map[string]verifying, len(rows))
	set := jose.JSONWebKeySet{}
	for _, r := range rows {
		v, err := publicOf(r)
		if err != nil {
			return err
		}
		public[r.ID] = v
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: v.key, KeyID: r.ID, Algorithm: string(v.alg), Use: "sig"})
	}
	jwks, err := json.Marshal(set)
	if err != nil {
		return err
	}
	k.mu.Lock()
	k.signer, k.access, k.ids, k.current, k.public, k.jwks = signer, access, ids, ed.ID, public, jwks
	k.mu.Unlock()
	return nil
}

// private opens a key's private half.
func (k *keys) private(r *ent.SigningKey) (any, error) {
	raw, err := k.ring.Open(r.PrivateSealed, []byte(r.ID))
	if err != nil {
		return nil, fmt.Errorf("opening signing key %s (is AUTHCORE_MASTER_KEY the one it was sealed with?): %w", r.ID, err)
	}
	if jose.SignatureAlgorithm(r.Algorithm) == jose.RS256 {
		return x509.ParsePKCS8PrivateKey(raw)
	}
	return ed25519.NewKeyFromSeed(raw), nil
}

// publicOf is a stored key's public half: Ed25519's raw 32 bytes, RSA's PKIX encoding.
func publicOf(r *ent.SigningKey) (verifying, error) {
	alg := jose.SignatureAlgorithm(r.Algorithm)
	if alg == jose.RS256 {
		pub, err := x509.ParsePKIXPublicKey(r.PublicKey)
		if err != nil {
			return verifying{}, fmt.Errorf("signing key %s: %w", r.ID, err)
		}
		return verifying{key: pub, alg: alg}, nil
	}
	return verifying{key: ed25519.PublicKey(r.PublicKey), alg: jose.EdDSA}, nil
}

func (k *keys) create(ctx context.Context, alg jose.SignatureAlgorithm, now time.Time) (*ent.SigningKey, error) {
	var public, private []byte
	switch alg {
	case jose.RS256:
		key, err := rsa.GenerateKey(rand.Reader, rsaBits)
		if err != nil {
			return nil, err
		}
		if private, err = x509.MarshalPKCS8PrivateKey(key); err != nil {
			return nil, err
		}
		if public, err = x509.MarshalPKIXPublicKey(&key.PublicKey); err != nil {
			return nil, err
		}
	default:
		pub, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return nil, err
		}
		public, private = pub, priv.Seed()
	}
	id := newKeyID()
	sealed, err := sealedPrivateKey.Seal(k.ring, private, id)
	if err != nil {
		return nil, err
	}
	var row *ent.SigningKey
	err = database.WithTx(ctx, k.ent, func(tx *ent.Tx) error {
		if row, err = tx.SigningKey.Create().SetID(id).SetAlgorithm(string(alg)).SetPublicKey(public).
			SetPrivateSealed(sealed).SetRetireAt(now.Add(signPeriod)).Save(ctx); err != nil {
			return err
		}
		return k.bus.Publish(ctx, tx, topicKeys, id)
	})
	return row, err
}

// signedTypes are the typ headers of what the id_token keys sign: id_tokens (JWT),
// identity assertions for other authorization servers (ID-JAG, SPEC §22) and back-channel
// logout tokens (SPEC §25).
var signedTypes = []string{"JWT", "oauth-id-jag+jwt", "logout+jwt"}

// IDTokenSigner returns the signer of typ with alg; nil until the keys load, or for an
// algorithm or typ there is no signer of.
func (k *keys) IDTokenSigner(_ context.Context, alg jose.SignatureAlgorithm, typ string) (jose.Signer, error) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.ids[alg][typ], nil
}

// Signer returns the current signer; nil until loaded.
func (k *keys) Signer() jose.Signer {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.signer
}

// AccessSigner returns the current signer of OAuth access tokens; nil until loaded.
func (k *keys) AccessSigner() *compactSigner {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.access
}

// Public returns the Ed25519 verifying key with id kid: what signs authcore's own tokens.
func (k *keys) Public(kid string) (ed25519.PublicKey, bool) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	p, ok := k.public[kid]
	if !ok || p.alg != jose.EdDSA {
		return nil, false
	}
	return p.key.(ed25519.PublicKey), true
}

// Verifying returns the key with id kid, of either algorithm.
func (k *keys) Verifying(kid string) (verifying, bool) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	p, ok := k.public[kid]
	return p, ok
}

// JWKS is the public key set as JSON.
func (k *keys) JWKS() []byte {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.jwks
}
