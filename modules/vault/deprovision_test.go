package vault_test

import (
	"context"
	"testing"

	"go.uber.org/fx"

	"github.com/authcore/authcore/ent/vaultconnection"
	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/platform/identity"
)

// A person their org's directory deprovisions (SPEC §27) loses their vault connections
// at once: the agent's exchange is refused, the row is gone, and the upstream (a real
// oidc-provider) revokes the grant, so the access token the agent already held stops
// working at the upstream's API too.
func TestDeprovisionRevokesConnections(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		var dep identity.Deprovisioning
		w := newWorld(t, apptest.Start(t, st, appOptions(), apptest.WithFx(fx.Populate(&dep))))
		w.connect(t, w.agentA[0]).Expect(t, 201, nil)
		access := w.exchange(t, w.agentA).Expect(t, 200, nil)["access_token"].(string)
		if w.userinfo(t, access) != 200 {
			t.Fatal("the agent's upstream token does not work before")
		}
		d := identity.Deprovision{TenantID: w.project, UserID: w.userID, Actor: "directory:test"}
		if err := dep.Deprovision(context.Background(), d); err != nil {
			t.Fatal(err)
		}
		oauthError(t, w.exchange(t, w.agentA), 400, "invalid_grant")
		if n := w.a.Ent.VaultConnection.Query().Where(vaultconnection.UserID(w.userID)).CountX(context.Background()); n != 0 {
			t.Fatalf("%d connections left", n)
		}
		if got := w.up.Counts(t, w.client); got.Revocation != 1 || got.LiveRefreshTokens != 0 {
			t.Fatalf("upstream after the deprovisioning: %+v", got)
		}
		if w.userinfo(t, access) == 200 {
			t.Fatal("the upstream still takes the connection's access token")
		}
		// Again: nothing left to revoke, here or upstream.
		if err := dep.Deprovision(context.Background(), d); err != nil {
			t.Fatal(err)
		}
		if got := w.up.Counts(t, w.client); got.Revocation != 1 {
			t.Fatalf("upstream after a second deprovisioning: %+v", got)
		}
	})
}
