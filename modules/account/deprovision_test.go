package account_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/platform/identity"
)

// A person their org's directory deprovisions (SPEC §27) stops signing in (403
// user_deprovisioned, to whoever knows the password), their sessions end with a
// back-channel logout token to the app they signed in to, and their OAuth grant's access
// and refresh tokens stop introspecting. Again changes nothing; an admin's unblock does
// not undo it; reprovisioning restores password sign-in and nothing else.
func TestDeprovisionEndsSessionsAndGrants(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newDeprovWorld(t, st)
		a := w.a
		g := w.connect(t, w.person)
		if !w.active(t, a, g.access) || !w.active(t, a, g.refresh) {
			t.Fatal("the grant's tokens are not active before")
		}
		second := w.signIn(a).Expect(t, 200, nil)["session"].(map[string]any)

		w.deprovision(t)

		w.signIn(a).Expect(t, 403, map[string]any{"code": "user_deprovisioned"})
		a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signin",
			Body: map[string]any{"email": w.person.Email, "password": "wrong password", "tenantId": w.project}}).Expect(t, 401, map[string]any{"code": "invalid_credentials"})
		for _, refresh := range []string{w.person.RefreshToken, second["refreshToken"].(string)} {
			refreshSession(a, refresh).Expect(t, 401, nil)
		}
		a.Do(apptest.Req{Path: "/v1/auth-core/session/me", Header: w.person.Bearer()}).Expect(t, 401, nil)
		if w.active(t, a, g.access) || w.active(t, a, g.refresh) {
			t.Fatal("the grant's tokens still introspect active")
		}
		a.PostForm("/v1/oauth/token", url.Values{"grant_type": {"refresh_token"}, "client_id": {w.appID}, "refresh_token": {g.refresh}}, nil).
			Expect(t, 400, map[string]any{"error": "invalid_grant"})
		waitFor(t, "the app's logout token", func() bool {
			got, bad := w.logout.got()
			if len(bad) > 0 {
				t.Fatalf("refused logout tokens: %v", bad)
			}
			return len(got) > 0
		})
		got, _ := w.logout.got()
		if got[0]["sub"] != w.person.UserID || got[0]["sid"] != w.person.SessionHandle {
			t.Fatalf("logout token: %v", got[0])
		}

		evs := auditOf(t, w, "org.member_deprovisioned")
		if len(evs) != 1 || evs[0]["orgId"] != w.org || evs[0]["actorType"] != "scim_directory" {
			t.Fatalf("audit: %v", evs)
		}
		md := evs[0]["metadata"].(map[string]any)
		ended := md["ended"].(map[string]any)
		if md["userId"] != w.person.UserID || ended["sessions"] != 2.0 || ended["grants"] != 1.0 {
			t.Fatalf("audit metadata: %v", md)
		}
		// Again: nothing left, nothing recorded.
		w.deprovision(t)
		if n := len(auditOf(t, w, "org.member_deprovisioned")); n != 1 {
			t.Fatalf("%d deprovisioning records after a repeat", n)
		}
		// An admin's block and unblock is another column: the directory's deactivation stays.
		path := "/v1/projects/" + w.project + "/users/" + w.person.UserID
		for _, b := range []bool{true, false} {
			a.Do(apptest.Req{Method: http.MethodPatch, Path: path, Body: map[string]any{"blocked": b}, Header: w.admin.Bearer()}).Expect(t, 200, nil)
		}
		w.signIn(a).Expect(t, 403, map[string]any{"code": "user_deprovisioned"})
		if a.Do(apptest.Req{Path: path, Header: w.admin.Bearer()}).Expect(t, 200, map[string]any{"blocked": false})["deprovisionedAt"] == nil {
			t.Fatal("the admin's view does not show the deprovisioning")
		}

		if err := w.dep.Reprovision(context.Background(), identity.Deprovision{TenantID: w.project, UserID: w.person.UserID, OrgID: w.org, Actor: "directory:test"}); err != nil {
			t.Fatal(err)
		}
		fresh := w.signIn(a).Expect(t, 200, nil)["session"].(map[string]any)
		a.Do(apptest.Req{Path: "/v1/auth-core/session/me", Header: map[string]string{"Authorization": "Bearer " + fresh["accessToken"].(string)}}).Expect(t, 200, nil)
		refreshSession(a, w.person.RefreshToken).Expect(t, 401, nil)
		a.Do(apptest.Req{Path: path, Header: w.admin.Bearer()}).Expect(t, 200, map[string]any{"deprovisionedAt": nil})
		if w.active(t, a, g.access) || w.active(t, a, g.refresh) {
			t.Fatal("reprovisioning brought the grant's tokens back")
		}
		if n := len(auditOf(t, w, "org.member_reprovisioned")); n != 1 {
			t.Fatalf("%d reprovisioning records", n)
		}
		// Someone else's tenant is not the directory's to deprovision.
		other := a.CreateProject(t, w.admin)
		err := w.dep.Deprovision(context.Background(), identity.Deprovision{TenantID: other, UserID: w.person.UserID, Actor: "directory:test"})
		if err != identity.ErrNoSuchPerson {
			t.Fatalf("another tenant's deprovisioning: %v", err)
		}
		w.signIn(a).Expect(t, 200, nil)
	})
}

