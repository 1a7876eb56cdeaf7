// Package ratelimit bounds, per client IP, sign-in/sign-up attempts and failed credential
// verifications (AUTHCORE_RATE_LIMIT per minute). Token buckets come from
// golang.org/x/time/rate; the per-IP buckets live in a bounded LRU so a flood of source
// addresses cannot grow memory without limit.
package ratelimit

import (
	"math"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"
	lru "github.com/hashicorp/golang-lru/v2"
	"go.uber.org/fx"
	"golang.org/x/time/rate"

	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/config"
)

// Module provides the two limiters.
var Module = fx.Module("ratelimit", fx.Provide(NewLimiters))

// maxClients bounds how many client IPs are tracked at once.
const maxClients = 100_000

// Limiter is one per-IP budget.
type Limiter struct {
	perMinute int
	buckets   *lru.Cache[string, *rate.Limiter]
}

// Limiters are the two budgets of SPEC §8.
type Limiters struct {
	Attempts *Limiter // every sign-in and sign-up
	Failures *Limiter // failed credential verifications only
}

// NewLimiters builds both from AUTHCORE_RATE_LIMIT (0 = off).
func NewLimiters(cfg config.Config) (*Limiters, error) {
	a, err := newLimiter(cfg.RateLimit)
	if err != nil {
		return nil, err
	}
	f, err := newLimiter(cfg.RateLimit)
	if err != nil {
		return nil, err
	}
	return &Limiters{Attempts: a, Failures: f}, nil
}

func newLimiter(perMinute int) (*Limiter, error) {
	c, err := lru.New[string, *rate.Limiter](maxClients)
	if err != nil {
		return nil, err
	}
	return &Limiter{perMinute: perMinute, buckets: c}, nil
}

func (l *Limiter) bucket(ip string) *rate.Limiter {
	if b, ok := l.buckets.Get(ip); ok {
		return b
	}
	b := rate.NewLimiter(rate.Limit(float64(l.perMinute)/60), l.perMinute)
	if prev, ok, _ := l.buckets.PeekOrAdd(ip, b); ok {
		return prev
	}
	return b
}

// Off reports whether limiting is disabled.
func (l *Limiter) Off() bool { return l.perMinute <= 0 }

// Take spends one unit of ip's budget, or returns the 429 to answer.
func (l *Limiter) Take(ip string) error {
	if l.Off() {
		return nil
	}
	r := l.bucket(ip).Reserve()
	if d := r.Delay(); d > 0 {
		r.Cancel()
		return tooMany(d)
	}
	return nil
}

// Check returns the 429 to answer when ip has no budget left, without spending any.
func (l *Limiter) Check(ip string) error {
	if l.Off() {
		return nil
	}
	b, ok := l.buckets.Get(ip)
	if !ok || b.Tokens() >= 1 {
		return nil
	}
	return tooMany(time.Duration((1 - b.Tokens()) / float64(b.Limit()) * float64(time.Second)))
}

// Fail spends one unit of ip's budget after a failed verification.
func (l *Limiter) Fail(ip string) {
	if l.Off() {
		return
	}
	l.bucket(ip).Allow()
}

// Middleware spends one unit per request (sign-in, sign-up).
func (l *Limiter) Middleware() fiber.Handler {
	return func(c *fiber.Ctx) error {
		if err := l.Take(c.IP()); err != nil {
			return err
		}
		return c.Next()
	}
}

func tooMany(wait time.Duration) error {
	secs := int(math.Ceil(wait.Seconds()))
	if secs < 1 {
		secs = 1
	}
	return errRateLimited.WithHeader("Retry-After", strconv.Itoa(secs))
}

var errRateLimited = apperr.New(apperr.KindRateLimited, "rate_limited", "too many attempts from this address; retry later")
