package account_test

import (
	"context"
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
	resetToken  = regexp.MustCompile(`ac_rst_[0-9A-Za-z]{38}`)
	verifyToken = regexp.MustCompile(`ac_evf_[0-9A-Za-z]{38}`)
)

func withInbox(in *testkit.Inbox) apptest.Option {
	return apptest.WithConfig(func(c *config.Config) { c.SMTPURL = in.URL })
}

func post(a *apptest.App, path string, body any, header map[string]string) *apptest.Response {
	return a.Do(apptest.Req{Method: http.MethodPost, Path: path, Body: body, Header: header})
}

func me(a *apptest.App, s *apptest.Session) *apptest.Response {
	return a.Do(apptest.Req{Path: "/v1/auth-core/session/me", Header: s.Bearer()})
}

// A hostile display name must stay text in the HTML part.
const hostileName = `<script>alert("x")</script> & Co`

func signUpNamed(t *testing.T, a *apptest.App, tenant string) *apptest.Session {
	email := apptest.UniqueEmail(t)
	body := map[string]any{"email": email, "password": "correct horse battery", "name": hostileName}
	if tenant != "" {
		body["tenantId"] = tenant
	}
	r := post(a, "/v1/auth-core/signup", body, nil).Expect(t, 201, nil)
	s := r["session"].(map[string]any)
	return &apptest.Session{UserID: r["user"].(map[string]any)["id"].(string), Email: email, Password: "correct horse battery",
		SessionHandle: s["sessionHandle"].(string), AccessToken: s["accessToken"].(string), RefreshToken: s["refreshToken"].(string)}
}

func TestMailRoutesWithoutSMTP(t *testing.T) {
	a := apptest.StartURL(t, "sqlite", "sqlite::memory:")
	u := a.SignUp(t)
	post(a, "/v1/auth-core/password/reset-request", map[string]any{"email": u.Email}, nil).Expect(t, 503, map[string]any{"code": "mail_not_configured"})
	post(a, "/v1/auth-core/email/verify-request", nil, u.Bearer()).Expect(t, 503, map[string]any{"code": "mail_not_configured"})
}

func TestPasswordReset(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		in := testkit.StartInbox(t)
		a := apptest.Start(t, st, withInbox(in))
		u := signUpNamed(t, a, "")
		second := post(a, "/v1/auth-core/signin", map[string]any{"email": u.Email, "password": u.Password}, nil).Expect(t, 200, nil)
		secondSession := &apptest.Session{AccessToken: second["session"].(map[string]any)["accessToken"].(string)}

		t.Run("known and unknown accounts get the same answer; only the known one a mail", func(t *testing.T) {
			known := post(a, "/v1/auth-core/password/reset-request", map[string]any{"email": strings.ToUpper(u.Email)}, nil)
			unknown := post(a, "/v1/auth-core/password/reset-request", map[string]any{"email": "nobody-" + u.Email}, nil)
			known.Expect(t, 202, map[string]any{"ok": true})
			unknown.Expect(t, 202, map[string]any{"ok": true})
			if string(known.Body) != string(unknown.Body) {
				t.Fatalf("bodies differ: %s / %s", known.Body, unknown.Body)
			}
			mails := in.Wait(t, 1)
			time.Sleep(200 * time.Millisecond)
			if got := in.Mails(); len(got) != 1 || got[0].To != u.Email || !strings.Contains(got[0].Subject, "authcore") {
				t.Fatalf("mails %+v", got)
			}
			m := mails[0]
			if !strings.Contains(m.Text, a.Base+"/console/reset?token=ac_rst_") || !resetToken.MatchString(m.HTML) {
				t.Fatalf("no link:\n%s", m.Text)
			}
			if strings.Contains(m.HTML, "<script>") || !strings.Contains(m.HTML, "&lt;script&gt;") {
				t.Fatalf("the display name is not escaped in the HTML part:\n%s", m.HTML)
			}
		})
		token := resetToken.FindString(in.Mails()[0].Text)

		t.Run("a weak password is refused and does not consume the token", func(t *testing.T) {
			post(a, "/v1/auth-core/password/reset", map[string]any{"token": token, "password": "short"}, nil).
				Expect(t, 400, map[string]any{"code": "validation_failed"})
		})
		t.Run("unknown and malformed tokens are invalid_token", func(t *testing.T) {
			post(a, "/v1/auth-core/password/reset", map[string]any{"token": "ac_rst_" + strings.Repeat("0", 38), "password": "a new good password"}, nil).
				Expect(t, 400, map[string]any{"code": "invalid_token"})
			post(a, "/v1/auth-core/password/reset", map[string]any{"token": "nope", "password": "a new good password"}, nil).
				Expect(t, 400, map[string]any{"code": "invalid_token"})
			post(a, "/v1/auth-core/password/reset", map[string]any{"password": "a new good password"}, nil).
				Expect(t, 400, map[string]any{"code": "validation_failed"})
		})
		t.Run("the reset sets the password and revokes every session", func(t *testing.T) {
			me(a, u).Expect(t, 200, nil)
			post(a, "/v1/auth-core/password/reset", map[string]any{"token": token, "password": "a new good password"}, nil).Expect(t, 200, map[string]any{"ok": true})
			me(a, u).Expect(t, 401, map[string]any{"reason": "session_revoked"})
			me(a, secondSession).Expect(t, 401, map[string]any{"reason": "session_revoked"})
			post(a, "/v1/auth-core/signin", map[string]any{"email": u.Email, "password": u.Password}, nil).Expect(t, 401, nil)
			post(a, "/v1/auth-core/signin", map[string]any{"email": u.Email, "password": "a new good password"}, nil).Expect(t, 200, nil)
			ev, err := a.Ent.AuditEvent.Query().Where(auditevent.Action("user.password_reset"), auditevent.ActorID(u.UserID)).Only(context.Background())
			if err != nil || ev.ProjectID != "public" {
				t.Fatalf("%+v %v", ev, err)
			}
		})
		t.Run("a replayed token is invalid", func(t *testing.T) {
			post(a, "/v1/auth-core/password/reset", map[string]any{"token": token, "password": "another good password"}, nil).
				Expect(t, 400, map[string]any{"code": "invalid_token"})
		})
		t.Run("no token in any log line", func(t *testing.T) {
			if a.Logs.Contains(token) || a.Logs.Contains("ac_rst_") {
				t.Fatal("a reset token was logged")
			}
		})
	})
}

