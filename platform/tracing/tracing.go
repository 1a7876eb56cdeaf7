// Package tracing exports OpenTelemetry traces over OTLP (HTTP or gRPC) when the standard
// OTel environment names an endpoint (OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT; OTEL_EXPORTER_OTLP_PROTOCOL picks grpc or
// http/protobuf, OTEL_SERVICE_NAME and OTEL_TRACES_SAMPLER work as everywhere). Otherwise
// it provides a no-op provider, and the HTTP server and the store install no
// instrumentation at all, so tracing costs nothing when it is off. It must not decide what
// is traced: the HTTP server, the store and the modules do.
package tracing

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
	"go.uber.org/fx"
)

// Module provides the Tracing of the process.
var Module = fx.Module("tracing", fx.Provide(New))

// Tracing is the process's tracer provider and whether it exports anything.
type Tracing struct {
	Provider trace.TracerProvider
	// Propagator reads and writes W3C traceparent headers.
	Propagator propagation.TextMapPropagator
	enabled    bool
}

// Enabled reports whether spans are exported; when false, instrumentation stays out.
func (t *Tracing) Enabled() bool { return t.enabled }

// Tracer returns a tracer of the provider (a no-op one when tracing is off).
func (t *Tracing) Tracer(name string) trace.Tracer { return t.Provider.Tracer(name) }

// Off is tracing switched off, for commands and tests that build a store by hand.
var Off = &Tracing{Provider: noop.NewTracerProvider(), Propagator: propagation.TraceContext{}}

// Configured reports whether the environment names an OTLP endpoint for traces.
func Configured() bool {
	return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// New returns the no-op Tracing when no endpoint is configured, else one exporting in
// batches to it; the exporter is flushed and closed when the app stops.
func New(lc fx.Lifecycle, log *slog.Logger) (*Tracing, error) {
	if !Configured() {
		return Off, nil
	}
	exp, err := exporter()
	if err != nil {
		return nil, err
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(semconv.ServiceName(serviceName())))
	if err != nil {
		return nil, err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	lc.Append(fx.Hook{OnStop: tp.Shutdown})
	log.Info("exporting traces", "protocol", protocol())
	return &Tracing{Provider: tp, Propagator: propagation.TraceContext{}, enabled: true}, nil
}

// exporter reads the rest of its settings (endpoint, headers, TLS, timeout) from the
// standard environment itself.
func exporter() (*otlptrace.Exporter, error) {
	switch p := protocol(); p {
	case "grpc":
		return otlptracegrpc.New(context.Background())
	case "http/protobuf":
		return otlptracehttp.New(context.Background())
	default:
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL: %q is not grpc or http/protobuf", p)
	}
}

func protocol() string {
	for _, name := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if v := os.Getenv(name); v != "" {
			return v
		}
	}
	return "http/protobuf" // the OTLP specification's default
}

func serviceName() string {
	if v := os.Getenv("OTEL_SERVICE_NAME"); v != "" {
		return v
	}
	return "authcore"
}
