package schema

import (
	"sort"
	"strings"
	"sync"
	"testing"
)

// Ids made concurrently are unique and, made one after another, sort in creation order.
func TestNewIDUniqueAndOrdered(t *testing.T) {
	const n = 2000
	var mu sync.Mutex
	seen := make(map[string]bool, n)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range n / 4 {
				id := NewID("tst_")
				mu.Lock()
				seen[id] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(seen) != n {
		t.Fatalf("%d unique of %d", len(seen), n)
	}
	ids := make([]string, 100)
	for i := range ids {
		ids[i] = NewID("tst_")
	}
	if !sort.StringsAreSorted(ids) || !strings.HasPrefix(ids[0], "tst_") || len(ids[0]) != 4+26 {
		t.Fatalf("%v", ids[:3])
	}
}
