package session

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/signingkey"
	"github.com/authcore/authcore/platform/clock"
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
// key made by another replica is trusted here too.
type keys struct {
	ent   *ent.Client
	ring  *secret.Keyring
	clock clock.Clock

	mu      sync.RWMutex
	signer  jose.Signer    // typ JWT: session access tokens
	access  *compactSigner // typ at+jwt: OAuth access tokens (RFC 9068)
	current string
	public  map[string]ed25519.PublicKey
	jwks    []byte
}

func newKeys(client *ent.Client, ring *secret.Keyring, c clock.Clock) *keys {
	return &keys{ent: client, ring: ring, clock: c, public: map[string]ed25519.PublicKey{}}
}

// load reads the keys still verifying, making a new signing key when none is signing.
func (k *keys) load(ctx context.Context) error {
	now := k.clock.Now()
	rows, err := k.ent.SigningKey.Query().
		Where(signingkey.RetireAtGT(now.Add(-verifyGrace))).
		All(ctx)
	if err != nil {
		return err
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].ID > rows[j].ID }) // newest first
	if len(rows) == 0 || !rows[0].RetireAt.After(now) {
		nk, err := k.create(ctx, now)
		if err != nil {
			return err
		}
		rows = append([]*ent.SigningKey{nk}, rows...)
	}
	newest := rows[0]
	seed, err := k.ring.Open(newest.PrivateSealed, []byte(newest.ID))
	if err != nil {
		return fmt.Errorf("opening signing key %s (is AUTHCORE_MASTER_KEY the one it was sealed with?): %w", newest.ID, err)
	}
	sk := jose.SigningKey{Algorithm: jose.EdDSA, Key: ed25519.NewKeyFromSeed(seed)}
	signer, err := jose.NewSigner(sk, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", newest.ID))
	if err != nil {
		return err
	}
	access, err := newCompactSigner(sk.Key.(ed25519.PrivateKey), "at+jwt", newest.ID)
	if err != nil {
		return err
	}
	public := make(map[string]ed25519.PublicKey, len(rows))
	set := jose.JSONWebKeySet{}
	for _, r := range rows {
		pub := ed25519.PublicKey(r.PublicKey)
		public[r.ID] = pub
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: pub, KeyID: r.ID, Algorithm: string(jose.EdDSA), Use: "sig"})
	}
	jwks, err := json.Marshal(set)
	if err != nil {
		return err
	}
	k.mu.Lock()
	k.signer, k.access, k.current, k.public, k.jwks = signer, access, newest.ID, public, jwks
	k.mu.Unlock()
	return nil
}

func (k *keys) create(ctx context.Context, now time.Time) (*ent.SigningKey, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	id := newKeyID()
	sealed, err := k.ring.Seal(priv.Seed(), []byte(id))
	if err != nil {
		return nil, err
	}
	return k.ent.SigningKey.Create().
		SetID(id).
		SetPublicKey(pub).
		SetPrivateSealed(sealed).
		SetRetireAt(now.Add(signPeriod)).
		Save(ctx)
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

// Public returns the verifying key with id kid.
func (k *keys) Public(kid string) (ed25519.PublicKey, bool) {
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
