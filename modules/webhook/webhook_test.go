package webhook_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"go.uber.org/fx"

	"github.com/authcore/authcore/ent/event"
	"github.com/authcore/authcore/ent/webhookdelivery"
	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/internal/testkit"
	"github.com/authcore/authcore/modules/webhook"
	"github.com/authcore/authcore/platform/config"
)

func TestMain(m *testing.M) { apptest.Main(m) }

// fast makes the worker poll often. Its request timeout stays generous: a loaded CI
// machine must not turn a slow answer into an extra retry the test did not expect.
var fast = timing(5 * time.Second)

func timing(requestTimeout time.Duration) apptest.Option {
	return apptest.WithFx(fx.Decorate(func() webhook.Timing {
		return webhook.Timing{RequestTimeout: requestTimeout, Lease: 30 * time.Second, PollEvery: 20 * time.Millisecond}
	}))
}

var allowHTTP = apptest.WithConfig(func(c *config.Config) { c.WebhookAllowHTTP = true })

// received is one request a receiver got.
type received struct {
	path   string
	header http.Header
	body   []byte
}

// receiver is a local webhook endpoint whose answers the test decides.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	got    []received
	answer func(n int) int // status for the n-th request (from 1); 0: hang until released
	hang   chan struct{}
}

func newReceiver(t *testing.T, answer func(n int) int) *receiver {
	r := &receiver{answer: answer, hang: make(chan struct{})}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, received{path: req.URL.Path, header: req.Header.Clone(), body: b})
		n := len(r.got)
		r.mu.Unlock()
		status := 204
		if r.answer != nil {
			status = r.answer(n)
		}
		if status == 0 {
			select {
			case <-r.hang:
			case <-req.Context().Done():
			}
			return
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(func() { close(r.hang); r.Close() })
	return r
}

func (r *receiver) requests() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

// waitFor polls cond for up to 5 s.
// The deadline is generous: CI runs these beside browser tests under the race detector,
// and once took over 5 s to count a delivery.
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
	a := apptest.Start(t, st, append([]apptest.Option{fast, allowHTTP}, opts...)...)
	w := &world{a: a, admin: a.SignUp(t)}
	w.prj = a.CreateProject(t, w.admin)
	return w
}

func (w *world) hooks() string { return "/v1/projects/" + w.prj + "/webhooks" }

func (w *world) register(t *testing.T, url string, events any) (id, secret string) {
	body := map[string]any{"url": url}
	if events != nil {
		body["events"] = events
	}
	got := w.a.Do(apptest.Req{Method: http.MethodPost, Path: w.hooks(), Body: body, Header: w.admin.Bearer()}).Expect(t, 201, map[string]any{"url": url})
	return got["id"].(string), got["secret"].(string)
}

// mint makes an agent token: one ai_token.create event.
func (w *world) mint(t *testing.T, name string) {
	w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/projects/" + w.prj + "/ai/agents",
		Body: map[string]any{"agentName": name}, Header: w.admin.Bearer()}).Expect(t, 200, nil)
}

func (w *world) deliveries(t *testing.T, id string) []any {
	return w.a.Do(apptest.Req{Path: w.hooks() + "/" + id + "/deliveries", Header: w.admin.Bearer()}).Expect(t, 200, nil)["deliveries"].([]any)
}

// verifyByHand checks a Standard Webhooks signature without the library the server
// signs with: base64(HMAC-SHA256(key, id.timestamp.body)) among the v1 signatures.
func verifyByHand(t *testing.T, secret string, r received) {
	t.Helper()
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil || len(key) < 24 {
		t.Fatalf("secret %q is not whsec_ + base64 of a key", secret)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(r.header.Get("webhook-id") + "." + r.header.Get("webhook-timestamp") + "." + string(r.body)))
	want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	for _, sig := range strings.Fields(r.header.Get("webhook-signature")) {
		if hmac.Equal([]byte(sig), []byte(want)) {
			return
		}
	}
	t.Fatalf("signature %q, want %q", r.header.Get("webhook-signature"), want)
}

