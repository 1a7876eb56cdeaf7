package account_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/authcore/authcore/ent/user"
	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/platform/config"
)

func TestMain(m *testing.M) { apptest.Main(m) }

func signup(a *apptest.App, body any) *apptest.Response {
	return a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signup", Body: body})
}

func signin(a *apptest.App, body any) *apptest.Response {
	return a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signin", Body: body})
}

func TestSignUp(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := apptest.Start(t, st)
		email := apptest.UniqueEmail(t)

		t.Run("201 with user and session, email lower-cased, name kept", func(t *testing.T) {
			r := signup(a, map[string]any{"email": strings.ToUpper(email), "password": "12345678", "name": "Ada"})
			got := r.Expect(t, 201, nil)
			u := got["user"].(map[string]any)
			s := got["session"].(map[string]any)
			if u["email"] != email || u["name"] != "Ada" || u["tenantId"] != "public" || !strings.HasPrefix(u["id"].(string), "usr_") {
				t.Fatalf("user %v", u)
			}
			for _, k := range []string{"sessionHandle", "accessToken", "refreshToken", "accessTokenExpiresAt"} {
				if s[k] == nil || s[k] == "" {
					t.Fatalf("session lacks %s: %v", k, s)
				}
			}
			cookies := map[string]*http.Cookie{}
			for _, c := range (&http.Response{Header: r.Header}).Cookies() {
				cookies[c.Name] = c
			}
			at, rt := cookies["sAccessToken"], cookies["sRefreshToken"]
			if at == nil || at.Value != s["accessToken"] || !at.HttpOnly || at.SameSite != http.SameSiteLaxMode || at.Path != "/" {
				t.Fatalf("access cookie %+v", at)
			}
			if rt == nil || rt.Value != s["refreshToken"] || !rt.HttpOnly {
				t.Fatalf("refresh cookie %+v", rt)
			}
		})
		t.Run("duplicate email, any case, is 409 email_taken", func(t *testing.T) {
			signup(a, map[string]any{"email": strings.ToUpper(email[:1]) + email[1:], "password": "12345678"}).Expect(t, 409, map[string]any{"code": "email_taken"})
		})

		cases := []struct {
			name  string
			body  any
			field string
		}{
			{"missing body", nil, "body"},
			{"unparsable body", "{not json", "body"},
			{"array body", "[]", "body"},
			{"missing email", map[string]any{"password": "12345678"}, "email"},
			{"email not a string", map[string]any{"email": 5, "password": "12345678"}, "email"},
			{"email without domain", map[string]any{"email": "ada", "password": "12345678"}, "email"},
			{"email with display name", map[string]any{"email": "Ada <ada@example.com>", "password": "12345678"}, "email"},
			{"missing password", map[string]any{"email": "x@example.com"}, "password"},
			{"password not a string", map[string]any{"email": "x@example.com", "password": true}, "password"},
			{"password of 7 characters", map[string]any{"email": "x@example.com", "password": "1234567"}, "password"},
			{"password of 257 characters", map[string]any{"email": "x@example.com", "password": strings.Repeat("p", 257)}, "password"},
			{"name not a string", map[string]any{"email": "x@example.com", "password": "12345678", "name": 1}, "name"},
			{"unknown tenant", map[string]any{"email": "x@example.com", "password": "12345678", "tenantId": "prj_nope"}, "tenantId"},
		}
		for _, tc := range cases {
			t.Run(tc.name+" is 400 validation_failed", func(t *testing.T) {
				got := signup(a, tc.body).Expect(t, 400, map[string]any{"code": "validation_failed"})
				issues, _ := got["issues"].([]any)
				found := false
				for _, is := range issues {
					if is.(map[string]any)["field"] == tc.field {
						found = true
					}
				}
				if !found {
					t.Fatalf("issues %v do not name %s", issues, tc.field)
				}
			})
		}
		t.Run("no user was written by the rejected sign-ups", func(t *testing.T) {
			n, err := a.Ent.User.Query().Where(user.Email("x@example.com")).Count(context.Background())
			if err != nil || n != 0 {
				t.Fatalf("%d users, %v", n, err)
			}
		})
		t.Run("password boundaries 8 and 256 accepted", func(t *testing.T) {
			signup(a, map[string]any{"email": "b8-" + email, "password": "12345678"}).Expect(t, 201, nil)
			signup(a, map[string]any{"email": "b256-" + email, "password": strings.Repeat("é", 256)}).Expect(t, 201, nil)
		})
	})
}

func TestSignUpClosed(t *testing.T) {
	a := apptest.StartURL(t, "sqlite", "sqlite::memory:", apptest.WithConfig(func(c *config.Config) { c.Signup = "closed" }))
	signup(a, map[string]any{"email": "a@example.com", "password": "12345678"}).Expect(t, 403, map[string]any{"code": "signup_closed"})
}

