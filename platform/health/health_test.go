package health_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/authcore/authcore/platform/apptest"
	"github.com/authcore/authcore/platform/config"
)

func TestMain(m *testing.M) { apptest.Main(m) }

func TestProbes(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := apptest.Start(t, st)
		a.Get("/healthz").Expect(t, 200, map[string]any{"status": "ok"})
		a.Get("/readyz").Expect(t, 200, map[string]any{"status": "ready", "checks": map[string]any{"store": "ok", "engine": "ok"}})
	})
}

func TestMetricsOnSeparateListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	a := apptest.StartURL(t, "sqlite", "sqlite::memory:", apptest.WithConfig(func(c *config.Config) { c.MetricsAddr = addr }))
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