func TestRegister(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		rcv := newReceiver(t, nil)
		post := func(body any) *apptest.Response {
			return w.a.Do(apptest.Req{Method: http.MethodPost, Path: w.hooks(), Body: body, Header: w.admin.Bearer()})
		}
		t.Run("201 with a whsec_ secret shown once", func(t *testing.T) {
			id, secret := w.register(t, rcv.URL, []string{"ai_token.create"})
			if !strings.HasPrefix(id, "whk_") || !strings.HasPrefix(secret, "whsec_") {
				t.Fatalf("%s %s", id, secret)
			}
			list := w.a.Do(apptest.Req{Path: w.hooks(), Header: w.admin.Bearer()}).Expect(t, 200, nil)["webhooks"].([]any)
			if len(list) != 1 || list[0].(map[string]any)["secret"] != nil || list[0].(map[string]any)["events"].([]any)[0] != "ai_token.create" {
				t.Fatalf("list %v", list)
			}
			key := strings.TrimPrefix(secret, "whsec_")
			if db := w.a.DumpDB(t); strings.Contains(db, key) || strings.Contains(w.a.Logs.String(), key) {
				t.Fatal("the webhook secret is stored or logged in clear")
			}
			w.a.Do(apptest.Req{Method: http.MethodDelete, Path: w.hooks() + "/" + id, Header: w.admin.Bearer()}).Expect(t, 200, map[string]any{"ok": true, "webhookId": id})
			w.a.Do(apptest.Req{Method: http.MethodDelete, Path: w.hooks() + "/" + id, Header: w.admin.Bearer()}).Expect(t, 404, map[string]any{"code": "not_found"})
		})
		t.Run("bad bodies are validation_failed and register nothing", func(t *testing.T) {
			for _, body := range []any{nil, "[]", "{", map[string]any{}, map[string]any{"url": 5}, map[string]any{"url": "not a url"},
				map[string]any{"url": rcv.URL, "events": "ai_token.create"}, map[string]any{"url": rcv.URL, "events": []string{"nope"}},
				map[string]any{"url": "ftp://example.com/x"}, map[string]any{"url": "http://user:pw@127.0.0.1/"},
			} {
				post(body).Expect(t, 400, map[string]any{"code": "validation_failed"})
			}
			if n := len(w.a.Do(apptest.Req{Path: w.hooks(), Header: w.admin.Bearer()}).Expect(t, 200, nil)["webhooks"].([]any)); n != 0 {
				t.Fatalf("%d webhooks after refused bodies", n)
			}
		})
		t.Run("link-local and metadata addresses: refused even in development", func(t *testing.T) {
			for _, u := range []string{"http://169.254.169.254/latest/meta-data", "https://169.254.1.1/", "http://[fe80::1]/", "http://[fd00:ec2::254]/",
				"http://100.100.100.200/", "http://0.0.0.0/", "http://[::ffff:169.254.169.254]/"} {
				r := post(map[string]any{"url": u}).Expect(t, 400, map[string]any{"code": "validation_failed"})
				if r["issues"].([]any)[0].(map[string]any)["field"] != "url" {
					t.Fatalf("%s: %v", u, r)
				}
			}
		})
		t.Run("only project admins", func(t *testing.T) {
			other := w.a.SignUp(t)
			w.a.Do(apptest.Req{Method: http.MethodPost, Path: w.hooks(), Body: map[string]any{"url": rcv.URL}, Header: other.Bearer()}).Expect(t, 403, nil)
			w.a.Do(apptest.Req{Path: w.hooks(), Header: other.Bearer()}).Expect(t, 403, nil)
		})
	})
}

// Without AUTHCORE_WEBHOOK_ALLOW_HTTP: https only, and never to loopback or private
// addresses, by literal or by name.
func TestProductionAddressRules(t *testing.T) {
	a := apptest.Start(t, apptest.Stores(t)[0])
	admin := a.SignUp(t)
	prj := a.CreateProject(t, admin)
	for _, u := range []string{"http://example.com/hook", "https://127.0.0.1/", "https://10.1.2.3/", "https://192.168.0.1/", "https://[::1]/",
		"https://localhost/", "https://100.64.0.1/", "https://169.254.169.254/"} {
		a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + prj + "/webhooks", Body: map[string]any{"url": u}, Header: admin.Bearer()}).
			Expect(t, 400, map[string]any{"code": "validation_failed"})
	}
	a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + prj + "/webhooks", Body: map[string]any{"url": "https://93.184.215.14/hook"}, Header: admin.Bearer()}).
		Expect(t, 201, nil)
}

