package mfa_test

import (
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/internal/testkit"
	"github.com/authcore/authcore/platform/config"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// code is what an authenticator app shows for secret at t (RFC 6238, computed by the
// library a test trusts, not by the server's code).
func code(t testing.TB, secret string, at time.Time) string {
	t.Helper()
	c, err := totp.GenerateCodeCustom(secret, at, totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func post(a *apptest.App, path string, body any, header map[string]string) *testkit.Response {
	return a.Do(apptest.Req{Method: http.MethodPost, Path: path, Body: body, Header: header})
}

func bearer(token string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + token}
}

// enrolTOTP adds a TOTP app to s and returns its secret and the recovery codes of a first
// factor.
func enrolTOTP(t *testing.T, a *apptest.App, s *apptest.Session) (string, []string) {
	t.Helper()
	pending := post(a, "/v1/auth-core/mfa/totp", map[string]any{"name": "phone"}, s.Bearer()).Expect(t, 201, nil)
	secret := pending["secret"].(string)
	if u := pending["otpauthUrl"].(string); !strings.HasPrefix(u, "otpauth://totp/") || !strings.Contains(u, "secret="+secret) {
		t.Fatalf("otpauthUrl: %s", u)
	}
	id := pending["id"].(string)
	out := post(a, "/v1/auth-core/mfa/totp/"+id+"/confirm", map[string]any{"code": code(t, secret, a.Clock.Now())}, s.Bearer()).Expect(t, 200, nil)
	var codes []string
	if rc, ok := out["recoveryCodes"].([]any); ok {
		for _, c := range rc {
			codes = append(codes, c.(string))
		}
	}
	return secret, codes
}

// signIn signs in with a password and answers the body.
func signIn(t *testing.T, a *apptest.App, s *apptest.Session, tenant string) map[string]any {
	t.Helper()
	body := map[string]any{"email": s.Email, "password": s.Password}
	if tenant != "" {
		body["tenantId"] = tenant
	}
	return post(a, "/v1/auth-core/signin", body, nil).Expect(t, 200, nil)
}

func accessToken(t *testing.T, signedIn map[string]any) string {
	t.Helper()
	sess, ok := signedIn["session"].(map[string]any)
	if !ok {
		t.Fatalf("no session in %v", signedIn)
	}
	return sess["accessToken"].(string)
}

func TestTOTPSignIn(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := apptest.Start(t, st)
		u := a.SignUp(t)

		// Pending until confirmed: a wrong code confirms nothing and signs in stays one step.
		pending := post(a, "/v1/auth-core/mfa/totp", nil, u.Bearer()).Expect(t, 201, nil)
		post(a, "/v1/auth-core/mfa/totp/"+pending["id"].(string)+"/confirm", map[string]any{"code": "000000"}, u.Bearer()).
			Expect(t, 401, map[string]any{"code": "invalid_second_factor"})
		a.Get("/v1/auth-core/mfa", "Authorization", "Bearer "+u.AccessToken).Expect(t, 200, map[string]any{"factors": []any{}, "recoveryCodesLeft": 0.0})
		accessToken(t, signIn(t, a, u, ""))

		secret, codes := enrolTOTP(t, a, u)
		if len(codes) != 10 {
			t.Fatalf("a first factor returns 10 recovery codes, got %d", len(codes))
		}
		list := a.Get("/v1/auth-core/mfa", "Authorization", "Bearer "+u.AccessToken).Expect(t, 200, map[string]any{"recoveryCodesLeft": 10.0})
		fs := list["factors"].([]any)
		if len(fs) != 1 || fs[0].(map[string]any)["type"] != "totp" || fs[0].(map[string]any)["name"] != "phone" {
			t.Fatalf("factors: %v", fs)
		}

		// The password alone no longer signs in.
		first := signIn(t, a, u, "")
		if first["mfaRequired"] != true || first["session"] != nil || !slices.Equal(toStrings(first["methods"]), []string{"totp", "recovery_code"}) {
			t.Fatalf("two-step answer: %v", first)
		}
		token := first["mfaToken"].(string)

		// The code that confirmed the app was for this very step: used once, it is spent.
		post(a, "/v1/auth-core/mfa/verify", map[string]any{"mfaToken": token, "code": code(t, secret, a.Clock.Now())}, nil).
			Expect(t, 401, map[string]any{"code": "invalid_second_factor"})
		// Two steps ahead is beyond the ±1 skew.
		post(a, "/v1/auth-core/mfa/verify", map[string]any{"mfaToken": token, "code": code(t, secret, a.Clock.Now().Add(61*time.Second))}, nil).
			Expect(t, 401, map[string]any{"code": "invalid_second_factor"})
		// One step ahead is within it.
		next := code(t, secret, a.Clock.Now().Add(30*time.Second))
		done := post(a, "/v1/auth-core/mfa/verify", map[string]any{"mfaToken": token, "code": next}, nil).Expect(t, 200, nil)
		me := a.Get("/v1/auth-core/session/me", "Authorization", "Bearer "+accessToken(t, done)).Expect(t, 200, nil)
		claims := me["accessTokenPayload"].(map[string]any)
		if !slices.Equal(toStrings(claims["amr"]), []string{"pwd", "otp", "mfa"}) {
			t.Fatalf("amr: %v", claims["amr"])
		}
		if at, _ := claims["authTime"].(float64); int64(at) != a.Clock.Now().Unix() || claims["auth_time"] != claims["authTime"] {
			t.Fatalf("authTime %v, want %d", claims["authTime"], a.Clock.Now().Unix())
		}
		// The session carries them too, in the user's list of their own sessions.
		mine := a.Get("/v1/auth-core/session/mine", "Authorization", "Bearer "+accessToken(t, done)).Expect(t, 200, nil)
		var found bool
		for _, s := range mine["sessions"].([]any) {
			s := s.(map[string]any)
			if s["current"] == true {
				at, err := time.Parse(time.RFC3339Nano, s["authTime"].(string))
				found = err == nil && at.Unix() == a.Clock.Now().Unix() && slices.Equal(toStrings(s["amr"]), []string{"pwd", "otp", "mfa"})
			}
		}
		if !found {
			t.Fatalf("the current session's amr and authTime: %v", mine["sessions"])
		}
		// The mfaToken is spent; a second sign-in cannot reuse the step just used either.
		post(a, "/v1/auth-core/mfa/verify", map[string]any{"mfaToken": token, "code": next}, nil).Expect(t, 401, map[string]any{"code": "invalid_mfa_token"})
		again := signIn(t, a, u, "")["mfaToken"].(string)
		post(a, "/v1/auth-core/mfa/verify", map[string]any{"mfaToken": again, "code": next}, nil).Expect(t, 401, map[string]any{"code": "invalid_second_factor"})
		// One step behind is within the skew, but not before the step already used.
		post(a, "/v1/auth-core/mfa/verify", map[string]any{"mfaToken": again, "code": code(t, secret, a.Clock.Now().Add(-30*time.Second))}, nil).
			Expect(t, 401, map[string]any{"code": "invalid_second_factor"})
		// Three steps on, the step behind is later than the one used.
		a.Clock.Advance(90 * time.Second)
		post(a, "/v1/auth-core/mfa/verify", map[string]any{"mfaToken": again, "code": code(t, secret, a.Clock.Now().Add(-30*time.Second))}, nil).Expect(t, 200, nil)

		// An mfaToken lives five minutes.
		late := signIn(t, a, u, "")["mfaToken"].(string)
		a.Clock.Advance(5*time.Minute + time.Second)
		post(a, "/v1/auth-core/mfa/verify", map[string]any{"mfaToken": late, "code": code(t, secret, a.Clock.Now())}, nil).
			Expect(t, 401, map[string]any{"code": "invalid_mfa_token"})
	})
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// Each rule of the second step's body with its own case.
func TestVerifyBody(t *testing.T) {
	a := apptest.StartURL(t, "sqlite", "sqlite::memory:")
	u := a.SignUp(t)
	enrolTOTP(t, a, u)
	token := signIn(t, a, u, "")["mfaToken"].(string)
	for name, body := range map[string]any{
		"missing body":       nil,
		"not JSON":           "{",
		"an array":           []any{},
		"no factor":          map[string]any{"mfaToken": token},
		"two factors":        map[string]any{"mfaToken": token, "code": "123456", "recoveryCode": "abcd-efgh-jk"},
		"code a number":      map[string]any{"mfaToken": token, "code": 123456},
		"code of 5 digits":   map[string]any{"mfaToken": token, "code": "12345"},
		"code of 7 digits":   map[string]any{"mfaToken": token, "code": "1234567"},
		"code not digits":    map[string]any{"mfaToken": token, "code": "12345a"},
		"assertion a string": map[string]any{"mfaToken": token, "assertion": "x"},
		"no mfaToken":        map[string]any{"code": "123456"},
		"mfaToken a number":  map[string]any{"mfaToken": 1, "code": "123456"},
	} {
		t.Run(name, func(t *testing.T) {
			post(a, "/v1/auth-core/mfa/verify", body, nil).Expect(t, 400, map[string]any{"code": "validation_failed"})
		})
	}
	post(a, "/v1/auth-core/mfa/verify", map[string]any{"mfaToken": "ac_mft_nope", "code": "123456"}, nil).Expect(t, 401, map[string]any{"code": "invalid_mfa_token"})
}

func TestRecoveryCodes(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := apptest.Start(t, st)
		admin := a.SignUp(t)
		prj := a.CreateProject(t, admin)
		// An end user of the project: their MFA events are the project's audit records.
		u := a.SignUpIn(t, prj)
		hook := post(a, "/v1/projects/"+prj+"/webhooks", map[string]any{"url": "https://93.184.215.14/hook",
			"events": []string{"user.mfa_enrol", "user.mfa_recovery_used"}}, admin.Bearer()).Expect(t, 201, nil)
		_, codes := enrolTOTP(t, a, u)

		token := signIn(t, a, u, prj)["mfaToken"].(string)
		// Typed loosely: upper case, no dashes.
		loose := strings.ToUpper(strings.ReplaceAll(codes[3], "-", ""))
		done := post(a, "/v1/auth-core/mfa/verify", map[string]any{"mfaToken": token, "recoveryCode": loose}, nil).Expect(t, 200, nil)
		me := a.Get("/v1/auth-core/mfa", "Authorization", "Bearer "+accessToken(t, done)).Expect(t, 200, map[string]any{"recoveryCodesLeft": 9.0})
		_ = me
		token = signIn(t, a, u, prj)["mfaToken"].(string)
		post(a, "/v1/auth-core/mfa/verify", map[string]any{"mfaToken": token, "recoveryCode": codes[3]}, nil).Expect(t, 401, map[string]any{"code": "invalid_second_factor"})

		// New codes end the old ones.
		fresh := post(a, "/v1/auth-core/mfa/recovery-codes", nil, bearer(accessToken(t, done))).Expect(t, 200, nil)
		newCodes := toStrings(fresh["recoveryCodes"])
		if len(newCodes) != 10 {
			t.Fatalf("%d new codes", len(newCodes))
		}
		post(a, "/v1/auth-core/mfa/verify", map[string]any{"mfaToken": token, "recoveryCode": codes[4]}, nil).Expect(t, 401, map[string]any{"code": "invalid_second_factor"})
		post(a, "/v1/auth-core/mfa/verify", map[string]any{"mfaToken": token, "recoveryCode": newCodes[0]}, nil).Expect(t, 200, nil)

		trail := a.Get("/v1/projects/"+prj+"/audit", "Authorization", "Bearer "+admin.AccessToken).Expect(t, 200, nil)
		var actions []string
		for _, e := range trail["events"].([]any) {
			actions = append(actions, e.(map[string]any)["action"].(string))
		}
		if !slices.Contains(actions, "user.mfa_enrol") || slices.Index(actions, "user.mfa_recovery_used") < 0 {
			t.Fatalf("audit: %v", actions)
		}
		if n := countOf(actions, "user.mfa_recovery_used"); n != 2 {
			t.Fatalf("%d recovery-code records, want 2", n)
		}
		// Each is a webhook event the project's endpoint gets.
		got := a.Get("/v1/projects/"+prj+"/webhooks/"+hook["id"].(string)+"/deliveries", "Authorization", "Bearer "+admin.AccessToken).Expect(t, 200, nil)
		var types []string
		for _, d := range got["deliveries"].([]any) {
			types = append(types, d.(map[string]any)["eventType"].(string))
		}
		if countOf(types, "user.mfa_enrol") != 1 || countOf(types, "user.mfa_recovery_used") != 2 {
			t.Fatalf("deliveries: %v", types)
		}
	})
}

