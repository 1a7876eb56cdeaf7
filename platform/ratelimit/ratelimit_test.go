package ratelimit_test

import (
	"testing"

	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/ratelimit"
)

func limiters(t *testing.T, perMinute int) *ratelimit.Limiters {
	t.Helper()
	l, err := ratelimit.NewLimiters(config.Config{RateLimit: perMinute})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestTakeSpendsTheBudget(t *testing.T) {
	l := limiters(t, 3).Attempts
	for i := range 3 {
		if err := l.Take("192.0.2.1"); err != nil {
			t.Fatalf("attempt %d: %v", i+1, err)
		}
	}
	err := l.Take("192.0.2.1")
	e, ok := apperr.As(err)
	if !ok || e.Kind != apperr.KindRateLimited || e.Code != "rate_limited" || e.Headers["Retry-After"] == "" {
		t.Fatalf("4th attempt: %v", err)
	}
	if err := l.Take("192.0.2.2"); err != nil {
		t.Fatalf("another address shares the budget: %v", err)
	}
}

func TestCheckSpendsNothingFailDoes(t *testing.T) {
	l := limiters(t, 2).Failures
	for range 5 {
		if err := l.Check("192.0.2.1"); err != nil {
			t.Fatal("Check spent the budget")
		}
	}
	l.Fail("192.0.2.1")
	if err := l.Check("192.0.2.1"); err != nil {
		t.Fatal("one failure of two refused")
	}
	l.Fail("192.0.2.1")
	if err := l.Check("192.0.2.1"); !apperr.IsKind(err, apperr.KindRateLimited) {
		t.Fatalf("after two failures: %v", err)
	}
}

func TestZeroTurnsLimitsOff(t *testing.T) {
	l := limiters(t, 0)
	for range 100 {
		l.Failures.Fail("192.0.2.1")
		if err := l.Attempts.Take("192.0.2.1"); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Failures.Check("192.0.2.1"); err != nil || !l.Failures.Off() {
		t.Fatal("limits on at 0")
	}
}