// SPEC §9a: 0.0.0.0/8 and IPv6 forms that embed a refused IPv4 address (IPv4-compatible,
// IPv4-mapped, NAT64, 6to4) are refused, and so are ports other than 80, 443 and 1024+;
// the same forms of a public address, and the allowed ports, pass.
func TestEmbeddedAddressesAndPorts(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := apptest.Start(t, st)
		admin := a.SignUp(t)
		prj := a.CreateProject(t, admin)
		post := func(u string) *apptest.Response {
			return a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + prj + "/webhooks", Body: map[string]any{"url": u}, Header: admin.Bearer()})
		}
		for _, u := range []string{
			"https://0.1.2.3/", "https://0.0.0.0/",
			"https://[::127.0.0.1]/", "https://[::a9fe:a9fe]/", "https://[::ffff:10.0.0.1]/", // IPv4-compatible, mapped
			"https://[64:ff9b::a9fe:a9fe]/", "https://[64:ff9b::7f00:1]/", "https://[64:ff9b:1::a00:1]/", // NAT64
			"https://[2002:a9fe:a9fe::1]/", "https://[2002:7f00:1::]/", "https://[2002:c0a8:0101::1]/", // 6to4
			"https://93.184.215.14:22/", "https://93.184.215.14:25/", "https://93.184.215.14:1023/", "https://93.184.215.14:0/",
			"https://93.184.215.14:99999/",
		} {
			r := post(u)
			r.Expect(t, 400, map[string]any{"code": "validation_failed"})
		}
		for _, u := range []string{"https://[64:ff9b::5db8:d70e]/", "https://[2002:5db8:d70e::1]/", "https://93.184.215.14:443/",
			"https://93.184.215.14:8443/", "https://93.184.215.14:80/", "https://93.184.215.14:1024/"} {
			post(u).Expect(t, 201, nil)
		}
	})
}

