// Package bearer verifies opaque bearer secrets (AI agent tokens, service badges) the same
// way for every kind: a cheap well-formedness check first, then caches of known and
// unknown digests in front of one store lookup, expiry checked on every call, and exact
// invalidation when a credential is revoked anywhere. It must not know any credential's
// table: the owner supplies the lookup.
package bearer

import (
	"context"
	"encoding/hex"
	"errors"
	"strings"
	"time"

	"go.uber.org/fx"

	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/credcache"
	"github.com/authcore/authcore/platform/invalidation"
	"github.com/authcore/authcore/platform/lastused"
	"github.com/authcore/authcore/platform/secret"
)

// ErrUnknown is what a lookup returns when no credential has the digest.
var ErrUnknown = errors.New("unknown credential")

// Limits bound the caches.
type Limits struct {
	Size        int
	PositiveTTL time.Duration
	NegativeTTL time.Duration
}

// DefaultLimits: a cached credential costs well under 1 KiB (agenttoken's
// BenchmarkCacheMemory measures ~720 bytes), so 100k stay under 100 MiB.
var DefaultLimits = Limits{Size: 100_000, PositiveTTL: 5 * time.Minute, NegativeTTL: 30 * time.Second}

// Entry is one credential as the hot path needs it.
type Entry[V any] struct {
	ID        string
	ExpiresAt *time.Time // nil: never
	Revoked   bool
	Value     V
}

// Verifier verifies one family of bearer secrets.
type Verifier[V any] struct {
	clock    clock.Clock
	bus      invalidation.Bus
	topic    string
	lookup   func(ctx context.Context, d secret.Digest) (*Entry[V], error)
	used     *lastused.Batcher
	positive *credcache.Cache[secret.Digest, *Entry[V]]
	negative *credcache.Cache[secret.Digest, struct{}]
}

// New returns a verifier whose cache entries are dropped when topic is published on bus,
// and which records each successful verification in used (written off the request path).
func New[V any](c clock.Clock, bus invalidation.Bus, topic string, l Limits, used *lastused.Batcher,
	lookup func(ctx context.Context, d secret.Digest) (*Entry[V], error)) *Verifier[V] {
	v := &Verifier[V]{
		clock: c, bus: bus, topic: topic, lookup: lookup, used: used,
		positive: credcache.New[secret.Digest, *Entry[V]](l.Size, l.PositiveTTL),
		negative: credcache.New[secret.Digest, struct{}](l.Size, l.NegativeTTL),
	}
	bus.Subscribe(topic, v.drop)
	return v
}

// Verify checks token, already known to be well-formed (its checksum checked by the
// caller, before any of this). ok is false for anything but a live credential; err only
// for a store that failed.
func (v *Verifier[V]) Verify(ctx context.Context, token string) (*Entry[V], bool, error) {
	d := secret.DigestOf(token)
	if _, unknown := v.negative.Get(d); unknown {
		return nil, false, nil
	}
	e, err := v.positive.Load(ctx, d, func(ctx context.Context) (*Entry[V], error) { return v.lookup(ctx, d) })
	if errors.Is(err, ErrUnknown) {
		v.negative.Put(d, struct{}{})
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	now := v.clock.Now()
	if e.Revoked || (e.ExpiresAt != nil && !now.Before(*e.ExpiresAt)) {
		return nil, false, nil
	}
	v.used.Touch(e.ID, now)
	return e, true, nil
}

// Revoked tells every replica (this one before it returns) to forget the credential whose
// stored digest is given.
func (v *Verifier[V]) Revoked(ctx context.Context, digest []byte) {
	v.bus.Publish(ctx, v.topic, hex.EncodeToString(digest))
}

// drop forgets one digest (hex), or everything for "".
func (v *Verifier[V]) drop(key string) {
	if key == "" {
		v.positive.Purge()
		v.negative.Purge()
		return
	}
	b, err := hex.DecodeString(strings.TrimSpace(key))
	if err != nil || len(b) != len(secret.Digest{}) {
		return
	}
	var d secret.Digest
	copy(d[:], b)
	v.positive.Invalidate(d)
	v.negative.Invalidate(d)
}

// Module supplies the cache limits every verifier uses; the load command shrinks them to
// measure uncached verification.
var Module = fx.Module("bearer", fx.Supply(DefaultLimits))
