package account_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"

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
