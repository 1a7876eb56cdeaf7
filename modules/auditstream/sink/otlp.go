package sink

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	statuspb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/proto"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	logspb "go.opentelemetry.io/proto/otlp/logs/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
)

// OTLPConfig names an OpenTelemetry collector's logs endpoint (SPEC §28).
type OTLPConfig struct {
	// URL is the full logs URL, …/v1/logs.
	URL string
	// HTTPClient carries the stream's outbound rules; nil uses http.DefaultClient.
	HTTPClient *http.Client
}

// The names a receiver finds the event's identity under. event.id has no semantic
// convention of its own yet; the chain's fields are authcore's, so they carry its name.
const (
	otlpAttrEventID = "event.id"
	otlpAttrSeq     = "authcore.audit.seq"
	otlpAttrHash    = "authcore.audit.hash"
	otlpScope       = "authcore.audit"
	// An error body is read this far: enough for any collector's message.
	otlpErrorBodyMax = 64 << 10
)

// OTLP exports each batch as one OTLP/HTTP logs request in binary protobuf.
type OTLP struct {
	url    string
	client *http.Client
	now    func() time.Time
}

var _ Sink = (*OTLP)(nil)

// NewOTLP returns an OTLP/HTTP logs sink.
func NewOTLP(c OTLPConfig) Sink {
	client := c.HTTPClient
	if client == nil {
		client = http.DefaultClient
	}
	return &OTLP{url: c.URL, client: client, now: time.Now}
}

// Send posts the batch as one log record per event. Any answer but a 2xx that accepted
// every record is an error, a partial success included: OTLP says rejected records are
// not to be retried, but the stream cannot tell which of them were, so it sends the
// batch again and the collector's pipeline deduplicates on event.id.
func (o *OTLP) Send(ctx context.Context, batch []Event) error {
	if len(batch) == 0 {
		return nil
	}
	body, err := proto.Marshal(otlpRequest(batch, o.now()))
	if err != nil {
		return fmt.Errorf("otlp: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("otlp: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	resp, err := o.client.Do(req)
	if err != nil {
		return fmt.Errorf("otlp: %w", err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, otlpErrorBodyMax))
	if err != nil && resp.StatusCode/100 == 2 {
		return fmt.Errorf("otlp: reading the answer: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		msg := ""
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/x-protobuf") {
			var st statuspb.Status
			if proto.Unmarshal(answer, &st) == nil {
				msg = st.GetMessage()
			}
		}
		if msg == "" {
			msg = strings.TrimSpace(string(answer))
			if len(msg) > 200 {
				msg = msg[:200] + "…"
			}
		}
		if ra := resp.Header.Get("Retry-After"); ra != "" {
			msg += " (Retry-After " + ra + ")"
		}
		return fmt.Errorf("otlp: %s answered %d: %s", o.url, resp.StatusCode, msg)
	}
	var out collogspb.ExportLogsServiceResponse
	if len(answer) > 0 && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/x-protobuf") {
		if err := proto.Unmarshal(answer, &out); err != nil {
			return fmt.Errorf("otlp: %s answered %d with an unreadable body: %w", o.url, resp.StatusCode, err)
		}
	}
	if ps := out.GetPartialSuccess(); ps.GetRejectedLogRecords() > 0 {
		return fmt.Errorf("otlp: %s rejected %d of %d log records: %s", o.url, ps.GetRejectedLogRecords(), len(batch), ps.GetErrorMessage())
	}
	return nil
}

func otlpRequest(batch []Event, observed time.Time) *collogspb.ExportLogsServiceRequest {
	records := make([]*logspb.LogRecord, len(batch))
	for i := range batch {
		e := &batch[i]
		records[i] = &logspb.LogRecord{
			TimeUnixNano:         otlpTime(e.Time),
			ObservedTimeUnixNano: otlpTime(observed),
			SeverityNumber:       logspb.SeverityNumber_SEVERITY_NUMBER_INFO,
			SeverityText:         "INFO",
			EventName:            e.Action,
			Body:                 &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: string(e.Body)}},
			Attributes: []*commonpb.KeyValue{
				otlpString(otlpAttrEventID, e.ID),
				{Key: otlpAttrSeq, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: e.Seq}}},
				otlpString(otlpAttrHash, e.Hash),
			},
		}
	}
	return &collogspb.ExportLogsServiceRequest{ResourceLogs: []*logspb.ResourceLogs{{
		Resource:  &resourcepb.Resource{Attributes: []*commonpb.KeyValue{otlpString("service.name", "authcore")}},
		ScopeLogs: []*logspb.ScopeLogs{{Scope: &commonpb.InstrumentationScope{Name: otlpScope}, LogRecords: records}},
	}}}
}

func otlpString(k, v string) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}}
}

// otlpTime is 0, OTLP's "unknown", for a zero time.
func otlpTime(t time.Time) uint64 {
	if t.IsZero() || t.Before(time.Unix(0, 0)) {
		return 0
	}
	return uint64(t.UnixNano())
}

// Close holds nothing open: idle connections belong to the HTTP client.
func (o *OTLP) Close() error { return nil }
