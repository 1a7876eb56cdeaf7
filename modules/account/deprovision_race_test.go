package account_test

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"go.uber.org/fx"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/platform/identity"
)

// admitThenDeprovision is the account module's identity.Users with one moment put in: the
// armed user's next Admit passes, and then, before it returns, their deprovisioning
// commits and sweeps their sessions. That is the moment between a sign-in's check and its
// session's insert, which real traffic hits only by chance.
type admitThenDeprovision struct {
	identity.Users
	mu    sync.Mutex
	user  string
	then  func()
	fired bool
}

func (u *admitThenDeprovision) Admit(ctx context.Context, userID string) error {
	err := u.Users.Admit(ctx, userID)
	u.mu.Lock()
	then := u.then
	if userID != u.user || err != nil {
		then = nil
	}
	u.then = nil
	u.fired = u.fired || then != nil
	u.mu.Unlock()
	if then != nil {
		then()
	}
	return err
}

// A deprovisioning that commits while a sign-in is between its check and its session
// leaves no session behind: the sign-in is refused (403 user_deprovisioned) and no
// refresh token of it lives.
func TestDeprovisionRacingASignIn(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		hook := &admitThenDeprovision{}
		w := &deprovWorld{}
		w.a = apptest.Start(t, st, deprovOptions(&w.dep, apptest.WithFx(fx.Decorate(func(u identity.Users) identity.Users {
			hook.Users = u
			return hook
		})))...)
		w.setUp(t)
		hook.mu.Lock()
		hook.user, hook.then = w.person.UserID, func() { w.deprovision(t) }
		hook.mu.Unlock()
		r := w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signin",
			Body: map[string]any{"email": w.person.Email, "password": w.person.Password, "tenantId": w.project}})
		if !hook.fired {
			t.Fatal("the sign-in never asked Admit")
		}
		if r.Status == http.StatusOK {
			var out struct {
				Session struct {
					RefreshToken string `json:"refreshToken"`
				} `json:"session"`
			}
			r.Decode(t, &out)
			ref := w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/session/refresh", Body: map[string]any{"refreshToken": out.Session.RefreshToken}})
			t.Fatalf("a deprovisioned person signed in (%d), and the session's refresh answers %d", r.Status, ref.Status)
		}
		r.Expect(t, 403, map[string]any{"code": "user_deprovisioned"})
	})
}
