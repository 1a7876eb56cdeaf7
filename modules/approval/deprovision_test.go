package approval_test

import (
	"context"
	"testing"

	"go.uber.org/fx"

	"github.com/authcore/authcore/ent/backchannelrequest"
	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/platform/identity"
)

// A person their org's directory deprovisions (SPEC §27) has every open request denied:
// the one still pending, and the one they approved whose token the agent has not yet
// taken; the agent's poll hears access_denied for both.
func TestDeprovisionDeniesApprovals(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		var dep identity.Deprovisioning
		w := newWorld(t, st, apptest.WithFx(fx.Populate(&dep)))
		approved := w.ask(t, nil)
		w.approve(t, w.pending(t)).Expect(t, 200, map[string]any{"status": "approved"})
		pending := w.ask(t, nil)
		if err := dep.Deprovision(context.Background(), identity.Deprovision{TenantID: w.project, UserID: w.person.UserID, Actor: "directory:test"}); err != nil {
			t.Fatal(err)
		}
		oauthError(t, w.poll(t, approved), 400, "access_denied")
		oauthError(t, w.poll(t, pending), 400, "access_denied")
		if n := w.a.Ent.BackchannelRequest.Query().Where(backchannelrequest.UserID(w.person.UserID), backchannelrequest.StatusEQ(backchannelrequest.StatusDenied)).
			CountX(context.Background()); n != 2 {
			t.Fatalf("%d requests denied, want 2", n)
		}
	})
}
