package usage

import (
	"strconv"
	"testing"
	"time"

	"github.com/authcore/authcore/platform/clock"
)

// A flood of distinct credentials between two flushes costs a bounded map: past the
// bound they are counted under their project and kind, and no count is lost.
func TestPendingIsBounded(t *testing.T) {
	r := &Recorder{clock: clock.NewFake(time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)), pending: map[key]int64{}}
	const n = maxPending + 5000
	for i := range n {
		r.Count("prj_1", "ai_agent", "tok_"+strconv.Itoa(i), "ok")
	}
	if len(r.pending) != maxPending+1 {
		t.Fatalf("%d keys pending, want %d", len(r.pending), maxPending+1)
	}
	var total int64
	for _, c := range r.pending {
		total += c
	}
	if total != n || r.pending[key{project: "prj_1", kind: "ai_agent", outcome: "ok", bucket: r.clock.Now().Unix()}] != 5000 {
		t.Fatalf("counted %d, want %d", total, n)
	}
	r.Count("", "ai_agent", "tok_x", "ok") // no project: nobody could read it
	if len(r.pending) != maxPending+1 {
		t.Fatal("a count with no project was kept")
	}
}

// BenchmarkCount is what counting adds to a verification: one map increment under a
// mutex, from every core at once.
func BenchmarkCount(b *testing.B) {
	r := &Recorder{clock: clock.System, pending: map[key]int64{}}
	ids := make([]string, 1000)
	for i := range ids {
		ids[i] = "tok_" + strconv.Itoa(i)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			r.Count("prj_1", "ai_agent", ids[i%len(ids)], "ok")
			i++
		}
	})
}
