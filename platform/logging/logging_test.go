package logging

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/authcore/authcore/platform/config"
)

func lines(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not a JSON line: %q", l)
		}
		out = append(out, m)
	}
	return out
}

// Lines are JSON at the configured level; a request's context adds its id, and a span's
// its trace and span ids, through With and WithGroup too.
func TestLogger(t *testing.T) {
	var buf bytes.Buffer
	l, err := New(config.Config{LogLevel: "info"}, Output{Writer: &buf})
	if err != nil {
		t.Fatal(err)
	}
	ctx := WithRequestID(context.Background(), "req-1")
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled})
	traced := trace.ContextWithSpanContext(ctx, sc)

	l.DebugContext(ctx, "hidden")
	l.InfoContext(context.Background(), "plain")
	l.With("module", "m").InfoContext(ctx, "with id")
	l.WithGroup("g").InfoContext(traced, "traced", "k", "v")
	got := lines(t, &buf)
	if len(got) != 3 {
		t.Fatalf("%d lines (debug must be dropped at info): %s", len(got), buf.String())
	}
	if got[0]["msg"] != "plain" || got[0]["request_id"] != nil {
		t.Fatalf("%v", got[0])
	}
	if got[1]["request_id"] != "req-1" || got[1]["module"] != "m" {
		t.Fatalf("%v", got[1])
	}
	// Under WithGroup the ids are the group's attributes, as slog nests whatever a
	// handler adds after the group opened.
	g, _ := got[2]["g"].(map[string]any)
	if g["trace_id"] != sc.TraceID().String() || g["span_id"] != sc.SpanID().String() || g["request_id"] != "req-1" || g["k"] != "v" {
		t.Fatalf("%v", got[2])
	}
	if RequestID(context.Background()) != "" || RequestID(ctx) != "req-1" {
		t.Fatal("RequestID")
	}
}

func TestBadLevelNamesTheSetting(t *testing.T) {
	if _, err := New(config.Config{LogLevel: "loud"}, Output{}); err == nil || !strings.Contains(err.Error(), "AUTHCORE_LOG_LEVEL") {
		t.Fatalf("%v", err)
	}
}