func countOf(xs []string, x string) int {
	n := 0
	for _, y := range xs {
		if y == x {
			n++
		}
	}
	return n
}

// Failed second factors spend the account's budget of failed sign-ins (SPEC §9a, §17):
// ten wrong codes and even the right password and code are refused for a while.
func TestWrongCodesSpendTheAccountBudget(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := apptest.Start(t, st, apptest.WithConfig(func(c *config.Config) { c.RateLimit = 1000 }))
		u := a.SignUp(t)
		secret, _ := enrolTOTP(t, a, u)
		token := signIn(t, a, u, "")["mfaToken"].(string)
		wrong := "000000"
		if code(t, secret, a.Clock.Now()) == wrong {
			wrong = "000001"
		}
		for range 9 {
			post(a, "/v1/auth-core/mfa/verify", map[string]any{"mfaToken": token, "code": wrong}, nil).Expect(t, 401, map[string]any{"code": "invalid_second_factor"})
		}
		// Step-up spends the same budget.
		post(a, "/v1/auth-core/mfa/step-up", map[string]any{"code": wrong}, u.Bearer()).Expect(t, 401, map[string]any{"code": "invalid_second_factor"})
		a.Clock.Advance(30 * time.Second)
		post(a, "/v1/auth-core/mfa/verify", map[string]any{"mfaToken": token, "code": code(t, secret, a.Clock.Now())}, nil).
			Expect(t, 429, map[string]any{"code": "rate_limited"})
		post(a, "/v1/auth-core/signin", map[string]any{"email": u.Email, "password": u.Password}, nil).Expect(t, 429, map[string]any{"code": "rate_limited"})
	})
}