func TestDelivery(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		rcv := newReceiver(t, nil)
		id, secret := w.register(t, rcv.URL, nil)
		w.mint(t, "bot")
		waitFor(t, "the delivery", func() bool { return len(rcv.requests()) == 1 })
		r := rcv.requests()[0]
		if r.header.Get("Content-Type") != "application/json" || !strings.HasPrefix(r.header.Get("webhook-id"), "evt_") {
			t.Fatalf("headers %v", r.header)
		}
		verifyByHand(t, secret, r)
		wh, err := standardwebhooks.NewWebhook(secret)
		if err != nil {
			t.Fatal(err)
		}
		if err := wh.Verify(r.body, r.header); err != nil {
			t.Fatalf("the Standard Webhooks library refuses it: %v", err)
		}
		var b struct {
			Type      string         `json:"type"`
			Timestamp time.Time      `json:"timestamp"`
			Data      map[string]any `json:"data"`
		}
		if err := json.Unmarshal(r.body, &b); err != nil || b.Type != "ai_token.create" || b.Data["projectId"] != w.prj || b.Data["agentName"] != "bot" ||
			b.Data["actorId"] != w.admin.UserID || b.Timestamp.IsZero() {
			t.Fatalf("body %s (%v)", r.body, err)
		}
		waitFor(t, "the delivery recorded", func() bool {
			d := w.deliveries(t, id)
			return len(d) == 1 && d[0].(map[string]any)["status"] == "succeeded"
		})
		d := w.deliveries(t, id)[0].(map[string]any)
		if d["attempts"] != float64(1) || d["lastStatusCode"] != float64(204) || d["eventType"] != "ai_token.create" || d["deliveredAt"] == nil {
			t.Fatalf("delivery %v", d)
		}

		t.Run("every credential change is an event; a filter picks some", func(t *testing.T) {
			filtered := newReceiver(t, nil)
			w.register(t, filtered.URL, []string{"ai_token.revoke", "project.policy_update"})
			got := w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/projects/" + w.prj + "/ai/agents", Header: w.admin.Bearer()}).Expect(t, 200, nil)
			tok := got["agent"].(map[string]any)["id"].(string)
			agent := "/v1/auth-core/projects/" + w.prj + "/ai/agents/" + tok
			w.a.Do(apptest.Req{Method: http.MethodPost, Path: agent + "/roll", Header: w.admin.Bearer()}).Expect(t, 200, nil)
			w.a.Do(apptest.Req{Method: http.MethodDelete, Path: agent, Header: w.admin.Bearer()}).Expect(t, 200, nil)
			badge := w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + w.prj + "/service-badges", Body: map[string]any{"name": "x", "product": "db"}, Header: w.admin.Bearer()}).Expect(t, 201, nil)
			bpath := "/v1/projects/" + w.prj + "/service-badges/" + badge["badge"].(map[string]any)["id"].(string)
			w.a.Do(apptest.Req{Method: http.MethodPost, Path: bpath + "/roll", Header: w.admin.Bearer()}).Expect(t, 200, nil)
			w.a.Do(apptest.Req{Method: http.MethodDelete, Path: bpath, Header: w.admin.Bearer()}).Expect(t, 200, nil)
			w.a.Do(apptest.Req{Method: http.MethodPut, Path: "/v1/projects/" + w.prj + "/policy", Body: map[string]any{}, Header: w.admin.Bearer()}).Expect(t, 200, nil)
			want := []string{"ai_token.create", "ai_token.create", "ai_token.roll", "ai_token.revoke", "service_badge.create", "service_badge.roll", "service_badge.revoke", "project.policy_update"}
			waitFor(t, "every event, in order", func() bool { return len(rcv.requests()) == len(want) })
			for i, r := range rcv.requests() {
				var b struct{ Type string }
				if json.Unmarshal(r.body, &b); b.Type != want[i] {
					t.Fatalf("event %d is %s, want %s", i, b.Type, want[i])
				}
			}
			waitFor(t, "the filtered events", func() bool { return len(filtered.requests()) == 2 })
		})
	})
}

// A receiver failing at first: the first retry comes within 10 s, later ones back off, and
// the webhook's next event waits for the one before it.
func TestRetriesInOrder(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		rcv := newReceiver(t, func(n int) int {
			if n <= 2 {
				return 503
			}
			return 200
		})
		id, _ := w.register(t, rcv.URL, nil)
		w.mint(t, "first")
		w.mint(t, "second")
		waitFor(t, "the first attempt", func() bool { return len(rcv.requests()) == 1 })
		time.Sleep(100 * time.Millisecond) // many polls: nothing else may be sent yet
		if n := len(rcv.requests()); n != 1 {
			t.Fatalf("%d requests: the second event overtook the failing first", n)
		}
		// The receiver has the request before the worker records the answer: wait for that.
		recorded := func(attempts float64) map[string]any {
			var first map[string]any
			waitFor(t, "the failure recorded", func() bool {
				first = w.deliveries(t, id)[1].(map[string]any)
				next, _ := time.Parse(time.RFC3339Nano, first["nextAttemptAt"].(string))
				return first["attempts"] == attempts && first["lastStatusCode"] != nil && next.After(w.a.Clock.Now())
			})
			return first
		}
		first := recorded(1)
		next, _ := time.Parse(time.RFC3339Nano, first["nextAttemptAt"].(string))
		if first["status"] != "pending" || first["lastStatusCode"] != float64(503) || next.Sub(w.a.Clock.Now()) > 10*time.Second {
			t.Fatalf("after one failure: %v", first)
		}
		w.a.Clock.Advance(10 * time.Second)
		waitFor(t, "the first retry", func() bool { return len(rcv.requests()) == 2 })
		next, _ = time.Parse(time.RFC3339Nano, recorded(2)["nextAttemptAt"].(string))
		if wait := next.Sub(w.a.Clock.Now()); wait < 20*time.Second {
			t.Fatalf("the second retry waits %v: no backoff", wait)
		}
		w.a.Clock.Advance(time.Minute)
		waitFor(t, "both events", func() bool { return len(rcv.requests()) == 4 })
		var m string
		waitFor(t, "the outcomes counted", func() bool {
			m = string(w.a.Get("/metrics").Body)
			return strings.Contains(m, `authcore_webhook_deliveries_total{result="retry"} 2`) &&
				strings.Contains(m, `authcore_webhook_deliveries_total{result="succeeded"} 2`)
		}, func() string {
			return fmt.Sprintf("counted:\n%s\n%d requests; deliveries: %v", testkit.GrepLines(m, "authcore_webhook_deliveries_total"), len(rcv.requests()), w.deliveries(t, id))
		})
		got := rcv.requests()
		ids := []string{got[0].header.Get("webhook-id"), got[1].header.Get("webhook-id"), got[2].header.Get("webhook-id"), got[3].header.Get("webhook-id")}
		if ids[0] != ids[1] || ids[1] != ids[2] || ids[3] == ids[0] {
			t.Fatalf("webhook-ids %v: want the first event three times (same id), then the second", ids)
		}
	})
}

