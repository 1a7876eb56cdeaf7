package ratelimit_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/fx"

	"github.com/authcore/authcore/internal/testkit"
	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/logging"
	"github.com/authcore/authcore/platform/ratelimit"
	"github.com/authcore/authcore/platform/secret"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func graph(cfg config.Config, keys secret.MasterKeys, out logging.Output) fx.Option {
	return fx.Options(testkit.Core(cfg, keys, out), ratelimit.Module)
}

func signIns(t *testing.T, st testkit.Store, url string) (*testkit.App, *ratelimit.SignIns) {
	var s *ratelimit.SignIns
	a := testkit.StartURL(t, st.Name, url, graph, testkit.WithFx(fx.Populate(&s)),
		testkit.WithConfig(func(c *config.Config) { c.RateLimit = 60 }))
	return a, s
}

// The account budget (SPEC §9, §9a): 10 failures per 15 minutes, one attempt back every
// 90 s; spent before the attempt and refunded after a right one.
func TestSignInBudget(t *testing.T) {
	testkit.ForEachStore(t, func(t *testing.T, st testkit.Store) {
		a, s := signIns(t, st, st.URL(t))
		ctx := context.Background()
		key := "public\x00" + testkit.UniqueEmail(t)
		for i := range 10 {
			if _, err := s.Spend(ctx, key); err != nil {
				t.Fatalf("attempt %d refused early: %v", i+1, err)
			}
		}
		_, err := s.Spend(ctx, key)
		e, ok := apperr.As(err)
		if !ok || e.Code != "rate_limited" || !strings.Contains(e.Message, "account") {
			t.Fatalf("11th: %v", err)
		}
		if ra, _ := strconv.Atoi(e.Headers["Retry-After"]); ra < 80 || ra > 91 {
			t.Fatalf("Retry-After %d, want about 90", ra)
		}
		if _, err := s.Spend(ctx, "public\x00"+testkit.UniqueEmail(t)); err != nil {
			t.Fatal("another account shares the budget")
		}
		a.Clock.Advance(91 * time.Second)
		refund, err := s.Spend(ctx, key)
		if err != nil {
			t.Fatalf("one attempt should have refilled after 90 s: %v", err)
		}
		if _, err := s.Spend(ctx, key); err == nil {
			t.Fatal("two attempts refilled in 91 s")
		}
		refund(ctx) // a right password gives its attempt back
		if _, err := s.Spend(ctx, key); err != nil {
			t.Fatalf("the refunded attempt is not there: %v", err)
		}
		a.Clock.Advance(16 * time.Minute)
		if n, err := s.Prune(ctx); err != nil || n < 2 {
			t.Fatalf("pruned %d (%v)", n, err)
		}
		for range 10 {
			if _, err := s.Spend(ctx, key); err != nil {
				t.Fatalf("a full window later the budget is not whole: %v", err)
			}
		}
	})
}

// 60 parallel attempts on one account from anywhere: exactly 10 get through (the review
// saw every one of them reach the hash). On PostgreSQL, two replicas share the budget.
func TestSignInBudgetUnderConcurrency(t *testing.T) {
	testkit.ForEachStore(t, func(t *testing.T, st testkit.Store) {
		url := st.URL(t)
		_, s1 := signIns(t, st, url)
		s2 := s1
		if st.Name == "postgres" {
			_, s2 = signIns(t, st, url)
		}
		key := "public\x00" + testkit.UniqueEmail(t)
		var passed atomic.Int64
		var wg sync.WaitGroup
		for i := range 60 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s := s1
				if i%2 == 1 {
					s = s2
				}
				if _, err := s.Spend(context.Background(), key); err == nil {
					passed.Add(1)
				} else if e, ok := apperr.As(err); !ok || e.Code != "rate_limited" {
					t.Errorf("attempt %d: %v", i, err)
				}
			}()
		}
		wg.Wait()
		if n := passed.Load(); n != 10 {
			t.Fatalf("%d of 60 parallel attempts passed, want 10", n)
		}
	})
}
