package auditstream_test

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"go.uber.org/fx"

	"github.com/authcore/authcore/ent/auditevent"
	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/modules/auditstream"
	"github.com/authcore/authcore/platform/audit/chainer"
	"github.com/authcore/authcore/platform/config"
)

func TestMain(m *testing.M) { apptest.Main(m) }

// fast makes the chainer and the worker look often; the request timeout stays generous
// for a loaded CI machine.
var fast = apptest.WithFx(
	fx.Decorate(func() auditstream.Timing {
		return auditstream.Timing{RequestTimeout: 5 * time.Second, Lease: 30 * time.Second, PollEvery: 20 * time.Millisecond}
	}),
	fx.Decorate(func() chainer.Timing { return chainer.Timing{Every: 20 * time.Millisecond} }),
)

// event is one event as a receiver got it (the native format).
type event struct {
	ID        string         `json:"id"`
	ProjectID string         `json:"projectId"`
	Action    string         `json:"action"`
	ActorID   *string        `json:"actorId"`
	Metadata  map[string]any `json:"metadata"`
	CreatedAt time.Time      `json:"createdAt"`
	Seq       int64          `json:"seq"`
	Hash      string         `json:"hash"`
}

// receiver is an HTTPS endpoint on loopback (its own certificate, which the app trusts
// through AUTHCORE_OUTBOUND_CA_FILE) that verifies every batch's Standard Webhooks
// signature with the library and keeps what it took.
type receiver struct {
	*httptest.Server
	mu      sync.Mutex
	secret  string
	up      bool
	took    []event
	batches []string // webhook-ids of the batches taken
	refused int      // requests answered 503 while down
	forged  []string // why a signature was refused
	now     func() time.Time
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{up: true}
	r.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		defer r.mu.Unlock()
		wh, err := standardwebhooks.NewWebhook(r.secret)
		if err == nil {
			err = r.verify(wh, body, req.Header)
		}
		if err != nil {
			r.forged = append(r.forged, err.Error())
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		if !r.up {
			r.refused++
			http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
			return
		}
		var b struct{ Events []event }
		if err := json.Unmarshal(body, &b); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.took = append(r.took, b.Events...)
		r.batches = append(r.batches, req.Header.Get("webhook-id"))
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(r.Close)
	return r
}

// verify checks the signature with the library. The library holds the timestamp to the
// real clock (±5 min); once a test moved the app's clock, the timestamp is held to that
// clock instead, by hand, and the signature checked by the library.
func (r *receiver) verify(wh *standardwebhooks.Webhook, body []byte, h http.Header) error {
	now := time.Now()
	if r.now != nil {
		now = r.now()
	}
	if d := time.Since(now); d > -time.Minute && d < time.Minute {
		return wh.Verify(body, h)
	}
	ts, err := strconv.ParseInt(h.Get("webhook-timestamp"), 10, 64)
	if err != nil || now.Sub(time.Unix(ts, 0)).Abs() > 5*time.Minute {
		return fmt.Errorf("timestamp %q is not the app's time %v", h.Get("webhook-timestamp"), now)
	}
	return wh.VerifyIgnoringTimestamp(body, h)
}

func (r *receiver) setSecret(s string) { r.mu.Lock(); r.secret = s; r.mu.Unlock() }
func (r *receiver) setUp(up bool)      { r.mu.Lock(); r.up = up; r.mu.Unlock() }

func (r *receiver) events() []event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]event(nil), r.took...)
}

func (r *receiver) refusals() int { r.mu.Lock(); defer r.mu.Unlock(); return r.refused }

// trusting makes the app trust the receivers' certificates and reach loopback.
func trusting(t *testing.T, rs ...*receiver) apptest.Option {
	path := filepath.Join(t.TempDir(), "ca.pem")
	var b []byte
	for _, r := range rs {
		b = append(b, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: r.Certificate().Raw})...)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return apptest.WithConfig(func(c *config.Config) { c.OutboundCAFile = path; c.WebhookAllowHTTP = true })
}