// A receiver that never answers times out; the attempt counts as failed and is retried,
// and the webhook's other deliveries are not stuck behind it forever.
func TestHangingReceiver(t *testing.T) {
	a := apptest.Start(t, apptest.Stores(t)[0], timing(2*time.Second), allowHTTP) // gives up on the receiver quickly, and leaves the retry time on a busy machine
	w := &world{a: a, admin: a.SignUp(t)}
	w.prj = a.CreateProject(t, w.admin)
	rcv := newReceiver(t, func(n int) int {
		if n == 1 {
			return 0
		}
		return 200
	})
	id, _ := w.register(t, rcv.URL, nil)
	w.mint(t, "x")
	waitFor(t, "the timed-out attempt recorded", func() bool {
		d := w.deliveries(t, id)
		return len(d) == 1 && d[0].(map[string]any)["lastError"] != nil
	})
	w.a.Clock.Advance(10 * time.Second)
	waitFor(t, "the retry delivered", func() bool {
		return w.deliveries(t, id)[0].(map[string]any)["status"] == "succeeded"
	})
}

// The outbox loses nothing a committed change wrote: the worker dies mid-batch (the app
// stops while the receiver holds a request), more changes commit while no worker runs,
// and after a restart every event is delivered, in order, the interrupted one again.
func TestSurvivesRestartMidBatch(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		url := st.FreshURL(t)
		rcv := newReceiver(t, func(n int) int {
			if n == 1 {
				return 0 // hold the first request until the worker dies
			}
			return 200
		})
		slow := apptest.WithFx(fx.Decorate(func() webhook.Timing {
			return webhook.Timing{RequestTimeout: time.Minute, Lease: 30 * time.Second, PollEvery: 20 * time.Millisecond}
		}))
		a := apptest.StartURL(t, st.Name, url, slow, allowHTTP)
		admin := a.SignUp(t)
		w := &world{a: a, admin: admin, prj: a.CreateProject(t, admin)}
		w.register(t, rcv.URL, nil)
		w.mint(t, "one")
		waitFor(t, "the first request in flight", func() bool { return len(rcv.requests()) == 1 })
		if err := a.Stop(); err != nil {
			t.Fatal(err)
		}
		// Changes committed by another process while no worker runs (here: the store's
		// own rows are the proof, so write them through a second app with no receiver up).
		b := apptest.StartURL(t, st.Name, url, fast, allowHTTP)
		w2 := &world{a: b, admin: admin, prj: w.prj}
		w2.mint(t, "two")
		w2.mint(t, "three")
		// The interrupted delivery is leased; it goes again once the lease runs out.
		b.Clock.Advance(31 * time.Second)
		waitFor(t, "every event", func() bool { return len(rcv.requests()) == 4 })
		var names []string
		for _, r := range rcv.requests()[1:] {
			var body struct{ Data map[string]any }
			json.Unmarshal(r.body, &body)
			names = append(names, body.Data["agentName"].(string))
		}
		if strings.Join(names, ",") != "one,two,three" {
			t.Fatalf("delivered after the restart: %v", names)
		}
	})
}

