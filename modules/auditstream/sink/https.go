package sink

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// maxAnswer is how much of a receiver's answer is read, and kept for the stream's
// last error.
const maxAnswer = 4 << 10

// HTTPS posts each batch to one URL as JSON { "events": [ … ] }, signed as Standard
// Webhooks says: webhook-id, webhook-timestamp and webhook-signature ("v1,<base64
// HMAC-SHA256 of id.timestamp.body>" under the stream's whsec_ key). The webhook-id is the
// batch's: its first event's id, a dot, and how many events it holds, so a batch sent
// again whole carries the same id; receivers deduplicate events on their own ids anyway.
// Any 2xx answer means the receiver took the whole batch.
type HTTPS struct {
	url    string
	signer *standardwebhooks.Webhook
	client *http.Client
	now    func() time.Time
}

var _ Sink = (*HTTPS)(nil)

// NewHTTPS is the sink for url, signing with key (the stream's secret without whsec_).
// client carries the outbound rules (platform/outbound) and the timeout.
func NewHTTPS(url string, key []byte, client *http.Client, now func() time.Time) (*HTTPS, error) {
	signer, err := standardwebhooks.NewWebhookRaw(key)
	if err != nil {
		return nil, err
	}
	return &HTTPS{url: url, signer: signer, client: client, now: now}, nil
}

// BatchID is the webhook-id of a batch.
func BatchID(batch []Event) string {
	if len(batch) == 0 {
		return ""
	}
	return batch[0].ID + "." + strconv.Itoa(len(batch))
}

func (h *HTTPS) Send(ctx context.Context, batch []Event) error {
	if len(batch) == 0 {
		return nil
	}
	events := make([]json.RawMessage, len(batch))
	for i, e := range batch {
		events[i] = e.Body
	}
	body, err := json.Marshal(struct {
		Events []json.RawMessage `json:"events"`
	}{events})
	if err != nil {
		return err
	}
	id, ts := BatchID(batch), h.now()
	sig, err := h.signer.Sign(id, ts, body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "authcore-audit-streams")
	req.Header.Set("webhook-id", id)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(ts.Unix(), 10))
	req.Header.Set("webhook-signature", sig)
	res, err := h.client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(res.Body, maxAnswer))
	if res.StatusCode < 200 || res.StatusCode > 299 {
		msg := fmt.Sprintf("answered %d", res.StatusCode)
		if a := strings.TrimSpace(strings.ToValidUTF8(string(answer), "")); a != "" {
			if len(a) > 200 {
				a = strings.ToValidUTF8(a[:200], "") + "…"
			}
			msg += ": " + a
		}
		return errors.New(msg)
	}
	return nil
}

func (h *HTTPS) Close() error { return nil }