// refusedOn reports whether replica a refuses every credential of the person: their
// session's access and refresh tokens, the grant's access and refresh tokens, the agent
// token they minted, and their password. Plain statuses, no t.Fatal: it runs in a
// goroutine per replica.
func (w *deprovWorld) refusedOn(a *apptest.App, g grant, agent string) (bool, string) {
	bearer := func(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }
	if r := a.Do(apptest.Req{Path: "/v1/auth-core/session/me", Header: w.person.Bearer()}); r.Status != http.StatusUnauthorized {
		return false, "session access token"
	}
	if r := refreshSession(a, w.person.RefreshToken); r.Status != http.StatusUnauthorized {
		return false, "session refresh token"
	}
	for what, tok := range map[string]string{"grant access token": g.access, "grant refresh token": g.refresh} {
		r := a.PostForm("/v1/oauth/introspect", url.Values{"token": {tok}}, apptest.Basic(w.introspector.ID, w.introspector.Secret))
		var in struct{ Active bool }
		if r.Status != http.StatusOK || json.Unmarshal(r.Body, &in) != nil || in.Active {
			return false, what
		}
	}
	if r := a.Do(apptest.Req{Path: "/v1/auth-core/ai/me", Header: bearer(agent)}); r.Status != http.StatusUnauthorized {
		return false, "agent token"
	}
	if r := w.signIn(a); r.Status != http.StatusForbidden {
		return false, "password sign-in"
	}
	return true, ""
}

// Two replicas share PostgreSQL; every credential of the person is in use on both (their
// caches warm). The directory deprovisions the person through replica A: within SPEC
// §27's second, measured from the call, both replicas refuse every one of them.
func TestDeprovisionReachesEveryReplicaWithinASecond(t *testing.T) {
	if apptest.PostgresAdminURL() == "" {
		t.Skip("needs PostgreSQL")
	}
	st := apptest.Stores(t)[1]
	dbURL := st.FreshURL(t)
	var depA, depB identity.Deprovisioning
	a, b := apptest.StartURL(t, st.Name, dbURL, deprovOptions(&depA)...), apptest.StartURL(t, st.Name, dbURL, deprovOptions(&depB)...)
	w := &deprovWorld{a: a, dep: depA}
	w.setUp(t)
	w.revokeMinted(t)
	g := w.connect(t, w.person)
	agent := w.mintAgent(t)
	for _, r := range []*apptest.App{a, b} {
		if ok, what := w.refusedOn(r, g, agent); ok || what != "session access token" {
			t.Fatalf("before: %s refused", what)
		}
		if !w.active(t, r, g.access) || !w.active(t, r, g.refresh) {
			t.Fatal("the grant is not active on both replicas before")
		}
		r.Do(apptest.Req{Path: "/v1/auth-core/ai/me", Header: map[string]string{"Authorization": "Bearer " + agent}}).Expect(t, 200, nil)
	}

	const bound = time.Second
	type result struct {
		name  string
		took  time.Duration
		still string
	}
	results := make(chan result, 2)
	start := time.Now()
	for name, r := range map[string]*apptest.App{"A": a, "B": b} {
		go func() {
			// Generous in waiting (a stuck replica is reported, not hung on), strict in
			// the bound asserted below.
			var still string
			for time.Since(start) < 20*time.Second {
				var ok bool
				if ok, still = w.refusedOn(r, g, agent); ok {
					results <- result{name: name, took: time.Since(start)}
					return
				}
			}
			results <- result{name: name, took: time.Since(start), still: still}
		}()
	}
	w.deprovision(t)
	called := time.Since(start)
	for range 2 {
		r := <-results
		t.Logf("replica %s refuses every credential %v after the deprovisioning began (the call returned after %v)", r.name, r.took, called)
		if r.still != "" {
			t.Errorf("replica %s still takes the %s after %v", r.name, r.still, r.took)
		} else if r.took >= bound {
			t.Errorf("replica %s took %v, more than SPEC §27's %v", r.name, r.took, bound)
		}
	}
}