func TestResetLimitsAndExpiry(t *testing.T) {
	in := testkit.StartInbox(t)
	a := apptest.StartURL(t, "sqlite", "sqlite:"+t.TempDir()+"/a.db", withInbox(in))
	u := a.SignUp(t)
	for range 4 {
		post(a, "/v1/auth-core/password/reset-request", map[string]any{"email": u.Email}, nil).Expect(t, 202, nil)
	}
	in.Wait(t, 3)
	time.Sleep(300 * time.Millisecond)
	if n := len(in.Mails()); n != 3 {
		t.Fatalf("%d mails in an hour, want at most 3", n)
	}
	// Every token of these, and the next one after an hour, expires in 30 minutes.
	a.Clock.Advance(61 * time.Minute)
	post(a, "/v1/auth-core/password/reset-request", map[string]any{"email": u.Email}, nil).Expect(t, 202, nil)
	token := resetToken.FindString(in.Wait(t, 4)[3].Text)
	a.Clock.Advance(30 * time.Minute)
	post(a, "/v1/auth-core/password/reset", map[string]any{"token": token, "password": "a new good password"}, nil).
		Expect(t, 400, map[string]any{"code": "invalid_token"})
}

// A mail that fails once is sent again.
func TestMailRetries(t *testing.T) {
	in := testkit.StartInbox(t)
	in.FailNext(1)
	a := apptest.StartURL(t, "sqlite", "sqlite::memory:", withInbox(in))
	u := a.SignUp(t)
	post(a, "/v1/auth-core/password/reset-request", map[string]any{"email": u.Email}, nil).Expect(t, 202, nil)
	in.Wait(t, 1)
}

func TestPasswordChange(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := apptest.Start(t, st, apptest.WithConfig(func(c *config.Config) { c.RateLimit = 1000 }))
		u := a.SignUp(t)
		other := post(a, "/v1/auth-core/signin", map[string]any{"email": u.Email, "password": u.Password}, nil).Expect(t, 200, nil)
		otherSession := &apptest.Session{AccessToken: other["session"].(map[string]any)["accessToken"].(string)}
		change := func(current, next string) *apptest.Response {
			return post(a, "/v1/auth-core/password/change", map[string]any{"currentPassword": current, "password": next}, u.Bearer())
		}
		post(a, "/v1/auth-core/password/change", map[string]any{"currentPassword": u.Password, "password": "x"}, nil).Expect(t, 401, map[string]any{"code": "unauthorized"})
		change("wrong password", "a new good password").Expect(t, 401, map[string]any{"code": "invalid_credentials"})
		change(u.Password, "short").Expect(t, 400, map[string]any{"code": "validation_failed"})
		change(u.Password, "a new good password").Expect(t, 200, map[string]any{"ok": true})
		me(a, u).Expect(t, 200, nil) // the session that asked stays
		me(a, otherSession).Expect(t, 401, map[string]any{"reason": "session_revoked"})
		post(a, "/v1/auth-core/signin", map[string]any{"email": u.Email, "password": "a new good password"}, nil).Expect(t, 200, nil)
		// Wrong current passwords spend the account's sign-in budget.
		for range 9 {
			change("wrong password", "another good one").Expect(t, 401, nil)
		}
		post(a, "/v1/auth-core/signin", map[string]any{"email": u.Email, "password": "a new good password"}, nil).Expect(t, 429, map[string]any{"code": "rate_limited"})
	})
}

