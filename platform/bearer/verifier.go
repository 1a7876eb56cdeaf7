// Package bearer verifies opaque bearer secrets (AI agent tokens, service badges) the same
// way for every kind: caches of known and unknown digests in front of one store lookup, a
// constant-time digest check, expiry checked on every call, exact invalidation when a
// credential is revoked anywhere, and last-used times written in batches off the request
// path. It also holds the HTTP side every "who am I" route shares. It must not know any
// credential's table: the owner supplies a Store.
package bearer

import (
	"cmp"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/credential"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/invalidation"
	"github.com/authcore/authcore/platform/metrics"
	"github.com/authcore/authcore/platform/ratelimit"
	"github.com/authcore/authcore/platform/secret"
	"github.com/authcore/authcore/platform/usage"
)

// ErrUnknown is what a Store's Lookup returns when no credential has the digest (ent's
// not-found error is taken to mean the same).
var ErrUnknown = fmt.Errorf("unknown credential: %w", database.ErrNoRow)

// ErrInvalid is what Verify returns for anything but a live credential: unknown, revoked,
// expired. Callers answer it as invalid_token. It is credential.ErrNotLive, so services hand
// it on to the OAuth surface as they get it.
var ErrInvalid = credential.ErrNotLive

// Limits bound the caches.
type Limits struct {
	Size        int
	PositiveTTL time.Duration
	NegativeTTL time.Duration
}

// DefaultLimits: a cached credential costs under 1 KiB of heap (platform/lifecycle's
// BenchmarkCacheMemory measures it), so 100k stay under 100 MiB; AUTHCORE_CACHE_SIZE
// changes the size.
var DefaultLimits = Limits{Size: 100_000, PositiveTTL: 5 * time.Minute, NegativeTTL: 30 * time.Second}

// Entry is one credential as the hot path needs it.
type Entry[V any] struct {
	ID string
	// ProjectID is whose credential it is: its verifications are counted there (SPEC §19).
	ProjectID string
	// Digest is the stored digest, compared in constant time with the presented one, so
	// the guarantee does not depend on how the store compares; dropped once compared.
	Digest    []byte
	ExpiresAt *time.Time // nil: never
	Revoked   bool
	Value     V
}

// Store is what a credential's owner supplies.
type Store[V any] interface {
	// Lookup returns the credential stored with digest d in h (the primary or the read
	// replica), or ErrUnknown.
	Lookup(ctx context.Context, h database.Handle, d secret.Digest) (*Entry[V], error)
	// SetLastUsed records, inside the batch's transaction, that credential id was last used at.
	SetLastUsed(ctx context.Context, tx *ent.Tx, id string, at time.Time) error
}

// Kit is what every verifier and who-am-I endpoint shares.
type Kit struct {
	fx.In
	LC       fx.Lifecycle
	Ent      *ent.Client
	Reads    *database.Reads
	Clock    clock.Clock
	Bus      invalidation.Bus
	Limits   Limits
	Log      *slog.Logger
	Metrics  *metrics.Credentials
	Failures *ratelimit.Limiters
	Usage    usage.Counter `optional:"true"`
	// UsageReader reads counts back for list answers (usage24h); nil without the module.
	UsageReader usage.Reader `optional:"true"`
}

// Module supplies the cache limits every verifier uses, sized by AUTHCORE_CACHE_SIZE; the
// load command shrinks them to measure uncached verification.
var Module = fx.Module("bearer", fx.Provide(LimitsOf))

// LimitsOf is DefaultLimits with the size AUTHCORE_CACHE_SIZE sets (0: the default).
func LimitsOf(cfg config.Config) Limits {
	l := DefaultLimits
	if cfg.CacheSize > 0 {
		l.Size = cfg.CacheSize
	}
	return l
}

// Verifier verifies one kind of bearer secret.
type Verifier[V any] struct {
	kind     string
	usage    usage.Counter
	clock    clock.Clock
	bus      invalidation.Bus
	reads    *database.Reads
	topic    string
	store    Store[V]
	used     *batcher
	positive *Cache[secret.Digest, *Entry[V]]
	negative *Cache[secret.Digest, struct{}]
	misses   prometheus.Counter
}