// waitFor polls cond for up to 15 s (CI runs these beside browser tests, under -race).
func waitFor(t *testing.T, what string, cond func() bool, explain ...func() string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			for _, e := range explain {
				t.Log(e())
			}
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

type world struct {
	a     *apptest.App
	admin *apptest.Session
	prj   string
}

func newWorld(t *testing.T, st apptest.Store, opts ...apptest.Option) *world {
	a := apptest.Start(t, st, append([]apptest.Option{fast}, opts...)...)
	w := &world{a: a, admin: a.SignUp(t)}
	w.prj = a.CreateProject(t, w.admin)
	w.settle(t)
	return w
}

func (w *world) streams() string { return "/v1/projects/" + w.prj + "/audit-streams" }

func (w *world) post(path string, body any) *apptest.Response {
	return w.a.Do(apptest.Req{Method: http.MethodPost, Path: path, Body: body, Header: w.admin.Bearer()})
}

func (w *world) get(t *testing.T, path string) map[string]any {
	return w.a.Do(apptest.Req{Path: path, Header: w.admin.Bearer()}).Expect(t, 200, nil)
}

// addHTTPS adds an https stream to r and hands r its secret.
func (w *world) addHTTPS(t *testing.T, r *receiver, extra map[string]any) string {
	body := map[string]any{"type": "https", "url": r.URL}
	for k, v := range extra {
		body[k] = v
	}
	got := w.post(w.streams(), body).Expect(t, 201, map[string]any{"type": "https", "url": r.URL, "status": "active"})
	r.setSecret(got["secret"].(string))
	r.mu.Lock()
	r.now = w.a.Clock.Now
	r.mu.Unlock()
	return got["id"].(string)
}

// settle waits until every event of the project is chained.
func (w *world) settle(t *testing.T) {
	t.Helper()
	waitFor(t, "the project's events chained", func() bool {
		n, err := w.a.Ent.AuditEvent.Query().Where(auditevent.ProjectID(w.prj), auditevent.ChainSeqIsNil()).Count(context.Background())
		return err == nil && n == 0
	})
}

// mint makes an agent token (one ai_token.create event) and returns its path.
func (w *world) mint(t *testing.T, name string) string {
	got := w.post("/v1/auth-core/projects/"+w.prj+"/ai/agents", map[string]any{"agentName": name}).Expect(t, 200, nil)
	return "/v1/auth-core/projects/" + w.prj + "/ai/agents/" + got["agent"].(map[string]any)["id"].(string)
}

func (w *world) revoke(t *testing.T, agent string) {
	w.a.Do(apptest.Req{Method: http.MethodDelete, Path: agent, Header: w.admin.Bearer()}).Expect(t, 200, nil)
}

// trail is the project's audit events in chain order, as the store holds them.
func (w *world) trail(t *testing.T) []string {
	w.settle(t)
	evs, err := w.a.Ent.AuditEvent.Query().Where(auditevent.ProjectID(w.prj)).Order(auditevent.ByChainSeq()).All(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(evs))
	for i, e := range evs {
		ids[i] = e.ID
	}
	return ids
}

func ids(evs []event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.ID
	}
	return out
}

// unique is evs deduplicated on their ids, as a receiver would, first copy kept.
func unique(evs []event) []event {
	seen := map[string]bool{}
	var out []event
	for _, e := range evs {
		if !seen[e.ID] {
			seen[e.ID] = true
			out = append(out, e)
		}
	}
	return out
}

// advance moves the app's clock and signs the admin in again (the session expired).
func (w *world) advance(t *testing.T, d time.Duration) {
	t.Helper()
	w.a.Clock.Advance(d)
	got := w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signin",
		Body: map[string]any{"email": w.admin.Email, "password": w.admin.Password}}).Expect(t, 200, nil)
	w.admin.AccessToken = got["session"].(map[string]any)["accessToken"].(string)
}
