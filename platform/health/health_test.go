package health_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/authcore/authcore/internal/testkit"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/health"
	"github.com/authcore/authcore/platform/logging"
	"github.com/authcore/authcore/platform/secret"
	"go.uber.org/fx"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// graph is the probes with two readiness checks: the store's and one the test flips.
func graph(cfg config.Config, keys secret.MasterKeys, out logging.Output) fx.Option {
	return fx.Options(testkit.Core(cfg, keys, out), health.Module,
		health.AsCheck(func() health.Check {
			return health.Check{Name: "flag", Check: func(context.Context) error {
				if failing.Load() {
					return errors.New("flag down")
				}
				return nil
			}}
		}))
}

var failing atomic.Bool

func TestProbes(t *testing.T) {
	testkit.ForEachStore(t, func(t *testing.T, st testkit.Store) {
		a := testkit.Start(t, st, graph)
		a.Get("/healthz").Expect(t, 200, map[string]any{"status": "ok"})
		a.Get("/readyz").Expect(t, 200, map[string]any{"status": "ready", "checks": map[string]any{"store": "ok", "flag": "ok"}})
		failing.Store(true)
		defer failing.Store(false)
		a.Get("/readyz").Expect(t, 503, map[string]any{"code": "unavailable", "checks": map[string]any{"store": "ok", "flag": "failing"}})
		// The last /readyz is what alerts read: the failing check is 0, the passing one 1.
		m := string(a.Get("/metrics").Body)
		if !strings.Contains(m, `authcore_readiness{check="flag"} 0`) || !strings.Contains(m, `authcore_readiness{check="store"} 1`) {
			t.Fatalf("readiness gauges wrong:\n%s", m)
		}
		a.Get("/healthz").Expect(t, 200, map[string]any{"status": "ok"})
	})
}

// SPEC §9b: /metrics is on a listener of its own unless AUTHCORE_METRICS_ADDR says public;
// the public port then answers 404 for it. (Port 0 here: tests must not fight over the
// default 127.0.0.1:9090.)
func TestMetricsOnSeparateListener(t *testing.T) {
	a := testkit.StartURL(t, "sqlite", "sqlite::memory:", graph, testkit.WithConfig(func(c *config.Config) { c.MetricsAddr = "127.0.0.1:0" }))
	a.Get("/metrics").Expect(t, 404, map[string]any{"code": "not_found"})
	if !strings.HasPrefix(a.MetricsBase, "http://127.0.0.1:") {
		t.Fatalf("metrics listener %q", a.MetricsBase)
	}
	res, err := http.Get(a.MetricsBase + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 || !strings.Contains(string(b), "authcore_http_requests_total") {
		t.Fatalf("%d %s", res.StatusCode, b)
	}

	public := testkit.StartURL(t, "sqlite", "sqlite::memory:", graph, testkit.WithConfig(func(c *config.Config) { c.MetricsAddr = config.MetricsPublic }))
	if public.MetricsBase != "" {
		t.Fatalf("a metrics listener at %s beside the public port", public.MetricsBase)
	}
	public.Get("/healthz").Expect(t, 200, nil) // a request to count
	if r := public.Get("/metrics"); r.Status != 200 || !strings.Contains(string(r.Body), "authcore_http_requests_total") {
		t.Fatal("no metrics on the public port with AUTHCORE_METRICS_ADDR=public")
	}
}
