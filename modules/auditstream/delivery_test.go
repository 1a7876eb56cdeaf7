package auditstream_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/internal/testkit"
	"github.com/authcore/authcore/platform/config"
)

// An https stream: a mint, a roll and a revoke arrive in chain order, signed, each with
// its place and link; the stream's status says where it is.
func TestHTTPSStreamDeliversInOrder(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		r := newReceiver(t)
		w := newWorld(t, st, trusting(t, r))
		id := w.addHTTPS(t, r, nil)
		agent := w.mint(t, "bot")
		w.post(agent+"/roll", nil).Expect(t, 200, nil)
		w.revoke(t, agent)
		want := []string{"ai_token.create", "ai_token.roll", "ai_token.revoke"}
		waitFor(t, "three events", func() bool { return len(r.events()) >= 3 })
		got := r.events()
		if len(got) != 3 {
			t.Fatalf("%d events, want 3", len(got))
		}
		for i, e := range got {
			if e.Action != want[i] || e.ProjectID != w.prj || e.Hash == "" || (i > 0 && e.Seq != got[i-1].Seq+1) {
				t.Fatalf("event %d: %+v", i, e)
			}
		}
		if *got[0].ActorID != w.admin.UserID || got[0].Metadata["agentName"] != "bot" {
			t.Fatalf("first event %+v", got[0])
		}
		if trail := w.trail(t); !slices.Equal(ids(got), trail[len(trail)-3:]) {
			t.Fatalf("delivered %v, the chain ends %v", ids(got), trail)
		}
		var s map[string]any
		waitFor(t, "the cursor moved", func() bool {
			s = w.get(t, w.streams()+"/"+id)
			return s["lag"] == float64(0) && s["lastDeliveredId"] == got[2].ID
		})
		if s["status"] != "active" || s["cursor"] != float64(got[2].Seq) || s["lastError"] != nil || s["secret"] != nil {
			t.Fatalf("stream %v", s)
		}
		if len(r.forged) != 0 {
			t.Fatalf("signatures refused: %v", r.forged)
		}
		if !strings.HasPrefix(r.batches[0], got[0].ID+".") {
			t.Fatalf("webhook-id %q", r.batches[0])
		}
	})
}

// The receiver down for a while: the stream fails with backoff and says why; once the
// receiver is back, every event arrives in order, nothing lost, and an event seen twice
// always carries the same id.
func TestReceiverDownThenUp(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		r := newReceiver(t)
		w := newWorld(t, st, trusting(t, r))
		id := w.addHTTPS(t, r, nil)
		r.setUp(false)
		for i := range 5 {
			w.mint(t, fmt.Sprintf("bot-%d", i))
		}
		var s map[string]any
		waitFor(t, "the failure recorded", func() bool {
			s = w.get(t, w.streams()+"/"+id)
			return s["status"] == "failing"
		})
		if !strings.Contains(s["lastError"].(string), "answered 503: down for maintenance") || s["lag"].(float64) < 1 || s["nextAttemptAt"] == nil {
			t.Fatalf("failing stream %v", s)
		}
		refused := r.refusals()
		// Backoff: no new attempt before its time.
		time.Sleep(100 * time.Millisecond)
		if r.refusals() != refused {
			t.Fatalf("%d attempts, then %d without time passing: no backoff", refused, r.refusals())
		}
		for range 3 {
			w.advance(t, time.Minute)
			waitFor(t, "another attempt", func() bool { return r.refusals() > refused })
			refused = r.refusals()
			// The receiver refused before the worker wrote down when to try next: the
			// clock moves again only after that, or the next try is an hour away.
			waitFor(t, "the next attempt scheduled", func() bool {
				next, err := time.Parse(time.RFC3339Nano, fmt.Sprint(w.get(t, w.streams()+"/"+id)["nextAttemptAt"]))
				return err == nil && next.After(w.a.Clock.Now())
			})
		}
		w.mint(t, "while-down")
		r.setUp(true)
		w.advance(t, time.Hour)
		trail := w.trail(t)
		waitFor(t, "every event", func() bool { return len(unique(r.events())) >= 6 })
		got := unique(r.events())
		if !slices.Equal(ids(got), trail[len(trail)-6:]) {
			t.Fatalf("delivered %v, the chain ends %v", ids(got), trail[len(trail)-6:])
		}
		waitFor(t, "the stream active again", func() bool {
			s = w.get(t, w.streams()+"/"+id)
			return s["status"] == "active" && s["lag"] == float64(0)
		})
		if s["lastError"] != nil || s["failingSince"] != nil {
			t.Fatalf("recovered stream %v", s)
		}
	})
}

