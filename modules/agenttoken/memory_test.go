package agenttoken

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/authcore/authcore/platform/bearer"
	"github.com/authcore/authcore/platform/secret"
)

// BenchmarkCacheMemory reports the heap cost of one cached verification (the entry with
// its pre-encoded answer, the cache's bookkeeping and the key) at the default bound.
func BenchmarkCacheMemory(b *testing.B) {
	n := bearer.DefaultLimits.Size
	for i := 0; i < b.N; i++ {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		c := bearer.NewCache[secret.Digest, *bearer.Entry[answer]](n, time.Hour)
		creator := "usr_01JABCDEFGHJKMNPQRSTVWXYZ0"
		for k := 0; k < n; k++ {
			d := secret.DigestOf(fmt.Sprint(k))
			info := Verified{TokenID: fmt.Sprintf("tok_01JABCDEFGHJKMNPQRST%06d", k), ExpiresAt: time.Now(),
				Grant: Grant{ProjectID: "prj_01JABCDEFGHJKMNPQRSTVWXYZ0", AgentName: "agent", Scopes: []string{"db:read"}, CreatedBy: &creator}}
			_, _ = c.Load(context.Background(), d, func(context.Context) (*bearer.Entry[answer], error) {
				return buildEntry(info, d, d.Bytes(), nil, nil, false), nil
			})
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		perToken := float64(after.HeapAlloc-before.HeapAlloc) / float64(n)
		b.ReportMetric(perToken, "bytes/token")
		if perToken > 1024 { // SPEC §24: at most 1 KiB a cached credential
			b.Fatalf("a cached token costs %.0f bytes", perToken)
		}
		runtime.KeepAlive(c)
	}
}
