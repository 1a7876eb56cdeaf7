package account

import (
	"context"
	"testing"

	"github.com/authcore/authcore/platform/tracing"
)

// BenchmarkHashOWASP is the cost of one sign-in's password check with the production
// parameters (one core).
func BenchmarkHashOWASP(b *testing.B) {
	h := newHasher(OWASPParams, tracing.Off.Tracer(""))
	hash, err := h.Hash(context.Background(), "correct horse battery")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if ok, err := h.Verify(context.Background(), "correct horse battery", hash); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}
