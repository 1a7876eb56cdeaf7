package federation_test

import (
	"net/http"
	"net/url"
	"regexp"
	"testing"

	"github.com/authcore/authcore/ent/mfafactor"
	"github.com/authcore/authcore/internal/apptest"
)

var verifyLink = regexp.MustCompile(`ac_evf_[0-9A-Za-z]{38}`)

// squatter is an attacker who signed up with someone else's address and a password and
// made themselves at home before the address's owner ever came: a linked identity of
// their own, a TOTP factor, a session with its refresh token.
type squatter struct {
	email, userID, access, refresh, login string
}

func (w *world) squat(t *testing.T, tenant string, link provider) squatter {
	t.Helper()
	s := squatter{email: apptest.UniqueEmail(t)}
	in := map[string]any{"email": s.email, "password": "attacker's password"}
	if tenant != "" {
		in["tenantId"] = tenant
	}
	r := w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signup", Body: in}).Expect(t, 201, nil)
	sess := r["session"].(map[string]any)
	s.userID, s.access, s.refresh = r["user"].(map[string]any)["id"].(string), sess["accessToken"].(string), sess["refreshToken"].(string)
	// An upstream account of the attacker's, under another address, linked while signed in.
	s.login = w.account(t, "attacker-"+rnd(4)+"@elsewhere.test", true).Login
	if res := w.link(t, s.access, link, s.login); res.StatusCode != http.StatusFound {
		t.Fatalf("link: %d %s", res.StatusCode, body(t, res))
	}
	if w.identities(t, s.userID) != 1 {
		t.Fatal("the attacker's identity was not linked")
	}
	pending := w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/mfa/totp", Body: map[string]any{}, Header: bearer(s.access)}).Expect(t, 201, nil)
	w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/mfa/totp/" + pending["id"].(string) + "/confirm",
		Body: map[string]any{"code": totpCode(t, pending["secret"].(string), w.a.Clock.Now())}, Header: bearer(s.access)}).Expect(t, 200, nil)
	return s
}

// locksOut checks that nothing the attacker set before the owner's proof still works.
func (w *world) locksOut(t *testing.T, s squatter, tenant string, link provider) {
	t.Helper()
	in := map[string]any{"email": s.email, "password": "attacker's password"}
	if tenant != "" {
		in["tenantId"] = tenant
	}
	w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signin", Body: in}).Expect(t, 401, map[string]any{"code": "invalid_credentials"})
	w.a.Do(apptest.Req{Path: "/v1/auth-core/session/me", Header: bearer(s.access)}).Expect(t, 401, nil)
	if r := w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/session/refresh", Body: map[string]any{"refreshToken": s.refresh}}); r.Status != 401 {
		t.Fatalf("the attacker's refresh token: %d %s", r.Status, r.Body)
	}
	if n := w.identities(t, s.userID); n != 0 {
		t.Fatalf("%d identities linked before the proof remain", n)
	}
	if n := w.a.Ent.MFAFactor.Query().Where(mfafactor.UserID(s.userID)).CountX(t.Context()); n != 0 {
		t.Fatalf("%d factors set before the proof remain", n)
	}
	// The attacker's upstream account no longer signs in to the account (it makes an
	// account of its own address, if anything).
	if access := cookie(newPerson(t).via(link.Start, s.login), "sAccessToken"); access != "" {
		if me := w.a.Get("/v1/auth-core/session/me", "Authorization", "Bearer "+access).Expect(t, 200, nil); me["userId"] == s.userID {
			t.Fatal("the attacker's identity still signs in to the account")
		}
	}
}

