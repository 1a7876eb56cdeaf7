package federation_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/authcore/authcore/ent/auditevent"
	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/internal/testkit"
	"github.com/authcore/authcore/platform/config"
)

var (
	mailedCode  = regexp.MustCompile(`Your code: ([0-9]{6})`)
	mailedToken = regexp.MustCompile(`token=(ac_esl_[A-Za-z0-9]+)`)
)

// mailsTo are the mails to one address, in order.
func (w *world) mailsTo(to string) []testkit.Mail {
	var out []testkit.Mail
	for _, m := range w.inbox.Mails() {
		if m.To == to {
			out = append(out, m)
		}
	}
	return out
}

// waitMail waits for the nth mail to an address and returns its code and token.
func (w *world) waitMail(t *testing.T, to string, n int) (code, token string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(w.mailsTo(to)) < n && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	ms := w.mailsTo(to)
	if len(ms) < n {
		t.Fatalf("%d mails to %s, want %d", len(ms), to, n)
	}
	m := ms[n-1]
	c, k := mailedCode.FindStringSubmatch(m.Text), mailedToken.FindStringSubmatch(m.Text)
	if c == nil || k == nil {
		t.Fatalf("mail without a code or a link:\n%s", m.Text)
	}
	return c[1], k[1]
}

func (w *world) mailRequest(t *testing.T, email string) *testkit.Response {
	t.Helper()
	return w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/email/signin-request", Body: map[string]any{"email": email, "tenantId": w.project}})
}

func (w *world) mailSignIn(t *testing.T, body map[string]any) *testkit.Response {
	t.Helper()
	return w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/email/signin", Body: body})
}

