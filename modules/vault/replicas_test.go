package vault_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/internal/interop"
)

// Two replicas on one PostgreSQL database, 100 agents asking at once across both when the
// token expired: one upstream refresh in all, and every agent gets the new token (SPEC
// §23: once, however many agents ask at the same moment, on any replica).
func TestVaultRefreshesOnceAcrossReplicas(t *testing.T) {
	var pg apptest.Store
	for _, st := range apptest.Stores(t) {
		if st.Name == "postgres" {
			pg = st
		}
	}
	if pg.Name == "" {
		t.Skip("replicas share a PostgreSQL database: " + apptest.EnvDatabaseURL + " is not set")
	}
	interop.Dir(t)
	url := pg.FreshURL(t)
	a := apptest.StartURL(t, "postgres", url, appOptions())
	b := apptest.StartURL(t, "postgres", url, appOptions())
	w := newWorld(t, a)
	w.connect(t, w.agentA[0]).Expect(t, 201, nil)
	first := w.exchange(t, w.agentA).Expect(t, 200, nil)["access_token"].(string)
	exchangeOn(b, w.agentA[1], w.provider, w.email).Expect(t, 200, map[string]any{"access_token": first})
	before := w.up.Counts(t, w.client)
	// Both replicas' clocks pass the expiry (each test app has its own).
	a.Clock.Advance(11 * time.Minute)
	b.Clock.Advance(11 * time.Minute)
	got := burst(t, 100, func(i int) *apptest.Response {
		if i%2 == 0 {
			return exchangeOn(a, w.agentA[1], w.provider, w.email)
		}
		return exchangeOn(b, w.agentA[1], w.provider, w.email)
	})
	if len(got) != 1 || got[first] {
		t.Fatalf("tokens handed out: %v", keys(got))
	}
	if c := w.up.Counts(t, w.client); c.Refresh != before.Refresh+1 {
		t.Fatalf("%d upstream refreshes for 100 agents on two replicas at one expiry", c.Refresh-before.Refresh)
	}
	// A revoke on one replica ends it on the other at once.
	conns := w.a.Do(apptest.Req{Path: "/v1/auth-core/connections", Header: w.bearer()}).Expect(t, 200, nil)["connections"].([]any)
	a.Do(apptest.Req{Method: http.MethodDelete, Path: "/v1/auth-core/connections/" + conns[0].(map[string]any)["id"].(string), Header: w.bearer()}).Expect(t, 200, nil)
	deadline := time.Now().Add(5 * time.Second)
	for exchangeOn(b, w.agentA[1], w.provider, w.email).Status == 200 {
		if time.Now().After(deadline) {
			t.Fatal("the other replica still serves a revoked connection")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
