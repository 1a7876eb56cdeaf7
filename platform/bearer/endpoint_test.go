package bearer_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
	"go.uber.org/fx"

	"github.com/authcore/authcore/internal/testkit"
	"github.com/authcore/authcore/platform/bearer"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/invalidation"
	"github.com/authcore/authcore/platform/logging"
	"github.com/authcore/authcore/platform/ratelimit"
	"github.com/authcore/authcore/platform/secret"
)

// The who-am-I route as a module builds it: Serve with its own check.
func whoAmIRoutes(k bearer.Kit) []httpserver.Route {
	me := bearer.NewEndpoint(k, "test_kind")
	h := func(c *fiber.Ctx) error {
		return me.Serve(c, func(_ context.Context, token string) ([]byte, error) {
			if token != "the-good-one" {
				return nil, bearer.ErrInvalid
			}
			return []byte(`{"authenticated":true}`), nil
		})
	}
	fail := func(c *fiber.Ctx) error {
		return me.Serve(c, func(context.Context, string) ([]byte, error) { return nil, errors.New("store down") })
	}
	return []httpserver.Route{
		{Method: http.MethodGet, Path: "/test/me", Handlers: []fiber.Handler{h}},
		{Method: http.MethodGet, Path: "/test/failing", Handlers: []fiber.Handler{fail}},
	}
}

func TestEndpoint(t *testing.T) {
	graph := func(cfg config.Config, keys secret.MasterKeys, out logging.Output) fx.Option {
		return fx.Options(testkit.Core(cfg, keys, out), ratelimitAndBus(), httpserver.AsRoutes(whoAmIRoutes))
	}
	a := testkit.StartURL(t, "sqlite", "sqlite::memory:", graph, testkit.WithConfig(func(c *config.Config) { c.RateLimit = 4 }))
	unauth := map[string]any{"engine": "authcore", "authenticated": false, "code": "unauthorized"}
	invalid := map[string]any{"engine": "authcore", "authenticated": false, "code": "invalid_token"}

	a.Get("/test/me", "Authorization", "Bearer the-good-one").Expect(t, 200, map[string]any{"authenticated": true})
	// A store failure is the store's error, not a failed verification: it spends nothing.
	a.Get("/test/failing", "Authorization", "Bearer x").Expect(t, 500, map[string]any{"code": "internal_error"})
	a.Get("/test/me").Expect(t, 401, unauth)
	a.Get("/test/me", "Authorization", "bearer the-good-one").Expect(t, 401, unauth)
	a.Get("/test/me", "Authorization", "Bearer    ").Expect(t, 401, unauth)
	a.Get("/test/me", "Authorization", "Bearer wrong").Expect(t, 401, invalid)
	// Four failures spent the budget: the next call from this address is refused first.
	r := a.Get("/test/me", "Authorization", "Bearer the-good-one")
	r.Expect(t, 429, map[string]any{"code": "rate_limited"})
	if r.Header.Get("Retry-After") == "" {
		t.Fatal("no Retry-After")
	}
	m := string(a.Get("/metrics").Body)
	for _, want := range []string{
		`authcore_verifications_total{kind="test_kind",result="ok"} 1`,
		`authcore_verifications_total{kind="test_kind",result="unauthorized"} 3`,
		`authcore_verifications_total{kind="test_kind",result="invalid_token"} 1`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

func ratelimitAndBus() fx.Option {
	return fx.Options(ratelimit.Module, bearer.Module, invalidation.Module)
}
