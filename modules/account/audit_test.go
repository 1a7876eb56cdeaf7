package account_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/authcore/authcore/ent/auditevent"
	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/platform/config"
)

// trail is the project's audit trail as its admin reads it, newest first.
func trail(t *testing.T, a *apptest.App, admin *apptest.Session, project string) []map[string]any {
	t.Helper()
	got := a.Do(apptest.Req{Path: "/v1/projects/" + project + "/audit?limit=200", Header: admin.Bearer()}).Expect(t, 200, nil)
	var out []map[string]any
	for _, e := range got["events"].([]any) {
		out = append(out, e.(map[string]any))
	}
	return out
}

// only is the one event of action in events about userId; it fails unless there is exactly one.
func only(t *testing.T, events []map[string]any, action, userID string) map[string]any {
	t.Helper()
	var found []map[string]any
	for _, e := range events {
		if e["action"] == action && e["metadata"].(map[string]any)["userId"] == userID {
			found = append(found, e)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d %s events of %s in %v", len(found), action, userID, events)
	}
	return found[0]
}

func expectEvent(t *testing.T, e map[string]any, want map[string]any, metadata map[string]any) {
	t.Helper()
	for k, v := range want {
		if fmt.Sprint(e[k]) != fmt.Sprint(v) {
			t.Errorf("%s: %s = %v, want %v", e["action"], k, e[k], v)
		}
	}
	for k, v := range metadata {
		if fmt.Sprint(e["metadata"].(map[string]any)[k]) != fmt.Sprint(v) {
			t.Errorf("%s: metadata.%s = %v, want %v", e["action"], k, e["metadata"].(map[string]any)[k], v)
		}
	}
}

// Sign-ups, sign-ins, failed sign-ins and password changes of a project's end users are
// audit events of that project (SPEC §28), each naming its actor and the request that
// caused it; a failure for an address that names no account leaves nothing.
func TestSignInEventsInTheTenantsTrail(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := apptest.Start(t, st)
		admin := a.SignUp(t)
		prj := a.CreateProject(t, admin)
		email, password := apptest.UniqueEmail(t), "correct horse battery"
		post := func(path, requestID string, body map[string]any, header map[string]string) *apptest.Response {
			h := map[string]string{"X-Request-Id": requestID}
			for k, v := range header {
				h[k] = v
			}
			return a.Do(apptest.Req{Method: http.MethodPost, Path: path, Body: body, Header: h})
		}

		up := post("/v1/auth-core/signup", "req-signup-1", map[string]any{"email": email, "password": password, "tenantId": prj}, nil).Expect(t, 201, nil)
		userID := up["user"].(map[string]any)["id"].(string)
		access := up["session"].(map[string]any)["accessToken"].(string)
		expectEvent(t, only(t, trail(t, a, admin, prj), "user.signup", userID),
			map[string]any{"actorId": userID, "actorType": "user", "projectId": prj, "requestId": "req-signup-1", "act": nil, "orgId": nil},
			map[string]any{"method": "password"})

		post("/v1/auth-core/signin", "req-signin-1", map[string]any{"email": email, "password": password, "tenantId": prj}, nil).Expect(t, 200, nil)
		expectEvent(t, only(t, trail(t, a, admin, prj), "user.signin", userID),
			map[string]any{"actorId": userID, "actorType": "user", "requestId": "req-signin-1"}, map[string]any{"method": "password"})

		// The actor of a failure is whoever typed the password: a person, not the account.
		post("/v1/auth-core/signin", "req-wrong-1", map[string]any{"email": email, "password": "wrong password", "tenantId": prj}, nil).
			Expect(t, 401, map[string]any{"code": "invalid_credentials"})
		expectEvent(t, only(t, trail(t, a, admin, prj), "user.signin_failed", userID),
			map[string]any{"actorId": nil, "actorType": "user", "requestId": "req-wrong-1"},
			map[string]any{"method": "password", "reason": "invalid_credentials"})

		before := len(trail(t, a, admin, prj))
		post("/v1/auth-core/signin", "req-nobody", map[string]any{"email": "nobody-" + email, "password": "wrong password", "tenantId": prj}, nil).
			Expect(t, 401, map[string]any{"code": "invalid_credentials"})
		if n := len(trail(t, a, admin, prj)); n != before {
			t.Fatalf("a failure for no account wrote %d events", n-before)
		}

		post("/v1/auth-core/password/change", "req-change-1", map[string]any{"currentPassword": password, "password": "another good passphrase"},
			map[string]string{"Authorization": "Bearer " + access}).Expect(t, 200, nil)
		expectEvent(t, only(t, trail(t, a, admin, prj), "user.password_change", userID),
			map[string]any{"actorId": userID, "actorType": "user", "requestId": "req-change-1"}, nil)

		// A dashboard user's are in the dashboard tenant's trail, which no project shows.
		dash := a.SignUp(t)
		n, err := a.Ent.AuditEvent.Query().Where(auditevent.ProjectID("public"), auditevent.Action("user.signup"), auditevent.ActorID(dash.UserID)).Count(context.Background())
		if err != nil || n != 1 {
			t.Fatalf("dashboard sign-up: %d events, %v", n, err)
		}
		for _, e := range trail(t, a, admin, prj) {
			if e["actorId"] == dash.UserID {
				t.Fatalf("a dashboard user's event in a project's trail: %v", e)
			}
		}
	})
}

// A flood of wrong passwords writes no more failures than the account's budget admits
// (10 per 15 minutes): past it the answer is 429 and nothing is written.
func TestFailedSignInsAreBoundedByTheBudget(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := apptest.Start(t, st, apptest.WithConfig(func(c *config.Config) { c.RateLimit = 1000 }))
		victim := a.SignUp(t)
		for range 10 {
			signin(a, map[string]any{"email": victim.Email, "password": "wrong password"}).Expect(t, 401, nil)
		}
		for range 5 {
			signin(a, map[string]any{"email": victim.Email, "password": "wrong password"}).Expect(t, 429, map[string]any{"code": "rate_limited"})
		}
		// Each test binary's database is shared by its tests: count the victim's only.
		evs := a.Ent.AuditEvent.Query().Where(auditevent.ProjectID("public"), auditevent.Action("user.signin_failed")).AllX(context.Background())
		n := 0
		for _, e := range evs {
			if e.Metadata["userId"] == victim.UserID {
				n++
			}
		}
		if n != 10 {
			t.Fatalf("%d failures recorded, want the budget's 10", n)
		}
	})
}
