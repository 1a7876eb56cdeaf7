package bearer

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"

	"github.com/authcore/authcore/platform/invalidation"
)

// Cache maps K to V with a size bound and a TTL: the bounded, expiring cache in front of
// credential lookups (here, in the session engine and in product plugins). Its one job beyond an
// LRU is to make invalidation exact: a lookup that read the store before a revoke can never
// put its stale answer back after the revoke invalidated the key.
type Cache[K comparable, V any] struct {
	lru *expirable.LRU[K, V]
	// mu orders fills against invalidations; epoch counts invalidations. A fill stores
	// its value only if no invalidation happened since its lookup began.
	mu    sync.Mutex
	epoch uint64
	// flights are the lookups under way, one per key: concurrent misses of one key (a
	// burst right after an invalidation) wait for it instead of each asking the store.
	flights map[K]*flight[V]
}

// flight is one lookup under way; epoch is the cache's when it began. Only callers that
// arrive in the same epoch join it, so nobody who came after an invalidation gets an
// answer read before it.
type flight[V any] struct {
	done  chan struct{}
	v     V
	err   error
	epoch uint64
}

// NewCache returns a cache of at most size entries, each living at most ttl.
func NewCache[K comparable, V any](size int, ttl time.Duration) *Cache[K, V] {
	return &Cache[K, V]{lru: expirable.NewLRU[K, V](size, nil, ttl), flights: map[K]*flight[V]{}}
}

// Get returns the cached value for k.
func (c *Cache[K, V]) Get(k K) (V, bool) { return c.lru.Get(k) }

// Load returns the cached value for k, or calls load and caches what it returns; callers
// missing the same key at once share one call. Errors are not cached.
func (c *Cache[K, V]) Load(ctx context.Context, k K, load func(context.Context) (V, error)) (V, error) {
	if v, ok := c.lru.Get(k); ok {
		return v, nil
	}
	c.mu.Lock()
	if f, ok := c.flights[k]; ok && f.epoch == c.epoch {
		c.mu.Unlock()
		select {
		case <-f.done:
		case <-ctx.Done():
			var zero V
			return zero, ctx.Err()
		}
		// The leader's own cancellation is not this caller's failure: look it up itself.
		if !errors.Is(f.err, context.Canceled) && !errors.Is(f.err, context.DeadlineExceeded) {
			return f.v, f.err
		}
		return load(ctx)
	}
	f := &flight[V]{done: make(chan struct{}), epoch: c.epoch}
	c.flights[k] = f
	c.mu.Unlock()

	f.v, f.err = load(ctx)
	c.mu.Lock()
	if c.flights[k] == f {
		delete(c.flights, k)
	}
	if f.err == nil && c.epoch == f.epoch {
		c.lru.Add(k, f.v)
	}
	c.mu.Unlock()
	close(f.done)
	return f.v, f.err
}

// Put stores v for k unconditionally (the caller knows it is current).
func (c *Cache[K, V]) Put(k K, v V) {
	c.mu.Lock()
	c.lru.Add(k, v)
	c.mu.Unlock()
}

// Invalidate removes k and voids every lookup in flight.
func (c *Cache[K, V]) Invalidate(k K) {
	c.mu.Lock()
	c.epoch++
	c.lru.Remove(k)
	c.mu.Unlock()
}

// Purge empties the cache, e.g. when invalidations may have been missed.
func (c *Cache[K, V]) Purge() {
	c.mu.Lock()
	c.epoch++
	c.lru.Purge()
	c.mu.Unlock()
}

// Len is the number of entries.
func (c *Cache[K, V]) Len() int { return c.lru.Len() }

// Follow keeps c in step with invalidations of topic: each key published is dropped, and
// everything when invalidations may have been missed.
func Follow[V any](bus invalidation.Bus, topic string, c *Cache[string, V]) {
	bus.Subscribe(topic, func(k string) {
		if k == "" {
			c.Purge()
			return
		}
		c.Invalidate(k)
	})
}
