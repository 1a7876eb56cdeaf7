package federation_test

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"github.com/authcore/authcore/ent/auditevent"
	"github.com/authcore/authcore/ent/event"
	"github.com/authcore/authcore/ent/identity"
	"github.com/authcore/authcore/internal/apptest"
)

// signUpIn makes a password user of the project's tenant.
func (w *world) signUpIn(t testing.TB, email string) (userID, access string) {
	t.Helper()
	r := w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signup",
		Body: map[string]any{"email": email, "password": "correct horse battery", "tenantId": w.project}}).Expect(t, 201, nil)
	return r["user"].(map[string]any)["id"].(string), r["session"].(map[string]any)["accessToken"].(string)
}

func (w *world) identities(t *testing.T, userID string) int {
	t.Helper()
	return w.a.Ent.Identity.Query().Where(identity.UserID(userID)).CountX(t.Context())
}

// A new upstream subject is linked to an existing account only when the provider is
// trusted for email, says the address is verified, and the account proved it too; in
// every other case nobody is signed in and nothing is written (SPEC §20).
func TestLinkingByEmail(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		trusted := w.addProvider(t, nil)
		untrusted := w.addProvider(t, map[string]any{"name": "Untrusted", "trustEmail": false})

		refused := func(t *testing.T, p provider, login, code string) {
			t.Helper()
			res := newPerson(t).via(p.Start, login)
			page := body(t, res)
			if res.StatusCode < 400 || cookie(res, "sAccessToken") != "" || !strings.Contains(page, code) {
				t.Fatalf("want a refusal %s; got %d %s", code, res.StatusCode, page)
			}
		}

		t.Run("unverified upstream email matching an account", func(t *testing.T) {
			email := apptest.UniqueEmail(t)
			id, _ := w.signUpIn(t, email)
			w.verifyEmail(t, id)
			refused(t, trusted, w.account(t, email, false).Login, "account_exists")
			if w.identities(t, id) != 0 {
				t.Fatal("an identity was linked")
			}
		})
		t.Run("provider not trusted for email", func(t *testing.T) {
			email := apptest.UniqueEmail(t)
			id, _ := w.signUpIn(t, email)
			w.verifyEmail(t, id)
			refused(t, untrusted, w.account(t, email, true).Login, "account_exists")
			if w.identities(t, id) != 0 {
				t.Fatal("an identity was linked")
			}
		})
		t.Run("existing account never proved its address", func(t *testing.T) {
			email := apptest.UniqueEmail(t)
			id, _ := w.signUpIn(t, email)
			refused(t, trusted, w.account(t, email, true).Login, "account_exists")
			if w.identities(t, id) != 0 {
				t.Fatal("an identity was linked")
			}
		})
		t.Run("no account, upstream does not vouch", func(t *testing.T) {
			email := apptest.UniqueEmail(t)
			refused(t, trusted, w.account(t, email, false).Login, "email_not_verified")
			refused(t, untrusted, w.account(t, email, true).Login, "email_not_verified")
			if w.users(t, email) != 0 {
				t.Fatal("a user was created")
			}
		})
		t.Run("no email at all", func(t *testing.T) {
			refused(t, trusted, w.account(t, "", false).Login, "email_required")
		})
		t.Run("both proved: linked and signed in", func(t *testing.T) {
			email := apptest.UniqueEmail(t)
			id, _ := w.signUpIn(t, email)
			w.verifyEmail(t, id)
			res := newPerson(t).via(trusted.Start, w.account(t, email, true).Login)
			access := cookie(res, "sAccessToken")
			if res.StatusCode != http.StatusFound || access == "" {
				t.Fatalf("%d %s", res.StatusCode, body(t, res))
			}
			me := w.a.Get("/v1/auth-core/session/me", "Authorization", "Bearer "+access).Expect(t, 200, nil)
			if me["userId"] != id || w.identities(t, id) != 1 {
				t.Fatalf("signed in as %v with %d identities", me["userId"], w.identities(t, id))
			}
			rec := w.a.Ent.AuditEvent.Query().Where(auditevent.Action("user.identity_link"), auditevent.ActorID(id)).OnlyX(t.Context())
			if rec.Metadata["how"] != "email" {
				t.Fatalf("link record %v", rec.Metadata)
			}
		})
		t.Run("tenant turned linking by email off", func(t *testing.T) {
			w.a.Do(apptest.Req{Method: http.MethodPut, Path: "/v1/projects/" + w.project + "/auth/methods", Header: w.admin.Bearer(),
				Body: map[string]any{"password": true, "emailLink": false, "autoLink": false}}).Expect(t, 200, map[string]any{"autoLink": false})
			defer func() {
				w.a.Do(apptest.Req{Method: http.MethodPut, Path: "/v1/projects/" + w.project + "/auth/methods", Header: w.admin.Bearer(),
					Body: map[string]any{"password": true, "emailLink": false, "autoLink": true}}).Expect(t, 200, nil)
			}()
			email := apptest.UniqueEmail(t)
			id, _ := w.signUpIn(t, email)
			w.verifyEmail(t, id)
			refused(t, trusted, w.account(t, email, true).Login, "account_exists")
		})
	})
}

