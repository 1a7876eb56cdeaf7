package bearer

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"

	"github.com/authcore/authcore/platform/invalidation"
)

// Cache maps K to V with a size bound and a TTL: the bounded, expiring cache in front of
// credential lookups (here, in the session engine and in product plugins). Its one job beyond an
// LRU is to make invalidation exact: a lookup that read the store before a revoke can never
// put its stale answer back after the revoke invalidated the key.
//
// The LRU is golang-lru's simplelru, one map and one list, with each entry's expiry kept
// beside its value and checked on every read. Its expirable variant also indexes every
// entry in a second map of expiry buckets, swept by a goroutine per cache: 70 bytes more a
// credential, which at a million cached credentials is 70 MB (SPEC §24 holds a cached
// credential under 1 KiB). An expired entry here lingers until read or pushed out, within
// the size bound all the same.
type Cache[K comparable, V any] struct {
	ttl  time.Duration
	size int
	// mu guards lru, and orders fills against invalidations; epoch counts invalidations. A
	// fill stores its value only if no invalidation happened since its lookup began.
	mu    sync.Mutex
	lru   *simplelru.LRU[K, expiring[V]]
	epoch uint64
	// flights are the lookups under way, one per key: concurrent misses of one key (a
	// burst right after an invalidation) wait for it instead of each asking the store.
	flights map[K]*flight[V]
}

// expiring is a value and when it stops being served (Unix nanoseconds).
type expiring[V any] struct {
	v     V
	until int64
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
	return &Cache[K, V]{ttl: ttl, size: size, lru: newLRU[K, V](size), flights: map[K]*flight[V]{}}
}

func newLRU[K comparable, V any](size int) *simplelru.LRU[K, expiring[V]] {
	l, err := simplelru.NewLRU[K, expiring[V]](max(size, 1), nil)
	if err != nil {
		panic(err) // only for a size below 1, which max rules out
	}
	return l
}

// Get returns the cached value for k.
func (c *Cache[K, V]) Get(k K) (V, bool) {
	c.mu.Lock()
	v, ok := c.get(k)
	c.mu.Unlock()
	return v, ok
}

// get is Get under c.mu; an expired entry is dropped.
func (c *Cache[K, V]) get(k K) (V, bool) {
	e, ok := c.lru.Get(k)
	if !ok {
		var zero V
		return zero, false
	}
	if time.Now().UnixNano() >= e.until {
		c.lru.Remove(k)
		var zero V
		return zero, false
	}
	return e.v, true
}

// add is Put under c.mu.
func (c *Cache[K, V]) add(k K, v V) {
	c.lru.Add(k, expiring[V]{v: v, until: time.Now().Add(c.ttl).UnixNano()})
}

// Load returns the cached value for k, or calls load and caches what it returns; callers
// missing the same key at once share one call. Errors are not cached.
func (c *Cache[K, V]) Load(ctx context.Context, k K, load func(context.Context) (V, error)) (V, error) {
	c.mu.Lock()
	if v, ok := c.get(k); ok {
		c.mu.Unlock()
		return v, nil
	}
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
		c.add(k, f.v)
	}
	c.mu.Unlock()
	close(f.done)
	return f.v, f.err
}

// Put stores v for k unconditionally (the caller knows it is current).
func (c *Cache[K, V]) Put(k K, v V) {
	c.mu.Lock()
	c.add(k, v)
	c.mu.Unlock()
}

// Invalidate removes k and voids every lookup in flight.
func (c *Cache[K, V]) Invalidate(k K) {
	c.mu.Lock()
	c.epoch++
	c.lru.Remove(k)
	c.mu.Unlock()
}

// Purge empties the cache, e.g. when invalidations may have been missed. The LRU is made
// anew: a Go map keeps its buckets after its keys are deleted.
func (c *Cache[K, V]) Purge() {
	c.mu.Lock()
	c.epoch++
	c.lru = newLRU[K, V](c.size)
	c.mu.Unlock()
}

// Len is the number of entries (expired ones not yet dropped included).
func (c *Cache[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

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