func TestEmailVerification(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		in := testkit.StartInbox(t)
		a := apptest.Start(t, st, withInbox(in), apptest.WithConfig(func(c *config.Config) { c.RequireVerifiedEmail = true }))
		u := signUpNamed(t, a, "")
		a.Do(apptest.Req{Path: "/v1/projects", Header: u.Bearer()}).Expect(t, 403, map[string]any{"code": "email_not_verified"})
		me(a, u).Expect(t, 200, map[string]any{"user": map[string]any{"id": u.UserID, "email": u.Email, "name": hostileName, "emailVerified": false}})

		post(a, "/v1/auth-core/email/verify-request", nil, u.Bearer()).Expect(t, 202, map[string]any{"ok": true})
		m := in.Wait(t, 1)[0]
		token := verifyToken.FindString(m.Text)
		if token == "" || m.To != u.Email || strings.Contains(m.HTML, "<script>") {
			t.Fatalf("%+v", m)
		}
		post(a, "/v1/auth-core/email/verify", map[string]any{"token": "ac_evf_" + strings.Repeat("1", 38)}, nil).Expect(t, 400, map[string]any{"code": "invalid_token"})
		// Followed with the account's own session (as the console does), the proof keeps
		// the password: whoever set it holds the mailbox.
		post(a, "/v1/auth-core/email/verify", map[string]any{"token": token}, u.Bearer()).Expect(t, 200, map[string]any{"ok": true, "emailVerified": true, "credentialsRemoved": false})
		post(a, "/v1/auth-core/email/verify", map[string]any{"token": token}, nil).Expect(t, 400, map[string]any{"code": "invalid_token"})
		me(a, u).Expect(t, 200, map[string]any{"user": map[string]any{"id": u.UserID, "email": u.Email, "name": hostileName, "emailVerified": true}})
		a.Do(apptest.Req{Path: "/v1/projects", Header: u.Bearer()}).Expect(t, 200, nil)
		r := post(a, "/v1/auth-core/signin", map[string]any{"email": u.Email, "password": u.Password}, nil).Expect(t, 200, nil)
		if r["user"].(map[string]any)["emailVerified"] != true {
			t.Fatalf("%v", r["user"])
		}
	})
}

// A project's end users reset in their tenant, and their mail names the project, in its
// labelled place only (not in the subject).
func TestTenantUserReset(t *testing.T) {
	in := testkit.StartInbox(t)
	a := apptest.StartURL(t, "sqlite", "sqlite::memory:", withInbox(in))
	admin := a.SignUp(t)
	prj := a.CreateProject(t, admin)
	end := a.SignUpIn(t, prj)
	post(a, "/v1/auth-core/password/reset-request", map[string]any{"email": end.Email}, nil).Expect(t, 202, nil) // tenant public: nobody
	post(a, "/v1/auth-core/password/reset-request", map[string]any{"email": end.Email, "tenantId": prj}, nil).Expect(t, 202, nil)
	m := in.Wait(t, 1)
	time.Sleep(200 * time.Millisecond)
	if len(in.Mails()) != 1 || strings.Contains(m[0].Subject, "TestTenantUserReset") || !strings.Contains(m[0].Text, `Project: "Project TestTenantUserReset"`) {
		t.Fatalf("%+v", in.Mails())
	}
	token := resetToken.FindString(m[0].Text)
	post(a, "/v1/auth-core/password/reset", map[string]any{"token": token, "password": "a new good password"}, nil).Expect(t, 200, nil)
	post(a, "/v1/auth-core/signin", map[string]any{"email": end.Email, "password": "a new good password", "tenantId": prj}, nil).Expect(t, 200, nil)
}

// Two replicas on one PostgreSQL: a reset on one kills the sessions the other had cached.
func TestResetRevokesOnAnotherReplica(t *testing.T) {
	if apptest.PostgresAdminURL() == "" {
		t.Skip("needs PostgreSQL (" + apptest.EnvDatabaseURL + ")")
	}
	url := apptest.Stores(t)[1].URL(t)
	in := testkit.StartInbox(t)
	a := apptest.StartURL(t, "postgres", url, withInbox(in))
	b := apptest.StartURL(t, "postgres", url)
	u := a.SignUp(t)
	me(b, u).Expect(t, 200, nil) // cached as live on b
	post(a, "/v1/auth-core/password/reset-request", map[string]any{"email": u.Email}, nil).Expect(t, 202, nil)
	token := resetToken.FindString(in.Wait(t, 1)[0].Text)
	post(a, "/v1/auth-core/password/reset", map[string]any{"token": token, "password": "a new good password"}, nil).Expect(t, 200, nil)
	deadline := time.Now().Add(time.Second)
	for me(b, u).Status != 401 {
		if time.Now().After(deadline) {
			t.Fatal("replica b still accepts the session 1 s after the reset")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
