package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/authcore/authcore/internal/testkit"
)

// receiver is an HTTPS-stream receiver on loopback (plain HTTP: the servers run with
// AUTHCORE_WEBHOOK_ALLOW_HTTP) that verifies each batch's Standard Webhooks signature with
// the standard library of that specification, and can be taken down (its port closed) and
// brought back on the same address.
type receiver struct {
	addr   string
	secret atomic.Pointer[standardwebhooks.Webhook]
	slow   atomic.Bool // hold each batch 300 ms: deliveries are in flight when a server dies

	mu      sync.Mutex
	ln      net.Listener
	srv     *http.Server
	bodies  map[string]string // event id → its body, the first time
	order   []int64           // every received event's seq, in receipt order
	batches atomic.Int64
	forged  int
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{bodies: map[string]string{}}
	r.up(t)
	t.Cleanup(r.down)
	return r
}

func (r *receiver) up(t *testing.T) {
	t.Helper()
	addr := r.addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	r.ln, r.addr = ln, ln.Addr().String()
	r.srv = &http.Server{Handler: http.HandlerFunc(r.serve)}
	r.mu.Unlock()
	go r.srv.Serve(ln)
}

func (r *receiver) down() {
	r.mu.Lock()
	srv := r.srv
	r.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
	}
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	wh := r.secret.Load()
	if wh == nil || wh.Verify(body, req.Header) != nil {
		r.mu.Lock()
		r.forged++
		r.mu.Unlock()
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	r.batches.Add(1)
	if r.slow.Load() {
		time.Sleep(300 * time.Millisecond)
	}
	var batch struct {
		Events []json.RawMessage `json:"events"`
	}
	if err := json.Unmarshal(body, &batch); err != nil {
		http.Error(w, "not a batch", http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, raw := range batch.Events {
		var e struct {
			ID  string `json:"id"`
			Seq int64  `json:"seq"`
		}
		_ = json.Unmarshal(raw, &e)
		if prev, ok := r.bodies[e.ID]; ok && prev != string(raw) {
			r.bodies[e.ID] = "DIFFERENT BODIES UNDER ONE ID"
		} else if !ok {
			r.bodies[e.ID] = string(raw)
		}
		r.order = append(r.order, e.Seq)
	}
	w.WriteHeader(http.StatusNoContent)
}

// The faults of SPEC §28 at once, against two replicas serving one PostgreSQL cluster of
// the test's own: the receiver goes down for a while, the replicas are killed with SIGKILL
// while a batch is in flight, and PostgreSQL itself crashes and restarts. Afterwards
// every event of the project's trail has reached the receiver, signed, each event id with
// one body however often it came, and the events first arrived in the chain's order.
func TestAuditStreamSurvivesFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL and two servers")
	}
	if testkit.PostgresAdminURL() == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal(testkit.EnvDatabaseURL + " is not set")
		}
		t.Skip(testkit.EnvDatabaseURL + " is not set")
	}
	fresh := testkit.Stores(t)[1].FreshURL(t)
	pg := testkit.StartPrimary(t) // a copy of the test cluster, the fresh database included
	dbURL := pg.URL(fresh)
	// Replicas of one service share its public URL: the issuer of the tokens each accepts.
	env := []string{"AUTHCORE_WEBHOOK_ALLOW_HTTP=true", "AUTHCORE_PUBLIC_URL=http://authcore.test"}
	a := startServerOn(t, dbURL, t.TempDir(), false, env...)
	b := startServerOn(t, dbURL, t.TempDir(), false, env...)
	rcv := newReceiver(t)

	var signup struct {
		Session struct{ AccessToken string }
	}
	call(t, a.addr, http.MethodPost, "/v1/auth-core/signup", "", `{"email":"streams@example.com","password":"streams password"}`, http.StatusCreated, &signup)
	admin := signup.Session.AccessToken
	var project struct{ ID string }
	call(t, a.addr, http.MethodPost, "/v1/projects", admin, `{"name":"streams"}`, http.StatusCreated, &project)
	// trail is the project's events as the API pages them.
	trail := func() map[string]bool {
		ids, before := map[string]bool{}, ""
		for {
			var page struct {
				Events []struct {
					ID string `json:"id"`
				} `json:"events"`
				NextBefore *string `json:"nextBefore"`
			}
			path := "/v1/projects/" + project.ID + "/audit?limit=200"
			if before != "" {
				path += "&before=" + before
			}
			call(t, b.addr, http.MethodGet, path, admin, "", http.StatusOK, &page)
			for _, e := range page.Events {
				ids[e.ID] = true
			}
			if page.NextBefore == nil {
				return ids
			}
			before = *page.NextBefore
		}
	}
	// A new stream sends what happens from then on (replay sends the past).
	earlier := trail()
	var stream struct{ ID, Secret string }
	call(t, a.addr, http.MethodPost, "/v1/projects/"+project.ID+"/audit-streams", admin,
		fmt.Sprintf(`{"type":"https","url":"http://%s/events"}`, rcv.addr), http.StatusCreated, &stream)
	wh, err := standardwebhooks.NewWebhook(stream.Secret)
	if err != nil {
		t.Fatal(err)
	}
	rcv.secret.Store(wh)

	// mint writes events through either replica; during PostgreSQL's crash some calls
	// fail, and only what committed is in the trail the receiver is held to.
	minted := 0
	mint := func(srv *server, n int) {
		for i := 0; i < n; i++ {
			req, _ := http.NewRequest(http.MethodPost, "http://"+srv.addr+"/v1/auth-core/projects/"+project.ID+"/ai/agents", strings.NewReader(`{}`))
			req.Header.Set("Authorization", "Bearer "+admin)
			req.Header.Set("Content-Type", "application/json")
			if res, err := http.DefaultClient.Do(req); err == nil {
				if res.StatusCode == http.StatusOK {
					minted++
				}
				res.Body.Close()
			}
		}
	}

	mint(a, 10)
	mint(b, 10)
	rcv.down() // the receiver is down for a while
	mint(a, 10)
	mint(b, 10)
	time.Sleep(2 * time.Second)

	rcv.slow.Store(true)
	taken := rcv.batches.Load()
	rcv.up(t)
	mint(a, 20)
	for deadline := time.Now().Add(20 * time.Second); rcv.batches.Load() == taken; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no batch arrived after the receiver came back")
		}
	}
	// Mid-delivery (the receiver holds each batch 300 ms): whichever replica is sending
	// dies, so both do; their successors find the stream leased and take it when the
	// lease runs out.
	a.kill()
	b.kill()
	rcv.slow.Store(false)
	a = startServerOn(t, dbURL, t.TempDir(), false, env...)
	b = startServerOn(t, dbURL, t.TempDir(), false, env...)
	mint(b, 10)

	pg.Stop() // PostgreSQL crashes …
	mint(b, 3)
	time.Sleep(time.Second)
	pg.Start() // … and comes back
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		before := minted
		mint(b, 1)
		if minted > before {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the surviving replica did not recover from PostgreSQL's restart")
		}
	}
	mint(a, 10)
	mint(b, 10)
	if minted < 80 {
		t.Fatalf("only %d mints were acknowledged", minted)
	}

	// The trail since the stream began; then wait for the receiver to hold all of it.
	since := trail()
	for id := range earlier {
		delete(since, id)
	}
	if len(since) < minted {
		t.Fatalf("the trail holds %d events for %d acknowledged mints", len(since), minted)
	}
	var missing []string
	waited := time.Now()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(250 * time.Millisecond) {
		rcv.mu.Lock()
		missing = missing[:0]
		for id := range since {
			if _, ok := rcv.bodies[id]; !ok {
				missing = append(missing, id)
			}
		}
		rcv.mu.Unlock()
		if len(missing) == 0 || time.Now().After(deadline) {
			break
		}
	}
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	if len(missing) > 0 {
		t.Fatalf("%d of %d events never reached the receiver, e.g. %v", len(missing), len(since), missing[:min(3, len(missing))])
	}
	for id, body := range rcv.bodies {
		if body == "DIFFERENT BODIES UNDER ONE ID" {
			t.Errorf("event %s arrived with two different bodies", id)
		}
	}
	if rcv.forged > 0 {
		t.Errorf("%d batches failed signature verification", rcv.forged)
	}
	// At least once, in order: each seq's first arrival comes after every smaller one's.
	seen, firsts := map[int64]bool{}, []int64{}
	for _, s := range rcv.order {
		if !seen[s] {
			seen[s] = true
			firsts = append(firsts, s)
		}
	}
	if !slices.IsSorted(firsts) {
		t.Errorf("events first arrived out of the chain's order: %v", firsts)
	}
	dups := len(rcv.order) - len(firsts)
	t.Logf("%d events in the trail, %d deliveries of them (%d again, each with its first body), %d batches; the last arrived %v after the last mint",
		len(since), len(rcv.order), dups, rcv.batches.Load(), time.Since(waited).Round(time.Millisecond))
}