// link starts a link of p for the signed-in access token and follows it as login.
func (w *world) link(t *testing.T, access string, p provider, login string) *http.Response {
	t.Helper()
	person := newPerson(t)
	r := w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/identities/link/" + p.ID, Header: bearer(access)})
	r.Expect(t, 200, nil)
	// The link sets the browser's binding cookie on its answer: the person's jar needs it.
	u, _ := url.Parse(w.a.Base)
	person.http.Jar.SetCookies(u, (&http.Response{Header: r.Header}).Cookies())
	res, err := person.http.Get(r.JSON(t)["redirectTo"].(string))
	if err != nil {
		t.Fatal(err)
	}
	return person.through(res, login)
}

// A signed-in person links a provider explicitly, whatever the upstream's address; a
// subject linked to someone else is refused; unlinking never removes the last way in.
func TestLinkAndUnlink(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		a, b := w.addProvider(t, nil), w.addProvider(t, map[string]any{"name": "Second"})
		// Links and unlinks are webhook events of the user's tenant (SPEC §12).
		w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + w.project + "/webhooks", Header: w.admin.Bearer(),
			Body: map[string]any{"url": "https://93.184.215.14/hook", "events": []string{"user.identity_link", "user.identity_unlink"}}}).Expect(t, 201, nil)

		// Someone who signed up through a, and has no password.
		email := apptest.UniqueEmail(t)
		first := w.account(t, email, true)
		res := newPerson(t).via(a.Start, first.Login)
		access := cookie(res, "sAccessToken")
		me := w.a.Get("/v1/auth-core/session/me", "Authorization", "Bearer "+access).Expect(t, 200, nil)
		userID := me["userId"].(string)
		ids := w.a.Do(apptest.Req{Method: http.MethodGet, Path: "/v1/auth-core/identities", Header: bearer(access)}).Expect(t, 200, nil)["identities"].([]any)
		only := ids[0].(map[string]any)["id"].(string)
		w.a.Do(apptest.Req{Method: http.MethodDelete, Path: "/v1/auth-core/identities/" + only, Header: bearer(access)}).
			Expect(t, 409, map[string]any{"code": "last_sign_in_method"})

		// Linking b: an upstream account under another, unverified address is fine when the
		// person is signed in and asks for it.
		other := w.account(t, "", false)
		res = w.link(t, access, b, other.Login)
		if res.StatusCode != http.StatusFound || res.Header.Get("Location") != w.a.Config.PublicURL+"/console#/account" || cookie(res, "sAccessToken") != "" {
			t.Fatalf("link: %d %s %s", res.StatusCode, res.Header.Get("Location"), body(t, res))
		}
		if w.identities(t, userID) != 2 {
			t.Fatalf("%d identities after the link", w.identities(t, userID))
		}

		// Someone else may not link the subject that is already this user's.
		_, stranger := w.signUpIn(t, apptest.UniqueEmail(t))
		res = w.link(t, stranger, b, other.Login)
		if page := body(t, res); res.StatusCode != http.StatusConflict || !strings.Contains(page, "identity_taken") {
			t.Fatalf("linking a taken subject: %d %s", res.StatusCode, page)
		}

		// Now a may go: b remains.
		w.a.Do(apptest.Req{Method: http.MethodDelete, Path: "/v1/auth-core/identities/" + only, Header: bearer(access)}).Expect(t, 200, map[string]any{"ok": true, "id": only})
		w.a.Do(apptest.Req{Method: http.MethodDelete, Path: "/v1/auth-core/identities/" + only, Header: bearer(access)}).Expect(t, 404, map[string]any{"code": "identity_not_found"})
		if n := w.a.Ent.AuditEvent.Query().Where(auditevent.Action("user.identity_unlink"), auditevent.ActorID(userID)).CountX(t.Context()); n != 1 {
			t.Fatalf("%d unlink records", n)
		}
		for _, typ := range []string{"user.identity_link", "user.identity_unlink"} {
			if n := w.a.Ent.Event.Query().Where(event.ProjectID(w.project), event.Type(typ)).CountX(t.Context()); n < 1 {
				t.Fatalf("no %s event", typ)
			}
		}
		// Another user's identity is not found either.
		rest := w.a.Ent.Identity.Query().Where(identity.UserID(userID)).OnlyX(t.Context())
		w.a.Do(apptest.Req{Method: http.MethodDelete, Path: "/v1/auth-core/identities/" + rest.ID, Header: bearer(stranger)}).Expect(t, 404, nil)
		// The last one stays, unless the tenant's email link is a way in.
		w.a.Do(apptest.Req{Method: http.MethodDelete, Path: "/v1/auth-core/identities/" + rest.ID, Header: bearer(access)}).Expect(t, 409, nil)
		w.a.Do(apptest.Req{Method: http.MethodPut, Path: "/v1/projects/" + w.project + "/auth/methods", Header: w.admin.Bearer(),
			Body: map[string]any{"password": true, "emailLink": true}}).Expect(t, 200, nil)
		w.a.Do(apptest.Req{Method: http.MethodDelete, Path: "/v1/auth-core/identities/" + rest.ID, Header: bearer(access)}).Expect(t, 200, nil)

		// A link needs a provider of the person's own tenant.
		dash := w.a.SignUp(t)
		w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/identities/link/" + a.ID, Header: dash.Bearer()}).
			Expect(t, 404, map[string]any{"code": "provider_not_found"})
	})
}