// SPEC §17: what mints credentials wants, from a user with a factor, an authentication
// within 15 minutes; a step-up gives one. A user without a factor is not asked.
func TestStepUp(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := apptest.Start(t, st, apptest.WithConfig(func(c *config.Config) { c.AccessTTL = 24 * time.Hour }))
		plain := a.SignUp(t)
		plainPrj := a.CreateProject(t, plain)
		u := a.SignUp(t)
		prj := a.CreateProject(t, u)
		secret, codes := enrolTOTP(t, a, u)
		mint := func(token, project string) *testkit.Response {
			return post(a, "/v1/auth-core/projects/"+project+"/ai/agents", map[string]any{"agentName": "bot"}, bearer(token))
		}
		mint(u.AccessToken, prj).Expect(t, 200, nil)

		a.Clock.Advance(15*time.Minute - time.Second)
		mint(u.AccessToken, prj).Expect(t, 200, nil)
		a.Clock.Advance(time.Second)
		mint(u.AccessToken, prj).Expect(t, 403, map[string]any{"code": "reauthentication_required"})
		mint(plain.AccessToken, plainPrj).Expect(t, 200, nil) // no factor: never asked
		// Every route of the list: badges, rolls, members, webhooks.
		post(a, "/v1/projects/"+prj+"/service-badges", map[string]any{"name": "b", "product": "db", "role": "developer"}, u.Bearer()).
			Expect(t, 403, map[string]any{"code": "reauthentication_required"})
		post(a, "/v1/projects/"+prj+"/webhooks", map[string]any{"url": "https://hooks.example.com/x"}, u.Bearer()).
			Expect(t, 403, map[string]any{"code": "reauthentication_required"})
		post(a, "/v1/projects/"+prj+"/members", map[string]any{"email": plain.Email, "role": "viewer"}, u.Bearer()).
			Expect(t, 403, map[string]any{"code": "reauthentication_required"})
		// Reading is not minting.
		a.Get("/v1/auth-core/projects/"+prj+"/ai/agents", "Authorization", "Bearer "+u.AccessToken).Expect(t, 200, nil)

		// Step up with a code: the new token carries authTime now, and mints.
		up := post(a, "/v1/auth-core/mfa/step-up", map[string]any{"code": code(t, secret, a.Clock.Now())}, u.Bearer()).Expect(t, 200, nil)
		fresh := up["accessToken"].(string)
		claims := a.Get("/v1/auth-core/session/me", "Authorization", "Bearer "+fresh).Expect(t, 200, nil)["accessTokenPayload"].(map[string]any)
		if at, _ := claims["authTime"].(float64); int64(at) != a.Clock.Now().Unix() || !slices.Contains(toStrings(claims["amr"]), "otp") {
			t.Fatalf("stepped-up claims: %v", claims)
		}
		mint(fresh, prj).Expect(t, 200, nil)
		mint(u.AccessToken, prj).Expect(t, 403, map[string]any{"code": "reauthentication_required"}) // the old token is as old as ever
		// A refresh keeps the session's authentication time.
		ref := post(a, "/v1/auth-core/session/refresh", map[string]any{"refreshToken": u.RefreshToken}, nil).Expect(t, 200, nil)
		mint(accessToken(t, ref), prj).Expect(t, 200, nil)

		// A recovery code steps up too, once.
		a.Clock.Advance(16 * time.Minute)
		up = post(a, "/v1/auth-core/mfa/step-up", map[string]any{"recoveryCode": codes[0]}, u.Bearer()).Expect(t, 200, nil)
		mint(up["accessToken"].(string), prj).Expect(t, 200, nil)
		post(a, "/v1/auth-core/mfa/step-up", map[string]any{"recoveryCode": codes[0]}, u.Bearer()).Expect(t, 401, map[string]any{"code": "invalid_second_factor"})

		// Adding a factor wants an authentication within 5 minutes, from anyone.
		a.Clock.Advance(5 * time.Minute)
		post(a, "/v1/auth-core/mfa/totp", nil, plain.Bearer()).Expect(t, 403, map[string]any{"code": "reauthentication_required"})
		post(a, "/v1/auth-core/mfa/passkeys/register/begin", nil, plain.Bearer()).Expect(t, 403, map[string]any{"code": "reauthentication_required"})
		// So does removing the last one: 15 minutes is not enough.
		up = post(a, "/v1/auth-core/mfa/step-up", map[string]any{"code": code(t, secret, a.Clock.Now())}, u.Bearer()).Expect(t, 200, nil)
		a.Clock.Advance(6 * time.Minute)
		list := a.Get("/v1/auth-core/mfa", "Authorization", "Bearer "+up["accessToken"].(string)).Expect(t, 200, nil)
		id := list["factors"].([]any)[0].(map[string]any)["id"].(string)
		del := func(token string) *testkit.Response {
			return a.Do(apptest.Req{Method: http.MethodDelete, Path: "/v1/auth-core/mfa/" + id, Header: bearer(token)})
		}
		del(up["accessToken"].(string)).Expect(t, 403, map[string]any{"code": "reauthentication_required"})
		up = post(a, "/v1/auth-core/mfa/step-up", map[string]any{"code": code(t, secret, a.Clock.Now())}, u.Bearer()).Expect(t, 200, nil)
		del(up["accessToken"].(string)).Expect(t, 200, map[string]any{"ok": true})
		// The last factor gone, its recovery codes went with it and sign-in is one step.
		a.Get("/v1/auth-core/mfa", "Authorization", "Bearer "+up["accessToken"].(string)).Expect(t, 200, map[string]any{"factors": []any{}, "recoveryCodesLeft": 0.0})
		accessToken(t, signIn(t, a, u, ""))
		mint(up["accessToken"].(string), prj).Expect(t, 200, nil) // no factor now: not asked
	})
}

