package account

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/alexedwards/argon2id"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/sync/semaphore"

	"github.com/authcore/authcore/platform/apperr"
)

// OWASP's argon2id recommendation (m=19 MiB, t=2, p=1): about 20–30 ms and 19 MiB per hash
// on one core here.
var OWASPParams = argon2id.Params{Memory: 19 * 1024, Iterations: 2, Parallelism: 1, SaltLength: 16, KeyLength: 32}

// hashWait bounds how long a sign-in queues for a hashing slot before it is turned away.
const hashWait = 3 * time.Second

// hasher runs argon2id with bounded concurrency: at most one hash per core but one, so a
// flood of sign-ins queues here instead of starving token verification of CPU.
type hasher struct {
	params argon2id.Params
	slots  *semaphore.Weighted
	tracer trace.Tracer // a span per hash: the costliest thing a request does

	dummyOnce sync.Once
	dummy     string
}

func newHasher(p argon2id.Params, tracer trace.Tracer) *hasher {
	n := runtime.GOMAXPROCS(0) - 1
	if n < 1 {
		n = 1
	}
	return &hasher{params: p, slots: semaphore.NewWeighted(int64(n)), tracer: tracer}
}

var errBusy = apperr.New(apperr.KindUnavailable, "busy", "too many sign-ins in progress; retry shortly").
	WithHeader("Retry-After", "1")

func (h *hasher) acquire(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, hashWait)
	defer cancel()
	if err := h.slots.Acquire(ctx, 1); err != nil {
		return errBusy
	}
	return nil
}

// Hash returns the PHC string of password.
func (h *hasher) Hash(ctx context.Context, password string) (string, error) {
	ctx, span := h.tracer.Start(ctx, "argon2id hash")
	defer span.End()
	if err := h.acquire(ctx); err != nil {
		return "", err
	}
	defer h.slots.Release(1)
	return argon2id.CreateHash(password, &h.params)
}

// Verify compares password with a stored hash in constant time. With hash == "" it
// compares against a dummy hash of the same cost, so an unknown email takes as long as a
// wrong password.
func (h *hasher) Verify(ctx context.Context, password, hash string) (bool, error) {
	if hash == "" {
		h.dummyOnce.Do(func() {
			h.dummy, _ = argon2id.CreateHash("dummy password for timing", &h.params)
		})
		hash = h.dummy
	}
	ctx, span := h.tracer.Start(ctx, "argon2id verify")
	defer span.End()
	if err := h.acquire(ctx); err != nil {
		return false, err
	}
	defer h.slots.Release(1)
	if !strings.HasPrefix(hash, "$argon2id$") {
		return verifyImported(password, hash)
	}
	return argon2id.ComparePasswordAndHash(password, hash)
}

// verifyImported compares password with a hash imported from another system (imported.go),
// which one unparsable hash in the store must not turn into a 500: it is a mismatch.
func verifyImported(password, hash string) (bool, error) {
	v, err := parseImportedHash(hash)
	if err != nil {
		return false, nil
	}
	return v.verify(password)
}

// NeedsRehash says a stored hash is another system's: the first sign-in that proves the
// password replaces it with argon2id.
func NeedsRehash(hash string) bool { return hash != "" && !strings.HasPrefix(hash, "$argon2id$") }
