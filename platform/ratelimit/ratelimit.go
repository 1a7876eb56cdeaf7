// Package ratelimit bounds, per client, sign-in/sign-up attempts and failed credential
// verifications (AUTHCORE_RATE_LIMIT per minute), and per account, failed sign-ins (10 per
// 15 minutes, SPEC §9, kept in the store: see SignIns). A client is its IPv4 address or
// its IPv6 /64, since one IPv6 host commonly holds a whole /64. Per-client token buckets
// come from golang.org/x/time/rate; they live in bounded LRUs so a flood of addresses
// cannot grow memory without limit.
package ratelimit

import (
	"math"
	"net/netip"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"
	lru "github.com/hashicorp/golang-lru/v2"
	"go.uber.org/fx"
	"golang.org/x/time/rate"

	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/httpserver"
)

// Module provides the per-client limiters and the per-account sign-in budget.
var Module = fx.Module("ratelimit", fx.Provide(NewLimiters, newSignIns, newDevices))

// maxClients bounds how many clients each budget tracks at once.
const maxClients = 100_000

// Limiter is one budget per key (a client address or an account).
type Limiter struct {
	on      bool
	rate    rate.Limit
	burst   int
	key     func(string) string
	buckets *lru.Cache[string, *rate.Limiter]
	refused *apperr.Error
}

// Limiters are the budgets of SPEC §8 and §9.
type Limiters struct {
	Attempts *Limiter // every sign-in and sign-up, per client
	Failures *Limiter // failed credential verifications only, per client
}

// NewLimiters builds them from AUTHCORE_RATE_LIMIT (0 turns every one off).
func NewLimiters(cfg config.Config) (*Limiters, error) {
	perMinute := rate.Limit(float64(cfg.RateLimit) / 60)
	a, err := newLimiter(cfg.RateLimit > 0, perMinute, cfg.RateLimit, clientKey, "too many attempts from this address; retry later")
	if err != nil {
		return nil, err
	}
	f, err := newLimiter(cfg.RateLimit > 0, perMinute, cfg.RateLimit, clientKey, "too many attempts from this address; retry later")
	if err != nil {
		return nil, err
	}
	return &Limiters{Attempts: a, Failures: f}, nil
}

func newLimiter(on bool, r rate.Limit, burst int, key func(string) string, message string) (*Limiter, error) {
	c, err := lru.New[string, *rate.Limiter](maxClients)
	if err != nil {
		return nil, err
	}
	return &Limiter{on: on, rate: r, burst: burst, key: key, buckets: c, refused: apperr.New(apperr.KindRateLimited, "rate_limited", message)}, nil
}

// clientKey is the budget a client address spends: an IPv4 address (an IPv4-mapped IPv6
// one included) on its own, an IPv6 address as its /64.
func clientKey(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return ip
	}
	a = a.Unmap()
	if a.Is4() {
		return a.String()
	}
	p, err := a.Prefix(64)
	if err != nil {
		return ip
	}
	return p.String()
}

func (l *Limiter) bucket(k string) *rate.Limiter {
	k = l.key(k)
	if b, ok := l.buckets.Get(k); ok {
		return b
	}
	b := rate.NewLimiter(l.rate, l.burst)
	if prev, ok, _ := l.buckets.PeekOrAdd(k, b); ok {
		return prev
	}
	return b
}

// Off reports whether limiting is disabled.
func (l *Limiter) Off() bool { return !l.on }

// Take spends one unit of k's budget, or returns the 429 to answer.
func (l *Limiter) Take(k string) error {
	if l.Off() {
		return nil
	}
	r := l.bucket(k).Reserve()
	if d := r.Delay(); d > 0 {
		r.Cancel()
		return l.tooMany(d)
	}
	return nil
}

// Check returns the 429 to answer when k has no budget left, without spending any.
func (l *Limiter) Check(k string) error {
	if l.Off() {
		return nil
	}
	b, ok := l.buckets.Get(l.key(k))
	if !ok || b.Tokens() >= 1 {
		return nil
	}
	return l.tooMany(time.Duration((1 - b.Tokens()) / float64(b.Limit()) * float64(time.Second)))
}

// Fail spends one unit of k's budget after a failure.
func (l *Limiter) Fail(k string) {
	if l.Off() {
		return
	}
	l.bucket(k).Allow()
}

// Middleware spends one unit per request (sign-in, sign-up).
func (l *Limiter) Middleware() fiber.Handler {
	return func(c *fiber.Ctx) error {
		if err := l.Take(httpserver.ClientIP(c)); err != nil {
			return err
		}
		return c.Next()
	}
}

func (l *Limiter) tooMany(wait time.Duration) error {
	secs := int(math.Ceil(wait.Seconds()))
	if secs < 1 {
		secs = 1
	}
	return l.refused.WithHeader("Retry-After", strconv.Itoa(secs))
}
