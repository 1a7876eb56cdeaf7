package mfa_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/authcore/authcore/internal/apptest"
)

// A two-step sign-in of a project's end user is audited in the project (SPEC §28): the
// password as user.signin, a wrong second factor as user.signin_failed, the right one as
// user.signin_second_factor, each naming the factor.
func TestSecondFactorEventsInTheTenantsTrail(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := apptest.Start(t, st)
		admin := a.SignUp(t)
		prj := a.CreateProject(t, admin)
		u := a.SignUpIn(t, prj)
		secret, codes := enrolTOTP(t, a, u)
		a.Clock.Advance(time.Minute) // past the step the enrolment used

		events := func(action string) []map[string]any {
			got := a.Do(apptest.Req{Path: "/v1/projects/" + prj + "/audit?limit=200", Header: admin.Bearer()}).Expect(t, 200, nil)
			var out []map[string]any
			for _, e := range got["events"].([]any) {
				if e := e.(map[string]any); e["action"] == action && e["metadata"].(map[string]any)["userId"] == u.UserID {
					out = append(out, e)
				}
			}
			return out
		}
		methods := func(action string) string {
			var out []any
			for _, e := range events(action) {
				m := e["metadata"].(map[string]any)
				out = append(out, []any{m["method"], m["reason"], e["actorId"] != nil, e["actorType"]})
			}
			return fmt.Sprint(out)
		}

		token := signIn(t, a, u, prj)["mfaToken"].(string)
		post(a, "/v1/auth-core/mfa/verify", map[string]any{"mfaToken": token, "code": "000000"}, nil).Expect(t, 401, map[string]any{"code": "invalid_second_factor"})
		post(a, "/v1/auth-core/mfa/verify", map[string]any{"mfaToken": token, "recoveryCode": "AAAA-BBBB"}, nil).Expect(t, 401, map[string]any{"code": "invalid_second_factor"})
		post(a, "/v1/auth-core/mfa/verify", map[string]any{"mfaToken": token, "code": code(t, secret, a.Clock.Now())}, nil).Expect(t, 200, nil)
		token = signIn(t, a, u, prj)["mfaToken"].(string)
		post(a, "/v1/auth-core/mfa/verify", map[string]any{"mfaToken": token, "recoveryCode": codes[0]}, nil).Expect(t, 200, nil)

		// Newest first. A failure's actor is whoever typed, not the account.
		if got, want := methods("user.signin_failed"), "[[recovery_code invalid_second_factor false user] [totp invalid_second_factor false user]]"; got != want {
			t.Errorf("failures: %s, want %s", got, want)
		}
		if got, want := methods("user.signin_second_factor"), "[[recovery_code <nil> true user] [totp <nil> true user]]"; got != want {
			t.Errorf("second factors: %s, want %s", got, want)
		}
		// The sign-up's own sign-in is not one: the two password steps are.
		if got, want := methods("user.signin"), "[[password <nil> true user] [password <nil> true user]]"; got != want {
			t.Errorf("first factors: %s, want %s", got, want)
		}
	})
}
