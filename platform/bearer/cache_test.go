package bearer

import (
	"context"
	"testing"
	"time"
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
