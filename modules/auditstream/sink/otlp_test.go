package sink

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// otlpReceiver is an OTLP/HTTP logs endpoint on loopback that decodes requests with the
// collector's own pdata library. answer decides each reply; nil accepts everything.
type otlpReceiver struct {
	url string

	mu     sync.Mutex
	got    []plog.Logs
	answer func(w http.ResponseWriter, req plogotlp.ExportRequest) bool
}

func newOTLPReceiver(t testing.TB) *otlpReceiver {
	t.Helper()
	r := &otlpReceiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, hr *http.Request) {
		if hr.Method != http.MethodPost || hr.URL.Path != "/v1/logs" || hr.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "not an OTLP/HTTP protobuf logs request", http.StatusBadRequest)
			return
		}
		body, err := io.ReadAll(hr.Body)
		if err != nil {
			return
		}
		req := plogotlp.NewExportRequest()
		if err := req.UnmarshalProto(body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		answer := r.answer
		r.mu.Unlock()
		if answer != nil && answer(w, req) {
			return
		}
		r.mu.Lock()
		r.got = append(r.got, req.Logs())
		r.mu.Unlock()
		out, _ := plogotlp.NewExportResponse().MarshalProto()
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(srv.Close)
	r.url = srv.URL + "/v1/logs"
	return r
}

// statusReply answers as the collector does when it refuses a request: a google.rpc.Status.
func statusReply(w http.ResponseWriter, code int, c codes.Code, msg string) {
	b, _ := proto.Marshal(status.New(c, msg).Proto())
	w.Header().Set("Content-Type", "application/x-protobuf")
	if code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "7")
	}
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

func TestOTLPExportsOneLogRecordPerEvent(t *testing.T) {
	r := newOTLPReceiver(t)
	s := NewOTLP(OTLPConfig{URL: r.url})
	defer s.Close()
	batch := testEvents(7, 3, 0)
	batch[2].Action = "ai_token.create"
	if err := s.Send(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
	if len(r.got) != 1 || r.got[0].ResourceLogs().Len() != 1 {
		t.Fatalf("%d requests, want 1 with one resource", len(r.got))
	}
	rl := r.got[0].ResourceLogs().At(0)
	if v, ok := rl.Resource().Attributes().Get("service.name"); !ok || v.Str() != "authcore" {
		t.Errorf("resource service.name %v", v.AsRaw())
	}
	sl := rl.ScopeLogs().At(0)
	if sl.Scope().Name() != "authcore.audit" {
		t.Errorf("scope %q", sl.Scope().Name())
	}
	if sl.LogRecords().Len() != 3 {
		t.Fatalf("%d records, want 3", sl.LogRecords().Len())
	}
	for i := range 3 {
		lr, e := sl.LogRecords().At(i), batch[i]
		if !lr.Timestamp().AsTime().Equal(e.Time) {
			t.Errorf("record %d time %v, want %v", i, lr.Timestamp().AsTime(), e.Time)
		}
		if lr.ObservedTimestamp() == 0 {
			t.Errorf("record %d has no observed time", i)
		}
		if lr.SeverityNumber() != plog.SeverityNumberInfo || lr.SeverityText() != "INFO" {
			t.Errorf("record %d severity %v %q", i, lr.SeverityNumber(), lr.SeverityText())
		}
		if lr.EventName() != e.Action {
			t.Errorf("record %d event name %q, want %q", i, lr.EventName(), e.Action)
		}
		if lr.Body().Type() != pcommon.ValueTypeStr || lr.Body().Str() != string(e.Body) {
			t.Errorf("record %d body %v", i, lr.Body().AsRaw())
		}
		want := map[string]any{"event.id": e.ID, "authcore.audit.seq": e.Seq, "authcore.audit.hash": e.Hash}
		got := lr.Attributes().AsRaw()
		for k, v := range want {
			if got[k] != v {
				t.Errorf("record %d attribute %s = %v (%T), want %v", i, k, got[k], got[k], v)
			}
		}
	}
}

func TestOTLPFailures(t *testing.T) {
	batch := testEvents(1, 4, 0)
	for _, tc := range []struct {
		name   string
		answer func(w http.ResponseWriter, req plogotlp.ExportRequest) bool
		want   []string
	}{
		{"503 with a status", func(w http.ResponseWriter, _ plogotlp.ExportRequest) bool {
			statusReply(w, http.StatusServiceUnavailable, codes.Unavailable, "queue is full")
			return true
		}, []string{"503", "queue is full", "Retry-After 7"}},
		{"429", func(w http.ResponseWriter, _ plogotlp.ExportRequest) bool {
			statusReply(w, http.StatusTooManyRequests, codes.ResourceExhausted, "slow down")
			return true
		}, []string{"429", "slow down"}},
		{"400 in plain text", func(w http.ResponseWriter, _ plogotlp.ExportRequest) bool {
			http.Error(w, "bad things", http.StatusBadRequest)
			return true
		}, []string{"400", "bad things"}},
		{"partial success", func(w http.ResponseWriter, req plogotlp.ExportRequest) bool {
			resp := plogotlp.NewExportResponse()
			resp.PartialSuccess().SetRejectedLogRecords(1)
			resp.PartialSuccess().SetErrorMessage("record too large")
			b, _ := resp.MarshalProto()
			w.Header().Set("Content-Type", "application/x-protobuf")
			_, _ = w.Write(b)
			return true
		}, []string{"rejected 1 of 4", "record too large"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newOTLPReceiver(t)
			r.answer = tc.answer
			s := NewOTLP(OTLPConfig{URL: r.url})
			err := s.Send(context.Background(), batch)
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			// Once the collector takes it, the same batch goes through whole.
			r.mu.Lock()
			r.answer = nil
			r.mu.Unlock()
			if err := s.Send(context.Background(), batch); err != nil {
				t.Fatal(err)
			}
			if n := r.got[0].LogRecordCount(); n != 4 {
				t.Fatalf("%d records after the resend, want 4", n)
			}
		})
	}
}

func TestOTLPCollectorDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	s := NewOTLP(OTLPConfig{URL: "http://" + addr + "/v1/logs", HTTPClient: &http.Client{Timeout: 10 * time.Second}})
	if err := s.Send(context.Background(), testEvents(1, 1, 0)); err == nil || !strings.Contains(err.Error(), "connect") {
		t.Fatalf("collector down: %v", err)
	}
}

// BenchmarkOTLPSend: events per second an OTLP sink exports to a loopback receiver that
// decodes every request with pdata, in batches of 500.
func BenchmarkOTLPSend(b *testing.B) {
	r := newOTLPReceiver(b)
	r.answer = func(w http.ResponseWriter, _ plogotlp.ExportRequest) bool {
		out, _ := plogotlp.NewExportResponse().MarshalProto()
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
		return true
	}
	s := NewOTLP(OTLPConfig{URL: r.url})
	batch := testEvents(1, 500, 256)
	b.ResetTimer()
	for range b.N {
		if err := s.Send(context.Background(), batch); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(batch))/b.Elapsed().Seconds(), "events/s")
}