func totpCode(t *testing.T, secret string, at time.Time) string {
	t.Helper()
	c, err := totp.GenerateCodeCustom(secret, at, totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A user with a second factor who signs in upstream gets no session until the second
// step (SPEC §17): the callback sends them to the console's second step with an mfaToken.
func TestSecondFactorAfterUpstream(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		p := w.addProvider(t, nil)
		acc := w.account(t, apptest.UniqueEmail(t), true)
		access := cookie(newPerson(t).via(p.Start, acc.Login), "sAccessToken")
		pending := w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/mfa/totp", Body: map[string]any{}, Header: bearer(access)}).Expect(t, 201, nil)
		secret := pending["secret"].(string)
		w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/mfa/totp/" + pending["id"].(string) + "/confirm",
			Body: map[string]any{"code": totpCode(t, secret, w.a.Clock.Now())}, Header: bearer(access)}).Expect(t, 200, nil)

		res := newPerson(t).via(p.Start, acc.Login)
		loc := res.Header.Get("Location")
		if res.StatusCode != http.StatusFound || cookie(res, "sAccessToken") != "" || !strings.HasPrefix(loc, w.a.Config.PublicURL+"/console#/mfa?") {
			t.Fatalf("callback with a factor: %d %s", res.StatusCode, loc)
		}
		q, _ := url.ParseQuery(strings.SplitN(loc, "?", 2)[1])
		if q.Get("methods") != "totp,recovery_code" || !strings.HasPrefix(q.Get("token"), "ac_mft_") {
			t.Fatalf("second step %v", q)
		}
		w.a.Clock.Advance(30 * time.Second) // the enrolment spent this step's code
		got := w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/mfa/verify",
			Body: map[string]any{"mfaToken": q.Get("token"), "code": totpCode(t, secret, w.a.Clock.Now())}}).Expect(t, 200, nil)
		claims := apptest.ClaimsOf(t, got["session"].(map[string]any)["accessToken"].(string))
		// The MFA module's second step names its own factor and mfa (it writes pwd for the
		// first step whatever it was: see the report).
		if amr := claims["amr"].([]any); !slices.Contains(amr, any("otp")) || !slices.Contains(amr, any("mfa")) {
			t.Fatalf("amr %v", claims["amr"])
		}
	})
}