// Replay from an event id sends that event and what follows again; from a time, the
// events recorded since.
func TestReplay(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		r := newReceiver(t)
		w := newWorld(t, st, trusting(t, r))
		before := w.trail(t) // the project's creation, before the stream
		id := w.addHTTPS(t, r, nil)
		for i := range 3 {
			w.mint(t, fmt.Sprintf("bot-%d", i))
		}
		waitFor(t, "three events", func() bool { return len(r.events()) == 3 })
		first := r.events()
		path := w.streams() + "/" + id + "/replay"

		t.Run("from an event id", func(t *testing.T) {
			s := w.post(path, map[string]any{"from": first[1].ID}).Expect(t, 200, map[string]any{"id": id, "status": "active"})
			if s["cursor"] != float64(first[1].Seq-1) || s["lag"] != float64(2) {
				t.Fatalf("replayed stream %v", s)
			}
			waitFor(t, "two again", func() bool { return len(r.events()) == 5 })
			if again := ids(r.events()[3:]); !slices.Equal(again, ids(first[1:])) {
				t.Fatalf("replayed %v, want %v", again, ids(first[1:]))
			}
		})
		t.Run("from a time before the stream: the past too", func(t *testing.T) {
			w.post(path, map[string]any{"from": "2000-01-01T00:00:00Z"}).Expect(t, 200, nil)
			want := append(slices.Clone(before), ids(first)...)
			waitFor(t, "the whole trail", func() bool { return len(r.events()) == 5+len(want) })
			if again := ids(r.events()[5:]); !slices.Equal(again, want) {
				t.Fatalf("replayed %v, want %v", again, want)
			}
		})
		t.Run("from a time after everything: nothing", func(t *testing.T) {
			n := len(r.events())
			s := w.post(path, map[string]any{"from": w.a.Clock.Now().Add(time.Hour).Format(time.RFC3339)}).Expect(t, 200, nil)
			if s["lag"] != float64(0) {
				t.Fatalf("stream %v", s)
			}
			time.Sleep(100 * time.Millisecond)
			if len(r.events()) != n {
				t.Fatal("events sent after a replay from the future")
			}
		})
		t.Run("from something else: validation_failed", func(t *testing.T) {
			for _, body := range []any{map[string]any{}, map[string]any{"from": 5}, map[string]any{"from": "yesterday"}, map[string]any{"from": "aud_01NOSUCHEVENT"}} {
				got := issues(t, w.post(path, body).Expect(t, 400, map[string]any{"code": "validation_failed"}))
				if got["from"] == "" {
					t.Fatalf("%v: issues %v", body, got)
				}
			}
			// Another project's event is not this chain's.
			other := &world{a: w.a, admin: w.admin, prj: w.a.CreateProject(t, w.admin)}
			other.mint(t, "x")
			foreign := other.trail(t)
			w.post(path, map[string]any{"from": foreign[len(foreign)-1]}).Expect(t, 400, map[string]any{"code": "validation_failed"})
		})
	})
}

