package tracing_test

import (
	"io"
	"log/slog"
	"testing"

	"go.uber.org/fx/fxtest"

	"github.com/authcore/authcore/platform/tracing"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// Without an endpoint tracing is off and costs nothing: the no-op provider.
func TestOffWithoutAnEndpoint(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	tr, err := tracing.New(fxtest.NewLifecycle(t), quiet)
	if err != nil || tr.Enabled() || tr != tracing.Off {
		t.Fatalf("%v %v", tr, err)
	}
}

func TestOnWithAnEndpoint(t *testing.T) {
	for _, protocol := range []string{"", "grpc", "http/protobuf"} {
		t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
		t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", protocol)
		lc := fxtest.NewLifecycle(t)
		tr, err := tracing.New(lc, quiet)
		if err != nil || !tr.Enabled() {
			t.Fatalf("%q: %v %v", protocol, tr, err)
		}
		lc.RequireStart().RequireStop()
	}
}

func TestUnknownProtocolIsAnError(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
	if _, err := tracing.New(fxtest.NewLifecycle(t), quiet); err == nil {
		t.Fatal("accepted http/json")
	}
}