// SPEC §17: a project whose policy requires a second factor refuses its routes to members
// without one until they enrol.
func TestRequireMFA(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := apptest.Start(t, st)
		admin := a.SignUp(t)
		prj := a.CreateProject(t, admin)
		member := a.SignUp(t)
		a.AddMember(t, admin, prj, member, "admin")
		enrolTOTP(t, a, admin)
		a.Do(apptest.Req{Method: http.MethodPut, Path: "/v1/projects/" + prj + "/policy", Body: map[string]any{"requireMfa": true}, Header: admin.Bearer()}).
			Expect(t, 200, map[string]any{"requireMfa": true})
		a.Do(apptest.Req{Method: http.MethodPut, Path: "/v1/projects/" + prj + "/policy", Body: map[string]any{"requireMfa": "yes"}, Header: admin.Bearer()}).
			Expect(t, 400, map[string]any{"code": "validation_failed"})

		a.Get("/v1/projects/"+prj, "Authorization", "Bearer "+member.AccessToken).Expect(t, 403, map[string]any{"code": "mfa_required"})
		post(a, "/v1/auth-core/projects/"+prj+"/ai/agents", map[string]any{"agentName": "bot"}, member.Bearer()).Expect(t, 403, map[string]any{"code": "mfa_required"})
		a.Get("/v1/projects/"+prj, "Authorization", "Bearer "+admin.AccessToken).Expect(t, 200, nil)
		// Other projects and the user's own routes are not the policy's.
		other := a.CreateProject(t, member)
		a.Get("/v1/projects/"+other, "Authorization", "Bearer "+member.AccessToken).Expect(t, 200, nil)

		enrolTOTP(t, a, member)
		a.Get("/v1/projects/"+prj, "Authorization", "Bearer "+member.AccessToken).Expect(t, 200, nil)
	})
}

