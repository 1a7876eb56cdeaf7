package bearer

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/authcore/authcore/platform/config"
)

func TestLoadCachesAndInvalidates(t *testing.T) {
	c := NewCache[string, int](10, time.Minute)
	calls := 0
	load := func(context.Context) (int, error) { calls++; return calls, nil }
	if v, _ := c.Load(context.Background(), "k", load); v != 1 {
		t.Fatal(v)
	}
	if v, _ := c.Load(context.Background(), "k", load); v != 1 || calls != 1 {
		t.Fatal("not cached")
	}
	c.Invalidate("k")
	if v, _ := c.Load(context.Background(), "k", load); v != 2 {
		t.Fatal("not invalidated")
	}
}

// A lookup that began before an invalidation must not store its (stale) answer.
func TestInvalidationDuringLoadWins(t *testing.T) {
	c := NewCache[string, string](10, time.Minute)
	v, _ := c.Load(context.Background(), "sid", func(context.Context) (string, error) {
		c.Invalidate("sid") // the revoke lands while this lookup is reading the store
		return "live", nil
	})
	if v != "live" {
		t.Fatal(v)
	}
	if _, ok := c.Get("sid"); ok {
		t.Fatal("stale value cached after invalidation")
	}
}

func TestBoundAndTTL(t *testing.T) {
	c := NewCache[int, int](3, 50*time.Millisecond)
	for i := 0; i < 10; i++ {
		c.Put(i, i)
	}
	if c.Len() != 3 {
		t.Fatalf("len %d", c.Len())
	}
	time.Sleep(120 * time.Millisecond)
	if _, ok := c.Get(9); ok {
		t.Fatal("entry outlived its TTL")
	}
}

// A burst of misses of one key asks the store once.
func TestConcurrentMissesShareOneLoad(t *testing.T) {
	c := NewCache[string, int](10, time.Minute)
	var calls atomic.Int32
	release := make(chan struct{})
	load := func(context.Context) (int, error) { calls.Add(1); <-release; return 7, nil }
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if v, err := c.Load(context.Background(), "k", load); v != 7 || err != nil {
				t.Errorf("%d %v", v, err)
			}
		}()
	}
	time.Sleep(50 * time.Millisecond) // let them all arrive
	close(release)
	wg.Wait()
	if n := calls.Load(); n != 1 {
		t.Fatalf("%d loads for one key", n)
	}
}

// A caller arriving after an invalidation never joins a lookup that began before it.
func TestNoJoiningALookupFromBeforeAnInvalidation(t *testing.T) {
	c := NewCache[string, string](10, time.Minute)
	started, release := make(chan struct{}), make(chan struct{})
	go c.Load(context.Background(), "sid", func(context.Context) (string, error) {
		close(started)
		<-release
		return "live (read before the revoke)", nil
	})
	<-started
	c.Invalidate("sid")
	v, _ := c.Load(context.Background(), "sid", func(context.Context) (string, error) { return "revoked", nil })
	close(release)
	if v != "revoked" {
		t.Fatalf("got %q after the invalidation", v)
	}
}

// A follower whose leader was cancelled looks the key up itself.
func TestLeaderCancellationIsNotTheFollowersError(t *testing.T) {
	c := NewCache[string, int](10, time.Minute)
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{})
	go c.Load(ctx, "k", func(ctx context.Context) (int, error) { close(started); <-ctx.Done(); return 0, ctx.Err() })
	<-started
	done := make(chan struct{})
	var v int
	var err error
	go func() {
		v, err = c.Load(context.Background(), "k", func(context.Context) (int, error) { return 9, nil })
		close(done)
	}()
	time.Sleep(20 * time.Millisecond)
	cancel()
	<-done
	if v != 9 || err != nil {
		t.Fatalf("%d %v", v, err)
	}
}

// AUTHCORE_CACHE_SIZE sizes every verifier's caches; 0 leaves the default.
func TestLimitsOfTheSetting(t *testing.T) {
	if got := LimitsOf(config.Config{CacheSize: 250_000}); got.Size != 250_000 || got.PositiveTTL != DefaultLimits.PositiveTTL {
		t.Fatalf("%+v", got)
	}
	if got := LimitsOf(config.Config{}); got != DefaultLimits {
		t.Fatalf("%+v", got)
	}
}

// Purge gives the cache's memory back: the LRU is made anew, and what was cached is gone.
func TestPurgeEmpties(t *testing.T) {
	c := NewCache[int, int](100, time.Minute)
	for i := range 100 {
		c.Put(i, i)
	}
	c.Purge()
	if c.Len() != 0 {
		t.Fatalf("%d entries after a purge", c.Len())
	}
	if _, ok := c.Get(5); ok {
		t.Fatal("an entry outlived the purge")
	}
	c.Put(1, 1)
	if v, ok := c.Get(1); !ok || v != 1 {
		t.Fatal("the cache does not work after a purge")
	}
}
