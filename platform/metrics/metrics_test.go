package metrics_test

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"

	"github.com/authcore/authcore/platform/metrics"
)

func counter(name string) func() prometheus.Collector {
	return func() prometheus.Collector {
		c := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: "test"})
		c.Inc()
		return c
	}
}

func TestContributedCollectorsAreServed(t *testing.T) {
	var g prometheus.Gatherer
	var creds *metrics.Credentials
	app := fx.New(metrics.Module, metrics.AsCollector(counter("authcore_test_things_total")), fx.Populate(&g, &creds), fx.NopLogger)
	if err := app.Err(); err != nil {
		t.Fatal(err)
	}
	creds.Issued.WithLabelValues("ai_agent", "").Inc()
	rec := httptest.NewRecorder()
	metrics.Handler(g).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{
		"authcore_test_things_total 1", `authcore_credentials_issued_total{kind="ai_agent",product=""} 1`,
		"go_goroutines", "process_",
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

func TestAClashingCollectorIsAnError(t *testing.T) {
	app := fx.New(metrics.Module, metrics.AsCollector(counter("go_goroutines")), fx.NopLogger)
	if err := app.Err(); err == nil || !strings.Contains(err.Error(), "registering") {
		t.Fatalf("err = %v", err)
	}
}

func TestTheGlobalRegistryIsNotUsed(t *testing.T) {
	app := fx.New(metrics.Module, fx.Invoke(func(*metrics.HTTP, *metrics.Credentials) {}), fx.NopLogger)
	if err := app.Err(); err != nil {
		t.Fatal(err)
	}
	fams, _ := prometheus.DefaultGatherer.Gather()
	for _, f := range fams {
		if strings.HasPrefix(f.GetName(), "authcore_") {
			t.Fatalf("%s registered globally", f.GetName())
		}
	}
}