func TestSecureCookiesByDefault(t *testing.T) {
	a := apptest.StartURL(t, "sqlite", "sqlite::memory:", apptest.WithConfig(func(c *config.Config) { c.InsecureCookies = false }))
	r := signup(a, map[string]any{"email": "a@example.com", "password": "12345678"})
	for _, c := range (&http.Response{Header: r.Header}).Cookies() {
		if !c.Secure {
			t.Fatalf("cookie %s without Secure", c.Name)
		}
	}
}

func TestSignUpIntoTenant(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := apptest.Start(t, st)
		prj := a.CreateProject(t, a.SignUp(t))
		email := apptest.UniqueEmail(t)
		got := signup(a, map[string]any{"email": email, "password": "12345678", "tenantId": prj}).Expect(t, 201, nil)
		if tid := got["user"].(map[string]any)["tenantId"]; tid != prj {
			t.Fatalf("tenantId %v, want %s", tid, prj)
		}
		// The same email is free in another tenant, and sign-in is per tenant.
		signup(a, map[string]any{"email": email, "password": "other-password"}).Expect(t, 201, nil)
		signin(a, map[string]any{"email": email, "password": "12345678", "tenantId": prj}).Expect(t, 200, nil)
		signin(a, map[string]any{"email": email, "password": "12345678"}).Expect(t, 401, map[string]any{"code": "invalid_credentials"})
	})
}

func TestSignIn(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := apptest.Start(t, st)
		s := a.SignUp(t)

		t.Run("right password, any email case, is 200 with user and session", func(t *testing.T) {
			signin(a, map[string]any{"email": strings.ToUpper(s.Email), "password": s.Password}).Expect(t, 200, nil)
			got := signin(a, map[string]any{"email": s.Email, "password": s.Password}).JSON(t)
			if got["user"].(map[string]any)["id"] != s.UserID || got["session"].(map[string]any)["accessToken"] == "" {
				t.Fatalf("%v", got)
			}
		})
		wrong := signin(a, map[string]any{"email": s.Email, "password": "wrong password"})
		unknown := signin(a, map[string]any{"email": "nobody-" + s.Email, "password": "wrong password"})
		t.Run("wrong password is 401 invalid_credentials", func(t *testing.T) {
			wrong.Expect(t, 401, map[string]any{"code": "invalid_credentials"})
		})
		t.Run("unknown email gets the same body as a wrong password", func(t *testing.T) {
			unknown.Expect(t, 401, nil)
			if string(unknown.Body) != string(wrong.Body) {
				t.Fatalf("%s vs %s", unknown.Body, wrong.Body)
			}
		})
		t.Run("malformed email is invalid_credentials, not a hint", func(t *testing.T) {
			signin(a, map[string]any{"email": "not-an-email", "password": "whatever1"}).Expect(t, 401, map[string]any{"code": "invalid_credentials"})
		})
		for name, body := range map[string]any{
			"missing body":          nil,
			"unparsable body":       "nope",
			"password not a string": map[string]any{"email": s.Email, "password": 12345678},
			"email missing":         map[string]any{"password": "12345678"},
			"tenantId not a string": map[string]any{"email": s.Email, "password": s.Password, "tenantId": 3},
		} {
			t.Run(name+" is 400 validation_failed", func(t *testing.T) {
				signin(a, body).Expect(t, 400, map[string]any{"code": "validation_failed"})
			})
		}
	})
}

func TestSignInRateLimited(t *testing.T) {
	a := apptest.StartURL(t, "sqlite", "sqlite::memory:", apptest.WithConfig(func(c *config.Config) { c.RateLimit = 3 }))
	for i := 0; i < 3; i++ {
		signin(a, map[string]any{"email": "a@example.com", "password": "12345678"}).Expect(t, 401, nil)
	}
	r := signin(a, map[string]any{"email": "a@example.com", "password": "12345678"})
	r.Expect(t, 429, map[string]any{"code": "rate_limited"})
	if r.Header.Get("Retry-After") == "" {
		t.Fatal("no Retry-After")
	}
	// Sign-up draws on the same budget.
	signup(a, map[string]any{"email": "b@example.com", "password": "12345678"}).Expect(t, 429, map[string]any{"code": "rate_limited"})
}

func TestSecretsNeverStoredOrLogged(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := apptest.Start(t, st)
		s := a.SignUp(t)
		r := signin(a, map[string]any{"email": s.Email, "password": s.Password}).JSON(t)
		sess := r["session"].(map[string]any)
		refreshed := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/session/refresh", Body: map[string]any{"refreshToken": sess["refreshToken"]}}).JSON(t)
		secrets := []string{s.Password, s.AccessToken, s.RefreshToken, sess["accessToken"].(string), sess["refreshToken"].(string),
			refreshed["session"].(map[string]any)["refreshToken"].(string)}
		db, logs := a.DumpDB(t), a.Logs.String()
		if !strings.Contains(db, s.UserID) || !strings.Contains(logs, "/v1/auth-core/signin") {
			t.Fatal("the scan sees nothing: it would pass vacuously")
		}
		for _, sec := range secrets {
			if strings.Contains(db, sec) {
				t.Errorf("the database holds a secret in plain text: %.12s…", sec)
			}
			if strings.Contains(logs, sec) {
				t.Errorf("the log holds a secret: %.12s…", sec)
			}
		}
	})
}