// A name that resolved to an allowed address when the webhook was registered is checked
// again at delivery, on the address actually dialled.
func TestDeliveryChecksTheDialledAddress(t *testing.T) {
	st := apptest.Stores(t)[0]
	url := st.FreshURL(t)
	rcv := newReceiver(t, nil)
	a := apptest.StartURL(t, st.Name, url, fast, allowHTTP)
	admin := a.SignUp(t)
	w := &world{a: a, admin: admin, prj: a.CreateProject(t, admin)}
	id, _ := w.register(t, strings.Replace(rcv.URL, "127.0.0.1", "localhost", 1), nil)
	if err := a.Stop(); err != nil {
		t.Fatal(err)
	}
	b := apptest.StartURL(t, st.Name, url, fast) // production rules: loopback refused
	w2 := &world{a: b, admin: admin, prj: w.prj}
	w2.mint(t, "x")
	waitFor(t, "the refused attempt", func() bool {
		d := w2.deliveries(t, id)
		return len(d) == 1 && d[0].(map[string]any)["lastError"] != nil
	})
	if e := w2.deliveries(t, id)[0].(map[string]any)["lastError"].(string); !strings.Contains(e, "address not allowed") {
		t.Fatalf("lastError %q", e)
	}
	if len(rcv.requests()) != 0 {
		t.Fatal("the receiver on loopback was reached")
	}
}

// With two replicas on one PostgreSQL, each delivery is sent by one of them.
func TestReplicasShareTheQueue(t *testing.T) {
	if apptest.PostgresAdminURL() == "" {
		t.Skip("needs PostgreSQL")
	}
	st := apptest.Stores(t)[1]
	url := st.FreshURL(t)
	rcv := newReceiver(t, nil)
	a := apptest.StartURL(t, st.Name, url, fast, allowHTTP)
	b := apptest.StartURL(t, st.Name, url, fast, allowHTTP)
	admin := a.SignUp(t)
	w := &world{a: a, admin: admin, prj: a.CreateProject(t, admin)}
	for _, p := range []string{"/1", "/2", "/3"} {
		w.register(t, rcv.URL+p, nil)
	}
	wb := &world{a: b, admin: admin, prj: w.prj}
	for i := range 10 {
		if i%2 == 0 {
			w.mint(t, "a")
		} else {
			wb.mint(t, "b")
		}
	}
	waitFor(t, "30 deliveries", func() bool { return len(rcv.requests()) >= 30 })
	time.Sleep(200 * time.Millisecond) // room for a duplicate to show up
	seen := map[string]int{}
	for _, r := range rcv.requests() {
		seen[r.path+" "+r.header.Get("webhook-id")]++
	}
	if n := len(rcv.requests()); n != 30 || len(seen) != 30 {
		t.Fatalf("%d requests, %d distinct, for 10 events × 3 webhooks: a delivery was sent twice", n, len(seen))
	}
}

// Finished deliveries and the events nothing waits for are pruned after the retention;
// an event a pending delivery still needs stays.
func TestRetention(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		ok := newReceiver(t, nil)
		down := newReceiver(t, func(int) int { return 503 })
		okID, _ := w.register(t, ok.URL, nil)
		downID, _ := w.register(t, down.URL, nil)
		w.mint(t, "old")
		waitFor(t, "one delivered, one failing", func() bool {
			a, b := w.deliveries(t, okID), w.deliveries(t, downID)
			return len(a) == 1 && a[0].(map[string]any)["status"] == "succeeded" && len(b) == 1 && b[0].(map[string]any)["lastStatusCode"] != nil
		})
		ctx := context.Background()
		count := func(id string) int {
			n, err := w.a.Ent.WebhookDelivery.Query().Where(webhookdelivery.WebhookID(id)).Count(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		w.a.Clock.Advance(webhook.Retention + time.Hour) // sessions are long expired: read the store
		waitFor(t, "the finished delivery pruned", func() bool { return count(okID) == 0 })
		if n := count(downID); n != 1 {
			t.Fatalf("the pending delivery was pruned (%d left)", n)
		}
		if n, err := w.a.Ent.Event.Query().Where(event.ProjectID(w.prj)).Count(ctx); err != nil || n != 1 {
			t.Fatalf("%d events (%v): the one a pending delivery needs must stay", n, err)
		}
	})
}