// Pre-account takeover (issue 46): an attacker signs up with the victim's address and a
// password; when the victim proves the address by a mailed code or link, the account is
// theirs alone — the attacker's password, sessions, refresh tokens, OAuth grants, linked
// identity and second factor are gone.
func TestPreAccountTakeover(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		p := w.addProvider(t, map[string]any{"name": "Attacker's choice"})
		w.a.Do(apptest.Req{Method: http.MethodPut, Path: "/v1/projects/" + w.project + "/auth/methods", Header: w.admin.Bearer(),
			Body: map[string]any{"password": true, "emailLink": true}}).Expect(t, 200, nil)

		t.Run("email code", func(t *testing.T) {
			s := w.squat(t, w.project, p)
			w.mailRequest(t, s.email).Expect(t, 202, nil)
			code, _ := w.waitMail(t, s.email, 1)
			r := w.mailSignIn(t, map[string]any{"email": s.email, "code": code, "tenantId": w.project}).Expect(t, 200, nil)
			if u, _ := r["user"].(map[string]any); u["id"] != s.userID || u["emailVerified"] != true {
				t.Fatalf("the owner's proof did not sign them in alone: %v", r)
			}
			w.locksOut(t, s, w.project, p)
			// The victim's own session lives.
			w.a.Do(apptest.Req{Path: "/v1/auth-core/session/me", Header: bearer(r["session"].(map[string]any)["accessToken"].(string))}).Expect(t, 200, map[string]any{"userId": s.userID})
		})
		t.Run("email link", func(t *testing.T) {
			s := w.squat(t, w.project, p)
			w.mailRequest(t, s.email).Expect(t, 202, nil)
			_, token := w.waitMail(t, s.email, 1)
			if r := w.mailSignIn(t, map[string]any{"token": token}).Expect(t, 200, nil); r["user"] == nil {
				t.Fatalf("the owner's proof did not sign them in alone: %v", r)
			}
			w.locksOut(t, s, w.project, p)
		})
		t.Run("email verification link", func(t *testing.T) {
			s := w.squat(t, w.project, p)
			// The attacker asks for the verification mail; it reaches the victim, who follows it.
			w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/email/verify-request", Header: bearer(s.access)}).Expect(t, 202, nil)
			w.waitMailTo(t, s.email)
			token := verifyLink.FindString(w.mailsTo(s.email)[0].Text)
			w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/email/verify", Body: map[string]any{"token": token}}).
				Expect(t, 200, map[string]any{"emailVerified": true, "credentialsRemoved": true})
			w.locksOut(t, s, w.project, p)
		})
		t.Run("OAuth grants of a dashboard account", func(t *testing.T) {
			// A dashboard account squatted the same way, whose attacker approved an app.
			attacker := w.a.SignUp(t)
			prj := w.a.CreateProject(t, attacker)
			app := w.a.ConnectApp(t, attacker, prj, "")
			w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/email/verify-request", Header: attacker.Bearer()}).Expect(t, 202, nil)
			w.waitMailTo(t, attacker.Email)
			token := verifyLink.FindString(w.mailsTo(attacker.Email)[0].Text)
			w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/email/verify", Body: map[string]any{"token": token}}).
				Expect(t, 200, map[string]any{"credentialsRemoved": true})
			w.a.PostForm("/v1/oauth/token", url.Values{"grant_type": {"refresh_token"}, "client_id": {app.ClientID}, "refresh_token": {app.RefreshToken}}, nil).
				Expect(t, 400, map[string]any{"error": "invalid_grant"})
			w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signin", Body: map[string]any{"email": attacker.Email, "password": attacker.Password}}).
				Expect(t, 401, map[string]any{"code": "invalid_credentials"})
		})
		t.Run("the owner's own verification keeps the account", func(t *testing.T) {
			// Followed with the account's own session, the proof shows that whoever set the
			// password holds the mailbox: nothing is removed.
			id, access := w.signUpIn(t, apptest.UniqueEmail(t))
			email := w.a.Get("/v1/auth-core/session/me", "Authorization", "Bearer "+access).Expect(t, 200, nil)["user"].(map[string]any)["email"].(string)
			w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/email/verify-request", Header: bearer(access)}).Expect(t, 202, nil)
			w.waitMailTo(t, email)
			token := verifyLink.FindString(w.mailsTo(email)[0].Text)
			w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/email/verify", Body: map[string]any{"token": token}, Header: bearer(access)}).
				Expect(t, 200, map[string]any{"emailVerified": true, "credentialsRemoved": false})
			w.a.Do(apptest.Req{Path: "/v1/auth-core/session/me", Header: bearer(access)}).Expect(t, 200, map[string]any{"userId": id})
			w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signin", Body: map[string]any{"email": email, "password": "correct horse battery", "tenantId": w.project}}).Expect(t, 200, nil)
		})
	})
}
