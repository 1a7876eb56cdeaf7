package bearer

import (
	"context"
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/metrics"
	"github.com/authcore/authcore/platform/ratelimit"
)

// Token reads an Authorization header the way seed 4.2 says: it must begin with
// "Bearer " (case-sensitive), and the rest, trimmed, is the token. "" means none.
func Token(header string) string {
	if !strings.HasPrefix(header, "Bearer ") {
		return ""
	}
	return strings.TrimSpace(header[len("Bearer "):])
}

// WhoAmI is a "who am I" endpoint for a bearer secret (ai/me, service-badges/me): the
// header rules of seed 4.2, 401 unauthorized or invalid_token bodies with engine, the
// per-IP failure budget, and verification counters by result.
type WhoAmI struct {
	limits                    *ratelimit.Limiters
	verify                    func(ctx context.Context, token string) (answer []byte, ok bool, err error)
	ok, invalid, unauthorized prometheus.Counter
}

// NewWhoAmI returns the endpoint for credentials of kind (a metrics label). verify
// answers the JSON body of a valid credential.
func NewWhoAmI(kind string, l *ratelimit.Limiters, m *metrics.Credentials,
	verify func(ctx context.Context, token string) ([]byte, bool, error)) *WhoAmI {
	return &WhoAmI{
		limits: l, verify: verify,
		ok:           m.Verifications.WithLabelValues(kind, "ok"),
		invalid:      m.Verifications.WithLabelValues(kind, "invalid_token"),
		unauthorized: m.Verifications.WithLabelValues(kind, "unauthorized"),
	}
}

// Handle is the route handler.
func (w *WhoAmI) Handle(c *fiber.Ctx) error {
	ip := c.IP()
	if err := w.limits.Failures.Check(ip); err != nil {
		return err
	}
	token := Token(c.Get(fiber.HeaderAuthorization))
	if token == "" {
		w.unauthorized.Inc()
		w.limits.Failures.Fail(ip)
		return notAuthenticated("unauthorized")
	}
	answer, ok, err := w.verify(c.UserContext(), token)
	if err != nil {
		return err
	}
	if !ok {
		w.invalid.Inc()
		w.limits.Failures.Fail(ip)
		return notAuthenticated("invalid_token")
	}
	w.ok.Inc()
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Send(answer)
}

func notAuthenticated(code string) error {
	return &apperr.Error{Status: http.StatusUnauthorized, Code: code, Fields: map[string]any{"engine": "authcore", "authenticated": false}}
}
