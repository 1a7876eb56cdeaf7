package bearer

import (
	"errors"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/ratelimit"
)

// Endpoint is the HTTP side every "who am I" route shares (ai/me, service-badges/me): the
// header rules of seed 4.2, the per-IP failure budget, the 401 bodies with engine, and
// verification counters by result. A module's handler reads the token with Token, asks its
// own service, and answers with Answer.
type Endpoint struct {
	failures                  *ratelimit.Limiter
	ok, invalid, unauthorized prometheus.Counter
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

// Token returns the request's bearer token, or the error to answer: 429 for a client out of
// failures, 401 unauthorized for a missing or malformed header. The token aliases Fiber's
// buffers: use it within the handler only.
func (e *Endpoint) Token(c *fiber.Ctx) (string, error) {
	ip := c.IP()
	if err := e.failures.Check(ip); err != nil {
		return "", err
	}
	token := httpserver.BearerToken(c.Get(fiber.HeaderAuthorization))
	if token == "" {
		e.unauthorized.Inc()
		e.failures.Fail(ip)
		return "", notAuthenticated("unauthorized")
	}
	return token, nil
}

// Answer sends body, the pre-encoded answer of a verified credential; or, when err is
// ErrInvalid, counts the failure and answers 401 invalid_token; or returns err.
func (e *Endpoint) Answer(c *fiber.Ctx, body []byte, err error) error {
	if errors.Is(err, ErrInvalid) {
		e.invalid.Inc()
		e.failures.Fail(c.IP())
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