// SPEC §17: a password reset does not remove factors: whoever reads the victim's mail
// still needs the second factor.
func TestPasswordResetKeepsFactors(t *testing.T) {
	in := testkit.StartInbox(t)
	a := apptest.StartURL(t, "sqlite", "sqlite::memory:", apptest.WithConfig(func(c *config.Config) { c.SMTPURL = in.URL }))
	u := a.SignUp(t)
	enrolTOTP(t, a, u)
	post(a, "/v1/auth-core/password/reset-request", map[string]any{"email": u.Email}, nil).Expect(t, 202, nil)
	token := regexp.MustCompile(`ac_rst_[0-9A-Za-z]{38}`).FindString(in.Wait(t, 1)[0].Text)
	post(a, "/v1/auth-core/password/reset", map[string]any{"token": token, "password": "a brand new one"}, nil).Expect(t, 200, nil)
	post(a, "/v1/auth-core/signin", map[string]any{"email": u.Email, "password": "a brand new one"}, nil).
		Expect(t, 200, map[string]any{"mfaRequired": true})
}

// deviceCookie is the acDevice cookie a response set, or nil.
func deviceCookie(r *testkit.Response) *http.Cookie {
	for _, c := range (&http.Response{Header: r.Header}).Cookies() {
		if c.Name == "acDevice" {
			return &http.Cookie{Name: c.Name, Value: c.Value}
		}
	}
	return nil
}

