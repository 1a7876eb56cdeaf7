package main

import (
	"context"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/authcore/authcore/internal/apptest"
)

// collector is an OTLP receiver on loopback, over HTTP (protobuf) or gRPC.
type collector struct {
	coltracepb.UnimplementedTraceServiceServer
	mu    sync.Mutex
	spans []span
}

type span struct {
	name, scope, traceID string
	attrs                map[string]string
}

func (c *collector) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				attrs := map[string]string{}
				for _, kv := range s.Attributes {
					attrs[kv.Key] = kv.Value.String()
				}
				c.spans = append(c.spans, span{name: s.Name, scope: ss.Scope.GetName(), traceID: hex.EncodeToString(s.TraceId), attrs: attrs})
			}
		}
	}
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	var req coltracepb.ExportTraceServiceRequest
	if r.URL.Path != "/v1/traces" || proto.Unmarshal(b, &req) != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	resp, _ := c.Export(r.Context(), &req)
	out, _ := proto.Marshal(resp)
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func (c *collector) find(match func(span) bool) (span, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.spans {
		if match(s) {
			return s, true
		}
	}
	return span{}, false
}

// startCollector listens on loopback for protocol ("http/protobuf" or "grpc").
func startCollector(t *testing.T, protocol string) (*collector, string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &collector{}
	if protocol == "grpc" {
		srv := grpc.NewServer()
		coltracepb.RegisterTraceServiceServer(srv, c)
		go func() { _ = srv.Serve(ln) }()
		t.Cleanup(srv.Stop)
	} else {
		srv := &http.Server{Handler: c}
		go func() { _ = srv.Serve(ln) }()
		t.Cleanup(func() { _ = srv.Close() })
	}
	return c, "http://" + ln.Addr().String()
}

// With OTEL_EXPORTER_OTLP_ENDPOINT set, a request is a server span named by its route
// template, continuing the caller's traceparent, with spans for its store queries and
// password hashing beneath, over OTLP/HTTP and OTLP/gRPC; its log lines name the trace.
func TestTracesReachACollector(t *testing.T) {
	for _, protocol := range []string{"http/protobuf", "grpc"} {
		t.Run(protocol, func(t *testing.T) {
			apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
				c, endpoint := startCollector(t, protocol)
				t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
				t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", protocol)
				a := apptest.Start(t, st)
				u := a.SignUp(t)
				const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
				h := u.Bearer()
				h["traceparent"] = "00-" + traceID + "-00f067aa0ba902b7-01"
				a.Do(apptest.Req{Path: "/v1/auth-core/session/me", Header: h}).Expect(t, 200, nil)
				if err := a.Stop(); err != nil { // flushes the exporter
					t.Fatal(err)
				}

				me, ok := c.find(func(s span) bool { return s.name == "GET /v1/auth-core/session/me" })
				if !ok || me.traceID != traceID || !strings.Contains(me.attrs["http.route"], "/v1/auth-core/session/me") {
					t.Fatalf("no server span continuing the caller's trace: %+v (%d spans)", me, len(c.spans))
				}
				signup, ok := c.find(func(s span) bool { return s.name == "POST /v1/auth-core/signup" })
				if !ok {
					t.Fatal("no span for sign-up")
				}
				if _, ok := c.find(func(s span) bool { return s.name == "argon2id hash" && s.traceID == signup.traceID }); !ok {
					t.Fatal("no argon2id span under the sign-up")
				}
				if _, ok := c.find(func(s span) bool {
					return s.traceID == signup.traceID && (strings.Contains(s.scope, "otelsql") || strings.Contains(s.scope, "otelpgx"))
				}); !ok {
					t.Fatal("no store span under the sign-up")
				}
				if !a.Logs.Contains(`"trace_id":"` + traceID + `"`) {
					t.Fatal("the request's log line does not name its trace")
				}
			})
		})
	}
}

// Without an endpoint, nothing is exported and no log line carries a trace id.
func TestNoTracesWhenOff(t *testing.T) {
	a := apptest.StartURL(t, "sqlite", "sqlite::memory:")
	h := map[string]string{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}
	a.Do(apptest.Req{Path: "/healthz", Header: h}).Expect(t, 200, nil)
	if a.Logs.Contains("trace_id") {
		t.Fatal("a log line has a trace id with tracing off")
	}
}