// A filter sends only the actions its globs match; the rest still move the cursor.
func TestFilter(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		r := newReceiver(t)
		w := newWorld(t, st, trusting(t, r))
		id := w.addHTTPS(t, r, map[string]any{"filter": map[string]any{"actions": []string{"*.revoke", "project.policy_*"}}})
		a := w.mint(t, "one")
		w.revoke(t, a)
		w.mint(t, "two")
		w.a.Do(apptest.Req{Method: http.MethodPut, Path: "/v1/projects/" + w.prj + "/policy", Body: map[string]any{}, Header: w.admin.Bearer()}).Expect(t, 200, nil)
		trail := w.trail(t)
		waitFor(t, "the cursor at the head", func() bool { return w.get(t, w.streams()+"/"+id)["lag"] == float64(0) })
		got := r.events()
		if len(got) != 2 || got[0].Action != "ai_token.revoke" || got[1].Action != "project.policy_update" || got[1].ID != trail[len(trail)-1] {
			t.Fatalf("filtered delivery %+v", got)
		}
		if s := w.get(t, w.streams()+"/"+id); s["filter"].(map[string]any)["actions"].([]any)[0] != "*.revoke" || s["lastDeliveredId"] != got[1].ID {
			t.Fatalf("stream %v", s)
		}
	})
}

// The test route sends one test event now and says what the receiver answered; the
// stream's cursor is left alone.
func TestTestEvent(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		r := newReceiver(t)
		w := newWorld(t, st, trusting(t, r))
		id := w.addHTTPS(t, r, nil)
		path := w.streams() + "/" + id + "/test"
		got := w.post(path, nil).Expect(t, 200, map[string]any{"delivered": true, "error": nil})
		evs := r.events()
		if len(evs) != 1 || evs[0].Action != "audit_stream.test" || evs[0].ID != got["eventId"] || evs[0].Metadata["streamId"] != id {
			t.Fatalf("receiver got %+v", evs)
		}
		r.setUp(false)
		got = w.post(path, nil).Expect(t, 200, map[string]any{"delivered": false})
		if !strings.Contains(got["error"].(string), "answered 503") {
			t.Fatalf("answer %v", got)
		}
		if s := w.get(t, w.streams()+"/"+id); s["status"] != "active" || s["lastError"] != nil {
			t.Fatalf("a test changed the stream: %v", s)
		}
	})
}

// A stream failing for 24 hours (the app's clock) is paused and the project's admins are
// mailed, once; resume starts it again where it stopped and nothing is lost.
func TestPauseAfterADayAndResume(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		r := newReceiver(t)
		inbox := testkit.StartInbox(t)
		w := newWorld(t, st, trusting(t, r), apptest.WithConfig(func(c *config.Config) { c.SMTPURL = inbox.URL }))
		viewer := w.a.SignUp(t)
		w.a.AddMember(t, w.admin, w.prj, viewer, "viewer")
		w.settle(t)
		id := w.addHTTPS(t, r, nil)
		path := w.streams() + "/" + id
		w.post(path+"/resume", nil).Expect(t, 409, map[string]any{"code": "not_paused"})
		r.setUp(false)
		w.mint(t, "lost?")
		waitFor(t, "failing", func() bool { return w.get(t, path)["status"] == "failing" })
		// Counted before the clock moves: the worker may try again before the next line.
		n := r.refusals()
		w.advance(t, 23*time.Hour)
		waitFor(t, "another attempt", func() bool { return r.refusals() > n })
		time.Sleep(50 * time.Millisecond)
		if s := w.get(t, path); s["status"] != "failing" {
			t.Fatalf("paused before 24 h: %v", s)
		}
		w.advance(t, 2*time.Hour)
		var s map[string]any
		waitFor(t, "paused", func() bool { s = w.get(t, path); return s["status"] == "paused" })
		if s["pausedAt"] == nil || !strings.Contains(s["lastError"].(string), "503") {
			t.Fatalf("paused stream %v", s)
		}
		mails := inbox.Wait(t, 1)
		if mails[0].To != w.admin.Email || !strings.Contains(mails[0].Subject, "paused") || !strings.Contains(mails[0].Text, id) ||
			!strings.Contains(mails[0].Text, "/resume") {
			t.Fatalf("mail %+v", mails[0])
		}
		// Paused: nothing more is tried, however long, and no second mail.
		n = r.refusals()
		w.advance(t, 48*time.Hour)
		time.Sleep(150 * time.Millisecond)
		if r.refusals() != n || len(inbox.Mails()) != 1 {
			t.Fatalf("%d more attempts, %d mails while paused", r.refusals()-n, len(inbox.Mails()))
		}
		r.setUp(true)
		w.post(path+"/resume", nil).Expect(t, 200, map[string]any{"status": "active", "pausedAt": nil})
		waitFor(t, "the event", func() bool { return len(r.events()) == 1 })
		if r.events()[0].Action != "ai_token.create" {
			t.Fatalf("after resume: %+v", r.events())
		}
	})
}

