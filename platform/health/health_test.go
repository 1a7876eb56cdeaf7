package health_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
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

func TestMetricsOnSeparateListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	a := testkit.StartURL(t, "sqlite", "sqlite::memory:", graph, testkit.WithConfig(func(c *config.Config) { c.MetricsAddr = addr }))
	a.Get("/metrics").Expect(t, 404, map[string]any{"code": "not_found"})
	res, err := http.Get(fmt.Sprintf("http://%s/metrics", addr))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 || !strings.Contains(string(b), "authcore_http_requests_total") {
		t.Fatalf("%d %s", res.StatusCode, b)
	}
}
