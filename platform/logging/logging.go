// Package logging provides the process's structured JSON logger. A request id put into a
// context with WithRequestID appears on every line logged with that context. Nothing here
// may log a secret; callers pass only values that are safe to keep.
package logging

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"

	"go.opentelemetry.io/otel/trace"
	"go.uber.org/fx"
	"go.uber.org/fx/fxevent"

	"github.com/authcore/authcore/platform/config"
)

// Output is where log lines go; cmd supplies stderr, tests a buffer they can scan.
type Output struct{ io.Writer }

// Module provides *slog.Logger.
var Module = fx.Module("logging", fx.Provide(New))

// FxLogger routes fx's own events through the logger. fx.WithLogger only takes effect at
// the top level of an app, so the composition root adds it beside Module.
var FxLogger = fx.WithLogger(func(l *slog.Logger) fxevent.Logger {
	// fx's lifecycle chatter is useful when debugging wiring, noise otherwise.
	fl := &fxevent.SlogLogger{Logger: l}
	fl.UseLogLevel(slog.LevelDebug)
	return fl
})

// New builds the JSON logger at the configured level.
func New(cfg config.Config, out Output) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(cfg.LogLevel)); err != nil {
		return nil, fmt.Errorf("AUTHCORE_LOG_LEVEL: %v", err)
	}
	w := out.Writer
	if w == nil {
		w = os.Stderr
	}
	h := slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level})
	return slog.New(requestIDHandler{h}), nil
}

type ctxKey struct{}

// WithRequestID returns ctx carrying the request id for log lines.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, ctxKey{}, id)
}

// RequestID returns the request id in ctx, or "".
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(ctxKey{}).(string)
	return id
}

// requestIDHandler adds request_id, and trace_id and span_id when tracing is on, to every
// record logged with a request's context.
type requestIDHandler struct{ slog.Handler }

func (h requestIDHandler) Handle(ctx context.Context, r slog.Record) error {
	if id := RequestID(ctx); id != "" {
		r.AddAttrs(slog.String("request_id", id))
	}
	// With tracing on, a line names the trace and span it belongs to.
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	return h.Handler.Handle(ctx, r)
}

func (h requestIDHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return requestIDHandler{h.Handler.WithAttrs(attrs)}
}

func (h requestIDHandler) WithGroup(name string) slog.Handler {
	return requestIDHandler{h.Handler.WithGroup(name)}
}