// SPEC §9b: the second factor spends the budget the password step spends. A stranger who
// knows the password empties the account's budget with wrong codes; the owner, in the
// browser where they completed a sign-in before, still signs in with both factors and
// steps up. The password alone earns no device cookie, so the stranger gets no budget of
// their own to keep guessing with.
func TestWrongCodesCannotLockTheOwnersDevice(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := apptest.Start(t, st, apptest.WithConfig(func(c *config.Config) { c.RateLimit = 1000 }))
		u := a.SignUp(t)
		secret, _ := enrolTOTP(t, a, u)
		do := func(path string, body map[string]any, header map[string]string, cookies ...*http.Cookie) *testkit.Response {
			return a.Do(apptest.Req{Method: http.MethodPost, Path: path, Body: body, Header: header, Cookies: cookies})
		}
		password := map[string]any{"email": u.Email, "password": u.Password}

		// The owner signs in with both factors: that browser now holds a device cookie.
		first := do("/v1/auth-core/signin", password, nil)
		first.Expect(t, 200, map[string]any{"mfaRequired": true})
		if c := deviceCookie(first); c != nil {
			t.Fatalf("a password alone earned a device cookie: %v", c)
		}
		a.Clock.Advance(30 * time.Second)
		done := do("/v1/auth-core/mfa/verify", map[string]any{"mfaToken": first.JSON(t)["mfaToken"], "code": code(t, secret, a.Clock.Now())}, nil)
		done.Expect(t, 200, nil)
		mine := deviceCookie(done)
		if mine == nil {
			t.Fatal("a completed sign-in set no device cookie")
		}
		session := bearer(accessToken(t, done.JSON(t)))

		// The stranger has the password, not the phone: ten wrong codes empty the account's
		// budget, and the stranger is refused from then on.
		wrong := unused(t, secret, a.Clock.Now())
		stranger := do("/v1/auth-core/signin", password, nil)
		token := stranger.JSON(t)["mfaToken"]
		for range 10 {
			do("/v1/auth-core/mfa/verify", map[string]any{"mfaToken": token, "code": wrong}, nil).Expect(t, 401, map[string]any{"code": "invalid_second_factor"})
		}
		do("/v1/auth-core/mfa/verify", map[string]any{"mfaToken": token, "code": wrong}, nil).Expect(t, 429, map[string]any{"code": "rate_limited"})
		do("/v1/auth-core/signin", password, nil).Expect(t, 429, map[string]any{"code": "rate_limited"})
		a.Clock.Advance(30 * time.Second)
		do("/v1/auth-core/mfa/step-up", map[string]any{"code": code(t, secret, a.Clock.Now())}, session).Expect(t, 429, map[string]any{"code": "rate_limited"})

		// The account's budget refills an attempt every 90 s: the stranger keeps it empty.
		drain := func() {
			t.Helper()
			for range 11 {
				r := do("/v1/auth-core/mfa/verify", map[string]any{"mfaToken": token, "code": wrong}, nil)
				if r.Status == http.StatusTooManyRequests {
					return
				}
				r.Expect(t, 401, nil)
			}
			t.Fatal("the account's budget did not run out")
		}

		// The owner's browser: password, then the code, then a step-up, all let in.
		again := do("/v1/auth-core/signin", password, nil, mine)
		again.Expect(t, 200, map[string]any{"mfaRequired": true})
		a.Clock.Advance(30 * time.Second)
		drain()
		done = do("/v1/auth-core/mfa/verify", map[string]any{"mfaToken": again.JSON(t)["mfaToken"], "code": code(t, secret, a.Clock.Now())}, nil, mine)
		done.Expect(t, 200, nil)
		a.Clock.Advance(30 * time.Second)
		drain()
		do("/v1/auth-core/mfa/step-up", map[string]any{"code": code(t, secret, a.Clock.Now())}, session, mine).Expect(t, 200, nil)

		// The device's budget is its own: wrong codes from the owner's browser spend it, not
		// an unlimited one.
		mine = deviceCookie(done)
		for range 10 {
			do("/v1/auth-core/mfa/step-up", map[string]any{"code": wrong}, session, mine).Expect(t, 401, nil)
		}
		a.Clock.Advance(30 * time.Second)
		do("/v1/auth-core/mfa/step-up", map[string]any{"code": code(t, secret, a.Clock.Now())}, session, mine).Expect(t, 429, map[string]any{"code": "rate_limited"})
	})
}

// unused is a code that none of the steps from a minute before now to three minutes after
// shows: wrong for every attempt of a test that moves its clock that far.
func unused(t *testing.T, secret string, now time.Time) string {
	t.Helper()
	for _, c := range []string{"000000", "000001", "000002"} {
		taken := false
		for d := -time.Minute; d <= 3*time.Minute; d += 30 * time.Second {
			taken = taken || code(t, secret, now.Add(d)) == c
		}
		if !taken {
			return c
		}
	}
	t.Fatal("no unused code")
	return ""
}
