package bearer

import (
	"context"
	"errors"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/ratelimit"
)

// Endpoint is the HTTP side every "who am I" route shares (ai/me, service-badges/me): the
// header rules of seed 4.2, the per-IP failure budget, the 401 bodies with engine, and
// verification counters by result. A module's handler hands Serve its own service's check.
type Endpoint struct {
	failures                  *ratelimit.Limiter
	ok, invalid, unauthorized prometheus.Counter
	// limited, when set, is told of a token the failure budget refused (usage counts).
	limited func(token string)
	// dpop takes the DPoP scheme (RFC 9449 §7.1) besides Bearer.
	dpop bool
}

// AcceptingDPoP has e take "Authorization: DPoP <token>" as well as the seed's Bearer, for
// kinds whose tokens may be bound to a key: a DPoP client library sends that scheme.
func (e *Endpoint) AcceptingDPoP() *Endpoint {
	e.dpop = true
	return e
}

func (e *Endpoint) tokenOf(c *fiber.Ctx) string {
	h := c.Get(fiber.HeaderAuthorization)
	if e.dpop && strings.HasPrefix(h, "DPoP ") {
		return strings.TrimSpace(h[len("DPoP "):])
	}
	return httpserver.BearerToken(h)
}

// CountingLimited has e tell limited of each token the failure budget refuses.
func (e *Endpoint) CountingLimited(limited func(token string)) *Endpoint {
	e.limited = limited
	return e
}

// NewEndpoint returns the endpoint helper for credentials of kind (a metrics label).
func NewEndpoint(k Kit, kind string) *Endpoint {
	return &Endpoint{
		failures:     k.Failures.Failures,
		ok:           k.Metrics.Verifications.WithLabelValues(kind, "ok"),
		invalid:      k.Metrics.Verifications.WithLabelValues(kind, "invalid_token"),
		unauthorized: k.Metrics.Verifications.WithLabelValues(kind, "unauthorized"),
	}
}

// Serve answers a who-am-I request: the per-IP failure budget and the header rules first,
// then me — the module's own service — for the answer of a live credential, or
// ErrInvalid (401 invalid_token, one failure spent), or a store error. The token handed to
// me aliases Fiber's buffers: it must not outlive the call.
func (e *Endpoint) Serve(c *fiber.Ctx, me func(ctx context.Context, token string) ([]byte, error)) error {
	ip := httpserver.ClientIP(c)
	if err := e.failures.Check(ip); err != nil {
		if e.limited != nil {
			if token := e.tokenOf(c); token != "" {
				e.limited(token)
			}
		}
		return err
	}
	token := e.tokenOf(c)
	if token == "" {
		e.unauthorized.Inc()
		e.failures.Fail(ip)
		return notAuthenticated("unauthorized")
	}
	body, err := me(c.UserContext(), token)
	if errors.Is(err, ErrInvalid) {
		e.invalid.Inc()
		e.failures.Fail(ip)
		return notAuthenticated("invalid_token")
	}
	if err != nil {
		return err
	}
	e.ok.Inc()
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Send(body)
}

func notAuthenticated(code string) error {
	return &apperr.Error{Kind: apperr.KindUnauthenticated, Code: code, Fields: map[string]any{"engine": "authcore", "authenticated": false}}
}
