package federation_test

import (
	"net/http"
	"testing"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/platform/config"
)

func deviceCookie(t *testing.T, r *apptest.Response) *http.Cookie {
	t.Helper()
	for _, c := range (&http.Response{Header: r.Header}).Cookies() {
		if c.Name == "acDevice" && c.Value != "" {
			return &http.Cookie{Name: c.Name, Value: c.Value}
		}
	}
	t.Fatalf("no device cookie in %v", r.Header)
	return nil
}

// Wrong mailed codes spend a budget of their own (issue 46): failing codes for an account
// locks neither its password sign-in nor, thanks to its device cookie (SPEC §9a), its
// owner's browser from signing in by code.
func TestMailedCodesBudget(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st, apptest.WithConfig(func(c *config.Config) { c.RateLimit = 1000 }))
		w.a.Do(apptest.Req{Method: http.MethodPut, Path: "/v1/projects/" + w.project + "/auth/methods", Header: w.admin.Bearer(),
			Body: map[string]any{"password": true, "emailLink": true}}).Expect(t, 200, nil)
		owner := apptest.UniqueEmail(t)
		w.signUpIn(t, owner)
		password := func(cookies ...*http.Cookie) *apptest.Response {
			return w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signin", Cookies: cookies,
				Body: map[string]any{"email": owner, "password": "correct horse battery", "tenantId": w.project}})
		}
		byCode := func(code string, cookies ...*http.Cookie) *apptest.Response {
			return w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/email/signin", Cookies: cookies,
				Body: map[string]any{"email": owner, "code": code, "tenantId": w.project}})
		}
		first := password()
		first.Expect(t, 200, nil)
		mine := deviceCookie(t, first) // the owner's browser

		// Someone guesses codes for the account, from anywhere, without the owner's cookie.
		for range 10 {
			byCode("000000").Expect(t, 400, map[string]any{"code": "invalid_code"})
		}
		byCode("000000").Expect(t, 429, map[string]any{"code": "rate_limited"})

		t.Run("wrong codes do not lock password sign-in", func(t *testing.T) {
			password().Expect(t, 200, nil)
		})
		t.Run("the owner's device cookie keeps them in by code", func(t *testing.T) {
			w.mailRequest(t, owner).Expect(t, 202, nil)
			code, _ := w.waitMail(t, owner, 1)
			byCode(code).Expect(t, 429, map[string]any{"code": "rate_limited"}) // another browser: the account's budget is spent
			in := byCode(code, mine)
			in.Expect(t, 200, nil)
			deviceCookie(t, in) // a sign-in by code is a completed one: a fresh cookie
		})
	})
}
