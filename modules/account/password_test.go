package account

import (
	"context"
	"testing"
	"time"

	"github.com/alexedwards/argon2id"
	"github.com/authcore/authcore/platform/tracing"
)

func TestOWASPParams(t *testing.T) {
	if OWASPParams.Memory < 19*1024 || OWASPParams.Iterations < 2 || OWASPParams.SaltLength < 16 {
		t.Fatalf("below OWASP's argon2id minimum: %+v", OWASPParams)
	}
}

var cheap = argon2id.Params{Memory: 64, Iterations: 1, Parallelism: 1, SaltLength: 16, KeyLength: 32}

func TestUnknownEmailStillHashes(t *testing.T) {
	h := newHasher(cheap, tracing.Off.Tracer(""))
	ok, err := h.Verify(context.Background(), "pw", "")
	if ok || err != nil {
		t.Fatalf("%v %v", ok, err)
	}
	if h.dummy == "" {
		t.Fatal("no dummy hash was computed: an unknown email would answer faster")
	}
	p, _, _, err := argon2id.DecodeHash(h.dummy)
	if err != nil || *p != cheap {
		t.Fatalf("dummy hash has other parameters: %+v %v", p, err)
	}
}

// With every slot busy, a sign-in waits, then is turned away with 503 busy rather than
// queueing without bound.
func TestHashingIsBounded(t *testing.T) {
	h := newHasher(cheap, tracing.Off.Tracer(""))
	n := 0
	for h.slots.TryAcquire(1) {
		n++
	}
	if n < 1 {
		t.Fatal("no slots")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := h.Hash(ctx, "password")
	if err != errBusy {
		t.Fatalf("err = %v, want busy", err)
	}
	h.slots.Release(1)
	if _, err := h.Hash(context.Background(), "password"); err != nil {
		t.Fatal(err)
	}
}
