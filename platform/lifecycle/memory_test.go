package lifecycle

import (
	"context"
	entgo "entgo.io/ent"
	"entgo.io/ent/schema/field"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/authcore/authcore/ent/schema"
	"github.com/authcore/authcore/platform/bearer"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/secret"
)

// BenchmarkCacheMemory reports the heap cost of one cached verification of an agent token
// (the entry with what its answer and the OAuth surface need of its row, the cache's
// bookkeeping and the key) at the default bound: what bearer.DefaultLimits is sized by.
func BenchmarkCacheMemory(b *testing.B) {
	// The agent tokens' table (modules/agenttoken), undeclared: this is no kind's.
	tokens := &Table{Name: "agent_tokens", Mixin: schema.KindMixin{IDPrefix: schema.AgentTokenIDPrefix, Hint: "token_hint", ExpiresRequired: true},
		Fields: []entgo.Field{field.String("agent_name"), field.JSON("scopes", []string{}), field.String("dpop_jkt").Optional().Nillable()}}
	t, err := newTable(tokens.Name, config.SQLite, tokens.Mixin, tokens.Schema())
	if err != nil {
		b.Fatal(err)
	}
	l := &Lifecycle{spec: Spec{Name: "ai_agent"}, t: t}
	n := bearer.DefaultLimits.Size
	for i := 0; i < b.N; i++ {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		c := bearer.NewCache[secret.Digest, *bearer.Entry[*Verified]](n, time.Hour)
		creator := "usr_01JABCDEFGHJKMNPQRSTVWXYZ0"
		for k := 0; k < n; k++ {
			d := secret.DigestOf(fmt.Sprint(k))
			expires := time.Now()
			r := &Row{ID: fmt.Sprintf("tok_01JABCDEFGHJKMNPQRST%06d", k), ProjectID: "prj_01JABCDEFGHJKMNPQRSTVWXYZ0", CreatedBy: &creator,
				CreatedAt: time.Now(), ExpiresAt: &expires, Hint: "ac_ai_abcd…wxyz", t: t, digest: d.Bytes(), own: []any{"agent", []string{"db:read"}, nil}}
			_, _ = c.Load(context.Background(), d, func(context.Context) (*bearer.Entry[*Verified], error) { return l.entry(r, d) })
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