// Each account (tenant + email) has a budget of 10 failed sign-ins per 15 minutes, from
// any address; past it even the right password is 429 until the window slides, for known
// and unknown emails alike. Other accounts are untouched.
func TestAccountSignInBudget(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		// A per-address budget high enough that only the per-account one can refuse.
		a := apptest.Start(t, st, apptest.WithConfig(func(c *config.Config) { c.RateLimit = 1000 }))
		victim := a.SignUp(t)
		bystander := a.SignUp(t)
		for i := range 10 {
			// Any spelling of the address is the same account.
			email := victim.Email
			if i%2 == 1 {
				email = "  " + strings.ToUpper(victim.Email)
			}
			signin(a, map[string]any{"email": email, "password": "wrong password"}).Expect(t, 401, map[string]any{"code": "invalid_credentials"})
		}
		r := signin(a, map[string]any{"email": victim.Email, "password": victim.Password})
		r.Expect(t, 429, map[string]any{"code": "rate_limited"})
		if r.Header.Get("Retry-After") == "" || r.Header.Get("Set-Cookie") != "" {
			t.Fatalf("headers %v", r.Header)
		}
		signin(a, map[string]any{"email": bystander.Email, "password": bystander.Password}).Expect(t, 200, nil)

		unknown := "nobody-" + victim.Email
		for range 10 {
			signin(a, map[string]any{"email": unknown, "password": "wrong password"}).Expect(t, 401, nil)
		}
		signin(a, map[string]any{"email": unknown, "password": "wrong password"}).Expect(t, 429, map[string]any{"code": "rate_limited"})

	})
}

// AUTHCORE_RATE_LIMIT=0 turns the account budget off too.
func TestAccountBudgetOffAtZero(t *testing.T) {
	a := apptest.StartURL(t, "sqlite", "sqlite::memory:")
	u := a.SignUp(t)
	for range 12 {
		signin(a, map[string]any{"email": u.Email, "password": "wrong password"}).Expect(t, 401, nil)
	}
	signin(a, map[string]any{"email": u.Email, "password": u.Password}).Expect(t, 200, nil)
}

// Login CSRF (SPEC §9): sign-up and sign-in set cookies, so a present Origin must be the
// server's own or an allowed one; a refused request sets no cookie and creates nothing.
func TestLoginCSRF(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := apptest.Start(t, st)
		u := a.SignUp(t)
		post := func(path, origin string, body any) *apptest.Response {
			h := map[string]string{}
			if origin != "" {
				h["Origin"] = origin
			}
			return a.Do(apptest.Req{Method: http.MethodPost, Path: path, Body: body, Header: h})
		}
		in := map[string]any{"email": u.Email, "password": u.Password}
		fresh := func() map[string]any {
			return map[string]any{"email": apptest.UniqueEmail(t), "password": "correct horse battery"}
		}

		refused := fresh()
		for _, path := range []string{"/v1/auth-core/signin", "/v1/auth-core/signup"} {
			body := in
			if strings.HasSuffix(path, "signup") {
				body = refused
			}
			r := post(path, "https://evil.example.com", body)
			r.Expect(t, 403, map[string]any{"code": "csrf_rejected"})
			if r.Header.Get("Set-Cookie") != "" {
				t.Fatalf("%s set a cookie on a refused request", path)
			}
		}
		post("/v1/auth-core/signin", "", in).Expect(t, 200, nil)
		post("/v1/auth-core/signin", a.Base, in).Expect(t, 200, nil)
		post("/v1/auth-core/signin", "https://dashboard.example.com", in).Expect(t, 200, nil)
		post("/v1/auth-core/signup", a.Base, fresh()).Expect(t, 201, nil)
		post("/v1/auth-core/signin", "null", in).Expect(t, 403, map[string]any{"code": "csrf_rejected"})

		// The refused sign-up created nothing: that address can still sign up.
		post("/v1/auth-core/signup", "", refused).Expect(t, 201, nil)
	})
}

// With AUTHCORE_PUBLIC_URL set, that origin is the server's own (behind a proxy the request
// reaches the server on another scheme and host), and the cookie rule accepts it too.
func TestOwnOriginFromPublicURL(t *testing.T) {
	a := apptest.StartURL(t, "sqlite", "sqlite::memory:", apptest.WithConfig(func(c *config.Config) {
		c.PublicURL = "https://auth.example.com/"
		c.AllowedOrigins = nil
	}))
	u := a.SignUp(t)
	in := map[string]any{"email": u.Email, "password": u.Password}
	do := func(origin string) *apptest.Response {
		return a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signin", Body: in, Header: map[string]string{"Origin": origin}})
	}
	do("https://auth.example.com").Expect(t, 200, nil)
	do(a.Base).Expect(t, 403, map[string]any{"code": "csrf_rejected"})
	// A cookie-authenticated change from the own origin passes with no allowed origins set.
	r := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signout", Cookies: u.Cookies, Header: map[string]string{"Origin": "https://auth.example.com"}})
	r.Expect(t, 200, map[string]any{"ok": true})
}