// Sign-in by a mailed link or code (SPEC §20), rule by rule.
func TestEmailSignIn(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		methods := "/v1/projects/" + w.project + "/auth/methods"

		t.Run("off unless the tenant turns it on", func(t *testing.T) {
			w.mailRequest(t, apptest.UniqueEmail(t)).Expect(t, 403, map[string]any{"code": "method_disabled"})
			w.a.Do(apptest.Req{Method: http.MethodPut, Path: methods, Header: w.admin.Bearer(), Body: map[string]any{"password": true, "emailLink": true}}).
				Expect(t, 200, map[string]any{"password": true, "emailLink": true, "autoLink": true})
			w.a.Get("/v1/auth-core/providers?tenantId="+w.project).Expect(t, 200, map[string]any{"emailLink": true})
		})
		t.Run("bad input", func(t *testing.T) {
			for name, b := range map[string]any{"no body": nil, "not an object": []int{1}, "no email": map[string]any{},
				"email not a string": map[string]any{"email": 7}, "not an address": map[string]any{"email": "nobody"},
				"tenant not a string": map[string]any{"email": "a@example.com", "tenantId": 7}} {
				r := w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/email/signin-request", Body: b})
				if r.Status != 400 || r.JSON(t)["code"] != "validation_failed" {
					t.Errorf("%s: %d %s", name, r.Status, r.Body)
				}
			}
			w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/email/signin-request", Body: map[string]any{"email": "a@example.com", "tenantId": "prj_nope"}}).
				Expect(t, 400, map[string]any{"code": "validation_failed"})
			for name, b := range map[string]any{"no body": nil, "neither": map[string]any{}, "short code": map[string]any{"email": "a@example.com", "code": "12345"},
				"code not digits": map[string]any{"email": "a@example.com", "code": "12345x"}, "both": map[string]any{"token": "ac_esl_x", "code": "123456"},
				"token not a string": map[string]any{"token": 1}} {
				r := w.mailSignIn(t, map[string]any{"x": 1})
				if b != nil {
					r = w.mailSignIn(t, b.(map[string]any))
				}
				if r.Status != 400 {
					t.Errorf("%s: %d %s", name, r.Status, r.Body)
				}
			}
			w.mailSignIn(t, map[string]any{"token": "ac_esl_notatoken"}).Expect(t, 400, map[string]any{"code": "invalid_token"})
		})
		t.Run("a new address signs up by its code, once", func(t *testing.T) {
			email := apptest.UniqueEmail(t)
			w.mailRequest(t, email).Expect(t, 202, map[string]any{"ok": true})
			code, token := w.waitMail(t, email, 1)
			got := w.mailSignIn(t, map[string]any{"email": strings.ToUpper(email), "code": code, "tenantId": w.project}).Expect(t, 200, nil)
			u := got["user"].(map[string]any)
			if u["email"] != email || u["emailVerified"] != true || u["tenantId"] != w.project {
				t.Fatalf("user %v", u)
			}
			w.mailSignIn(t, map[string]any{"email": email, "code": code, "tenantId": w.project}).Expect(t, 400, map[string]any{"code": "invalid_code"})
			w.mailSignIn(t, map[string]any{"token": token}).Expect(t, 400, map[string]any{"code": "invalid_token"})
			rec := w.a.Ent.AuditEvent.Query().Where(auditevent.Action("user.signin"), auditevent.ActorID(u["id"].(string))).OnlyX(t.Context())
			if rec.Metadata["via"] != "email_code" || rec.Metadata["method"] != "email_code" || rec.Metadata["signup"] != true {
				t.Fatalf("signin record %v", rec.Metadata)
			}
			up := w.a.Ent.AuditEvent.Query().Where(auditevent.Action("user.signup"), auditevent.ActorID(u["id"].(string))).OnlyX(t.Context())
			if up.ProjectID != w.project || up.Metadata["method"] != "email_code" || *up.ActorType != "user" {
				t.Fatalf("signup record %+v", up)
			}
		})
		t.Run("the link signs in an account and proves its address", func(t *testing.T) {
			email := apptest.UniqueEmail(t)
			id, _ := w.signUpIn(t, email)
			w.mailRequest(t, email).Expect(t, 202, map[string]any{"ok": true})
			_, token := w.waitMail(t, email, 1)
			got := w.mailSignIn(t, map[string]any{"token": token}).Expect(t, 200, nil)
			if u := got["user"].(map[string]any); u["id"] != id || u["emailVerified"] != true {
				t.Fatalf("user %v", u)
			}
			w.mailSignIn(t, map[string]any{"token": token}).Expect(t, 400, map[string]any{"code": "invalid_token"})
		})
		t.Run("ten minutes", func(t *testing.T) {
			email := apptest.UniqueEmail(t)
			w.mailRequest(t, email).Expect(t, 202, nil)
			code, token := w.waitMail(t, email, 1)
			w.a.Clock.Advance(10*time.Minute + time.Second)
			w.mailSignIn(t, map[string]any{"email": email, "code": code, "tenantId": w.project}).Expect(t, 400, map[string]any{"code": "invalid_code"})
			w.mailSignIn(t, map[string]any{"token": token}).Expect(t, 400, map[string]any{"code": "invalid_token"})
		})
		t.Run("five wrong codes kill it", func(t *testing.T) {
			email := apptest.UniqueEmail(t)
			w.mailRequest(t, email).Expect(t, 202, nil)
			code, token := w.waitMail(t, email, 1)
			wrong := "000000"
			if code == wrong {
				wrong = "111111"
			}
			for range 5 {
				w.mailSignIn(t, map[string]any{"email": email, "code": wrong, "tenantId": w.project}).Expect(t, 400, map[string]any{"code": "invalid_code"})
			}
			w.mailSignIn(t, map[string]any{"email": email, "code": code, "tenantId": w.project}).Expect(t, 400, map[string]any{"code": "invalid_code"})
			w.mailSignIn(t, map[string]any{"token": token}).Expect(t, 400, map[string]any{"code": "invalid_token"})
			if w.users(t, email) != 0 {
				t.Fatal("a user was created")
			}
		})
		t.Run("three mails an hour per address", func(t *testing.T) {
			email := apptest.UniqueEmail(t)
			for range 4 {
				w.mailRequest(t, email).Expect(t, 202, map[string]any{"ok": true})
			}
			w.waitMail(t, email, 3)
			time.Sleep(200 * time.Millisecond) // a fourth would have been queued by now
			if n := len(w.mailsTo(email)); n != 3 {
				t.Fatalf("%d mails", n)
			}
			w.a.Clock.Advance(time.Hour + time.Second)
			w.mailRequest(t, email).Expect(t, 202, nil)
			w.waitMail(t, email, 4)
		})
		t.Run("no enumeration; no account made when sign-up is closed", func(t *testing.T) {
			closed := apptest.StartURL(t, st.Name, w.a.Config.DatabaseURL, apptest.WithConfig(func(c *config.Config) {
				c.Signup, c.SMTPURL, c.WebhookAllowHTTP = "closed", w.inbox.URL, true
			}))
			known := apptest.UniqueEmail(t)
			w.signUpIn(t, known)
			unknown := "unknown-" + known
			a := closed.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/email/signin-request", Body: map[string]any{"email": known, "tenantId": w.project}})
			b := closed.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/email/signin-request", Body: map[string]any{"email": unknown, "tenantId": w.project}})
			if a.Status != 202 || b.Status != 202 || string(a.Body) != string(b.Body) {
				t.Fatalf("answers differ: %d %s / %d %s", a.Status, a.Body, b.Status, b.Body)
			}
			w.waitMail(t, known, 1)
			time.Sleep(200 * time.Millisecond)
			if len(w.mailsTo(unknown)) != 0 {
				t.Fatal("a mail went to an address with no account while sign-up is closed")
			}
		})
		t.Run("rate limited per client", func(t *testing.T) {
			limited := apptest.StartURL(t, st.Name, w.a.Config.DatabaseURL, apptest.WithConfig(func(c *config.Config) {
				c.RateLimit, c.SMTPURL = 3, w.inbox.URL
			}))
			var last *testkit.Response
			for range 4 {
				last = limited.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/email/signin", Body: map[string]any{"email": "x@example.com", "code": "123456", "tenantId": w.project}})
			}
			last.Expect(t, 429, map[string]any{"code": "rate_limited"})
		})
	})
}
