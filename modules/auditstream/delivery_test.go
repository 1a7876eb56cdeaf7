package auditstream_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/authcore/authcore/internal/apptest"
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
