package bearer_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"go.uber.org/fx"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/internal/testkit"
	"github.com/authcore/authcore/platform/bearer"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/invalidation"
	"github.com/authcore/authcore/platform/logging"
	"github.com/authcore/authcore/platform/ratelimit"
	"github.com/authcore/authcore/platform/secret"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// memStore is a Store over a map: the verifier's rules are tested on their own here;
// agenttoken and badge test them again over their real tables on both stores.
type memStore struct {
	mu      sync.Mutex
	entries map[secret.Digest]*bearer.Entry[string]
	lookups int
	fail    error
	used    map[string]time.Time
}

func (s *memStore) Lookup(_ context.Context, _ database.Handle, d secret.Digest) (*bearer.Entry[string], error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lookups++
	if s.fail != nil {
		return nil, s.fail
	}
	e, ok := s.entries[d]
	if !ok {
		return nil, bearer.ErrUnknown
	}
	c := *e
	return &c, nil
}

func (s *memStore) SetLastUsed(_ context.Context, tx *ent.Tx, id string, at time.Time) error {
	if tx == nil {
		return errors.New("no transaction")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.used[id] = at
	return nil
}

func (s *memStore) count() int { s.mu.Lock(); defer s.mu.Unlock(); return s.lookups }

func (s *memStore) put(token string, e bearer.Entry[string]) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.entries[secret.DigestOf(token)] = &e
}

func start(t *testing.T) (*testkit.App, *bearer.Verifier[string], *memStore) {
	st := &memStore{entries: map[secret.Digest]*bearer.Entry[string]{}, used: map[string]time.Time{}}
	var v *bearer.Verifier[string]
	graph := func(cfg config.Config, keys secret.MasterKeys, out logging.Output) fx.Option {
		return fx.Options(testkit.Core(cfg, keys, out), invalidation.Module, ratelimit.Module, bearer.Module,
			fx.Invoke(func(k bearer.Kit) { v = bearer.NewVerifier[string](k, "test_kind", st) }))
	}
	a := testkit.StartURL(t, "sqlite", "sqlite::memory:", graph)
	return a, v, st
}

func TestVerifier(t *testing.T) {
	ctx := context.Background()
	a, v, st := start(t)
	good, _ := secret.NewToken("tk")
	st.put(good, bearer.Entry[string]{ID: "c1", Digest: secret.DigestOf(good).Bytes(), Value: "answer"})

	t.Run("a live credential verifies, the second time from the cache", func(t *testing.T) {
		before := st.count()
		for range 3 {
			e, err := v.Verify(ctx, good)
			if err != nil || e.Value != "answer" || e.ID != "c1" {
				t.Fatalf("%v %v", e, err)
			}
		}
		if st.count()-before != 1 {
			t.Fatalf("%d lookups, want 1", st.count()-before)
		}
	})
	t.Run("an unknown one is invalid, and remembered as unknown", func(t *testing.T) {
		unknown, _ := secret.NewToken("tk")
		before := st.count()
		for range 3 {
			if _, err := v.Verify(ctx, unknown); !errors.Is(err, bearer.ErrInvalid) {
				t.Fatal(err)
			}
		}
		if st.count()-before != 1 {
			t.Fatalf("%d lookups, want 1", st.count()-before)
		}
	})
	t.Run("a stored digest that differs is invalid", func(t *testing.T) {
		tok, _ := secret.NewToken("tk")
		st.put(tok, bearer.Entry[string]{ID: "c2", Digest: []byte("something else")})
		if _, err := v.Verify(ctx, tok); !errors.Is(err, bearer.ErrInvalid) {
			t.Fatal(err)
		}
	})
	t.Run("expiry is checked on every call, to the instant", func(t *testing.T) {
		tok, _ := secret.NewToken("tk")
		exp := a.Clock.Now().Add(time.Minute)
		st.put(tok, bearer.Entry[string]{ID: "c3", Digest: secret.DigestOf(tok).Bytes(), ExpiresAt: &exp})
		a.Clock.Advance(time.Minute - time.Nanosecond)
		if _, err := v.Verify(ctx, tok); err != nil {
			t.Fatalf("just before expiry: %v", err)
		}
		a.Clock.Advance(time.Nanosecond)
		if _, err := v.Verify(ctx, tok); !errors.Is(err, bearer.ErrInvalid) {
			t.Fatalf("at expiry: %v", err)
		}
	})
	t.Run("a revoke reaches the cache at once", func(t *testing.T) {
		tok, _ := secret.NewToken("tk")
		st.put(tok, bearer.Entry[string]{ID: "c4", Digest: secret.DigestOf(tok).Bytes()})
		if _, err := v.Verify(ctx, tok); err != nil {
			t.Fatal(err)
		}
		st.put(tok, bearer.Entry[string]{ID: "c4", Digest: secret.DigestOf(tok).Bytes(), Revoked: true})
		if err := database.WithTx(ctx, a.Ent, func(tx *ent.Tx) error { return v.Revoked(ctx, tx, secret.DigestOf(tok).Bytes()) }); err != nil {
			t.Fatal(err)
		}
		if _, err := v.Verify(ctx, tok); !errors.Is(err, bearer.ErrInvalid) {
			t.Fatalf("after revoke: %v", err)
		}
	})
	t.Run("a failing store is an error, not invalid, and is not cached", func(t *testing.T) {
		tok, _ := secret.NewToken("tk")
		st.mu.Lock()
		st.fail = errors.New("store down")
		st.mu.Unlock()
		if _, err := v.Verify(ctx, tok); err == nil || errors.Is(err, bearer.ErrInvalid) {
			t.Fatalf("err = %v", err)
		}
		st.mu.Lock()
		st.fail = nil
		st.mu.Unlock()
		st.put(tok, bearer.Entry[string]{ID: "c5", Digest: secret.DigestOf(tok).Bytes()})
		if _, err := v.Verify(ctx, tok); err != nil {
			t.Fatalf("after recovery: %v", err)
		}
	})
	t.Run("last use is written in a transaction at shutdown", func(t *testing.T) {
		if err := a.Stop(); err != nil {
			t.Fatal(err)
		}
		st.mu.Lock()
		defer st.mu.Unlock()
		if _, ok := st.used["c1"]; !ok {
			t.Fatalf("used = %v", st.used)
		}
		if _, ok := st.used["c2"]; ok {
			t.Fatal("a credential that never verified was recorded as used")
		}
	})
}