// NewVerifier returns the verifier of credentials of kind (also the invalidation topic and
// the name in logs), looked up in store.
func NewVerifier[V any](k Kit, kind string, store Store[V]) *Verifier[V] {
	v := &Verifier[V]{
		kind: kind, usage: cmp.Or[usage.Counter](k.Usage, usage.Discard),
		clock: k.Clock, bus: k.Bus, reads: k.Reads, topic: kind, store: store,
		positive: NewCache[secret.Digest, *Entry[V]](k.Limits.Size, k.Limits.PositiveTTL),
		negative: NewCache[secret.Digest, struct{}](k.Limits.Size, k.Limits.NegativeTTL),
		misses:   k.Metrics.CacheMisses.WithLabelValues(kind),
	}
	k.Metrics.WatchCache(kind, v.positive.Len)
	v.used = newBatcher(k.LC, k.Log, kind, func(ctx context.Context, batch map[string]time.Time) error {
		// In key order: the rows a flush touches are then read and written page after page,
		// not in a random order that misses SQLite's page cache on nearly every one (with a
		// large population, the flush was as costly as every lookup of the same seconds).
		ids := slices.Sorted(maps.Keys(batch))
		return database.WithTx(ctx, k.Ent, func(tx *ent.Tx) error {
			for _, id := range ids {
				if err := store.SetLastUsed(ctx, tx, id, batch[id]); err != nil && !ent.IsNotFound(err) {
					return err
				}
			}
			return nil
		})
	})
	k.Bus.Subscribe(kind, v.drop)
	return v
}

// Verify checks token, already known to be well-formed (its checksum checked by the
// caller, so malformed and guessed tokens never reach the caches or the store). It returns
// ErrInvalid for anything but a live credential, and any other error only for a store that
// failed.
func (v *Verifier[V]) Verify(ctx context.Context, token string) (*Entry[V], error) {
	d := secret.DigestOf(token)
	if _, unknown := v.negative.Get(d); unknown {
		return nil, ErrInvalid
	}
	e, err := v.positive.Load(ctx, d, func(ctx context.Context) (*Entry[V], error) { return v.lookup(ctx, d) })
	if errors.Is(err, ErrUnknown) {
		v.negative.Put(d, struct{}{})
		return nil, ErrInvalid
	}
	if err != nil {
		return nil, err
	}
	now := v.clock.Now()
	if e.Revoked || (e.ExpiresAt != nil && !now.Before(*e.ExpiresAt)) {
		v.usage.Count(e.ProjectID, v.kind, e.ID, usage.Denied)
		return nil, ErrInvalid
	}
	v.used.touch(e.ID, now)
	v.usage.Count(e.ProjectID, v.kind, e.ID, usage.OK)
	return e, nil
}

// Limited counts a presentation of token refused by the failure budget before it was
// checked: as its credential's when the cache knows it, else not at all (a store lookup
// is what the budget exists to spare).
func (v *Verifier[V]) Limited(token string) {
	if e, ok := v.positive.Get(secret.DigestOf(token)); ok {
		v.usage.Count(e.ProjectID, v.kind, e.ID, usage.RateLimited)
	}
}

// lookup reads the credential on the read replica when that is safe (the key is the
// digest as Revoked publishes it), else on the primary.
func (v *Verifier[V]) lookup(ctx context.Context, d secret.Digest) (*Entry[V], error) {
	v.misses.Inc()
	e, err := database.Read(ctx, v.reads, v.topic, hex.EncodeToString(d[:]), func(ctx context.Context, h database.Handle) (*Entry[V], error) {
		e, err := v.store.Lookup(ctx, h, d)
		if err != nil {
			return nil, err
		}
		if !secret.Equal(e.Digest, d.Bytes()) {
			return nil, ErrUnknown
		}
		e.Digest = nil // checked; the cache's key is the digest, so a cached entry need not keep it
		return e, nil
	})
	if database.IsNoRow(err) {
		return nil, ErrUnknown
	}
	return e, err
}

// Revoked tells every replica to forget the credential's secrets with these stored digests
// (the current one and, after a roll, the one it replaced; nil ones are skipped), as part of
// tx (the transaction that revokes or rolls it): here when tx commits, elsewhere through a
// NOTIFY that commits with it.
func (v *Verifier[V]) Revoked(ctx context.Context, tx *ent.Tx, digests ...[]byte) error {
	for _, d := range digests {
		if len(d) == 0 {
			continue
		}
		if err := v.bus.Publish(ctx, tx, v.topic, hex.EncodeToString(d)); err != nil {
			return err
		}
	}
	return nil
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