// Neither the whsec_ secret nor an S3 secret key is stored or logged in clear.
func TestSecretsSealed(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		r := newReceiver(t)
		w := newWorld(t, st, trusting(t, r))
		got := w.post(w.streams(), map[string]any{"type": "https", "url": r.URL}).Expect(t, 201, nil)
		secret := got["secret"].(string)
		if !strings.HasPrefix(secret, "whsec_") || !strings.HasPrefix(got["id"].(string), "ast_") {
			t.Fatalf("created %v", got)
		}
		r.setSecret(secret)
		r.now = w.a.Clock.Now
		w.mint(t, "x")
		waitFor(t, "a delivery", func() bool { return len(r.events()) == 1 })
		// An s3 stream's secret key is sealed too, and a refused body's lands nowhere.
		s3key, refused := "wJalrXUtnFEMI-K7MDENG-bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI-REFUSED-bPxRfiCYEXAMPLEKEY"
		w.post(w.streams(), map[string]any{"type": "s3", "endpoint": r.URL, "region": "r", "bucket": "bkt", "accessKeyId": "AKIA", "secretAccessKey": s3key}).Expect(t, 201, nil)
		w.post(w.streams(), map[string]any{"type": "s3", "endpoint": "nope", "region": "r", "bucket": "bkt", "accessKeyId": "AKIA", "secretAccessKey": refused}).Expect(t, 400, nil)
		key := strings.TrimPrefix(secret, "whsec_")
		db, logs := w.a.DumpDB(t), w.a.Logs.String()
		for _, s := range []string{key, s3key, refused} {
			if strings.Contains(db, s) || strings.Contains(logs, s) {
				t.Fatalf("%s… is stored or logged in clear", s[:8])
			}
		}
		for _, s := range w.get(t, w.streams())["streams"].([]any) {
			if s.(map[string]any)["secret"] != nil {
				t.Fatal("the list shows a secret")
			}
		}
	})
}

// Deliveries and lag are metrics by stream type.
func TestMetrics(t *testing.T) {
	r := newReceiver(t)
	w := newWorld(t, apptest.Stores(t)[0], trusting(t, r))
	w.addHTTPS(t, r, nil)
	w.mint(t, "x")
	waitFor(t, "a delivery", func() bool { return len(r.events()) == 1 })
	var m string
	waitFor(t, "the counts", func() bool {
		m = string(w.a.Get("/metrics").Body)
		return strings.Contains(m, `authcore_audit_stream_events_total{type="https"} 1`) &&
			strings.Contains(m, `authcore_audit_stream_deliveries_total{result="succeeded",type="https"} 1`) &&
			strings.Contains(m, `authcore_audit_stream_lag_events{type="https"} 0`) &&
			strings.Contains(m, `authcore_audit_stream_paused{type="s3"} 0`)
	}, func() string { return testkit.GrepLines(m, "authcore_audit_stream") })
	r.setUp(false)
	w.mint(t, "y")
	waitFor(t, "the failure and the lag", func() bool {
		m = string(w.a.Get("/metrics").Body)
		return strings.Contains(m, `authcore_audit_stream_deliveries_total{result="failed",type="https"} 1`) &&
			strings.Contains(m, `authcore_audit_stream_lag_events{type="https"} 1`)
	}, func() string { return testkit.GrepLines(m, "authcore_audit_stream") })
}
