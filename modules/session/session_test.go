package session_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"go.uber.org/fx"

	"github.com/authcore/authcore/ent/user"
	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/modules/session"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/invalidation"
)

func TestMain(m *testing.M) { apptest.Main(m) }

const mePath = "/v1/auth-core/session/me"

func me(a *apptest.App, header map[string]string, cookies ...*http.Cookie) *apptest.Response {
	return a.Do(apptest.Req{Path: mePath, Header: header, Cookies: cookies})
}

func cookie(s *apptest.Session, name string) *http.Cookie {
	for _, c := range s.Cookies {
		if c.Name == name {
			return &http.Cookie{Name: c.Name, Value: c.Value}
		}
	}
	return nil
}

func TestSessionMe(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := apptest.Start(t, st)
		s := a.SignUp(t)

		t.Run("bearer header: 200 with session, payload and user", func(t *testing.T) {
			got := me(a, s.Bearer()).Expect(t, 200, map[string]any{
				"authenticated": true, "userId": s.UserID, "sessionHandle": s.SessionHandle,
				"user": map[string]any{"id": s.UserID, "email": s.Email, "name": "Test User", "emailVerified": false},
			})
			p := got["accessTokenPayload"].(map[string]any)
			if p["sub"] != s.UserID || p["sid"] != s.SessionHandle || p["tid"] != "public" || p["iss"] != a.Base || p["exp"] == nil || p["iat"] == nil {
				t.Fatalf("payload %v", p)
			}
			// A third-party verifier tells session tokens from OAuth ones by their audience.
			if p["aud"] != "authcore:session" {
				t.Fatalf("aud %v, want authcore:session", p["aud"])
			}
		})
		t.Run("cookie: 200", func(t *testing.T) {
			me(a, nil, cookie(s, "sAccessToken")).Expect(t, 200, map[string]any{"authenticated": true, "userId": s.UserID})
		})
		t.Run("no credential: 401 no_session", func(t *testing.T) {
			me(a, nil).Expect(t, 401, map[string]any{"authenticated": false, "reason": "no_session"})
		})
		t.Run("non-bearer Authorization: 401 no_session", func(t *testing.T) {
			me(a, map[string]string{"Authorization": "Basic " + s.AccessToken}).Expect(t, 401, map[string]any{"reason": "no_session"})
		})
		t.Run("garbage token: 401 invalid_token", func(t *testing.T) {
			me(a, map[string]string{"Authorization": "Bearer not.a.jwt"}).Expect(t, 401, map[string]any{"authenticated": false, "reason": "invalid_token"})
		})
		t.Run("tampered payload: 401 invalid_token", func(t *testing.T) {
			parts := strings.Split(s.AccessToken, ".")
			parts[1] = strings.TrimRight(parts[1], "A") + "B"
			me(a, map[string]string{"Authorization": "Bearer " + strings.Join(parts, ".")}).Expect(t, 401, map[string]any{"reason": "invalid_token"})
		})
		t.Run("token signed by a foreign key under our kid: 401 invalid_token", func(t *testing.T) {
			tok, _ := jwt.ParseSigned(s.AccessToken, []jose.SignatureAlgorithm{jose.EdDSA})
			_, priv, _ := ed25519.GenerateKey(rand.Reader)
			signer, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.EdDSA, Key: priv},
				(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", tok.Headers[0].KeyID))
			forged, _ := jwt.Signed(signer).Claims(map[string]any{"iss": "authcore", "sub": s.UserID, "sid": s.SessionHandle, "tid": "public", "exp": time.Now().Add(time.Hour).Unix()}).Serialize()
			me(a, map[string]string{"Authorization": "Bearer " + forged}).Expect(t, 401, map[string]any{"reason": "invalid_token"})
		})
		t.Run("alg none: 401 invalid_token", func(t *testing.T) {
			parts := strings.Split(s.AccessToken, ".")
			none := "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0." + parts[1] + "."
			me(a, map[string]string{"Authorization": "Bearer " + none}).Expect(t, 401, map[string]any{"reason": "invalid_token"})
		})
		t.Run("unparsable metadata: name null, still 200", func(t *testing.T) {
			other := a.SignUp(t)
			if err := a.Ent.User.Update().Where(user.ID(other.UserID)).SetMetadata("{not json").Exec(context.Background()); err != nil {
				t.Fatal(err)
			}
			me(a, other.Bearer()).Expect(t, 200, map[string]any{"user": map[string]any{"id": other.UserID, "email": other.Email, "name": nil, "emailVerified": false}})
		})
		t.Run("failed user lookup: email and name null, still 200", func(t *testing.T) {
			gone := a.SignUp(t)
			if _, err := a.Ent.User.Delete().Where(user.ID(gone.UserID)).Exec(context.Background()); err != nil {
				t.Fatal(err)
			}
			me(a, gone.Bearer()).Expect(t, 200, map[string]any{"user": map[string]any{"id": gone.UserID, "email": nil, "name": nil, "emailVerified": false}})
		})
	})
}

func TestExpiredAccessToken(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := apptest.Start(t, st)
		s := a.SignUp(t)
		a.Clock.Advance(15*time.Minute - time.Second)
		me(a, s.Bearer()).Expect(t, 200, nil)
		a.Clock.Advance(time.Second)
		me(a, s.Bearer()).Expect(t, 401, map[string]any{"authenticated": false, "reason": "token_expired"})
		// The refresh token still works, and the new access token does.
		r := refresh(a, map[string]any{"refreshToken": s.RefreshToken}).Expect(t, 200, nil)
		at := r["session"].(map[string]any)["accessToken"].(string)
		me(a, map[string]string{"Authorization": "Bearer " + at}).Expect(t, 200, nil)
	})
}

func refresh(a *apptest.App, body any, cookies ...*http.Cookie) *apptest.Response {
	return a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/session/refresh", Body: body, Cookies: cookies})
}

func TestRefresh(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := apptest.Start(t, st)

		t.Run("rotation: new pair works, the old refresh token is theft and kills the session", func(t *testing.T) {
			s := a.SignUp(t)
			got := refresh(a, map[string]any{"refreshToken": s.RefreshToken}).Expect(t, 200, map[string]any{
				"user": map[string]any{"id": s.UserID, "tenantId": "public", "email": s.Email, "name": "Test User", "emailVerified": false},
			})
			sess := got["session"].(map[string]any)
			next := sess["refreshToken"].(string)
			if next == s.RefreshToken || sess["sessionHandle"] != s.SessionHandle {
				t.Fatalf("not rotated: %v", sess)
			}
			refresh(a, map[string]any{"refreshToken": s.RefreshToken}).Expect(t, 401, map[string]any{"code": "token_theft_detected"})
			me(a, s.Bearer()).Expect(t, 401, map[string]any{"reason": "session_revoked"})
			refresh(a, map[string]any{"refreshToken": next}).Expect(t, 401, map[string]any{"code": "unauthorized"})
		})
		t.Run("an end user's stolen refresh token: the project hears of it", func(t *testing.T) {
			admin := a.SignUp(t)
			prj := a.CreateProject(t, admin)
			u := a.SignUpIn(t, prj)
			refresh(a, map[string]any{"refreshToken": u.RefreshToken}).Expect(t, 200, nil)
			refresh(a, map[string]any{"refreshToken": u.RefreshToken}).Expect(t, 401, map[string]any{"code": "token_theft_detected"})
			trail := a.Do(apptest.Req{Path: "/v1/projects/" + prj + "/audit", Header: admin.Bearer()}).Expect(t, 200, nil)["events"].([]any)
			ev := trail[0].(map[string]any)
			if ev["action"] != "session.theft_detected" || ev["metadata"].(map[string]any)["sessionHandle"] != u.SessionHandle || ev["actorId"] != nil {
				t.Fatalf("audit %v", ev)
			}
		})
		t.Run("cookie with an allowed Origin: 200", func(t *testing.T) {
			s := a.SignUp(t)
			r := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/session/refresh",
				Header: map[string]string{"Origin": "https://dashboard.example.com"}, Cookies: []*http.Cookie{cookie(s, "sRefreshToken")}})
			r.Expect(t, 200, nil)
		})
		t.Run("cookie without Origin: 403 csrf_rejected", func(t *testing.T) {
			s := a.SignUp(t)
			refresh(a, nil, cookie(s, "sRefreshToken")).Expect(t, 403, map[string]any{"code": "csrf_rejected"})
			refresh(a, map[string]any{"refreshToken": s.RefreshToken}).Expect(t, 200, nil) // untouched
		})
		for name, body := range map[string]any{
			"missing":       nil,
			"unparsable":    "nope",
			"not a string":  map[string]any{"refreshToken": 5},
			"bad checksum":  map[string]any{"refreshToken": "ac_rt_" + strings.Repeat("a", 38)},
			"unknown token": map[string]any{"refreshToken": mustToken(t)},
		} {
			t.Run(name+": 401 unauthorized", func(t *testing.T) {
				refresh(a, body).Expect(t, 401, map[string]any{"code": "unauthorized"})
			})
		}
		t.Run("expired session: 401", func(t *testing.T) {
			s := a.SignUp(t)
			a.Clock.Advance(721 * time.Hour)
			defer a.Clock.Advance(0)
			refresh(a, map[string]any{"refreshToken": s.RefreshToken}).Expect(t, 401, map[string]any{"code": "unauthorized"})
		})
	})
}

func TestConcurrentRefreshOnlyOneWins(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := apptest.Start(t, st)
		s := a.SignUp(t)
		var wg sync.WaitGroup
		codes := make(chan int, 8)
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				codes <- refresh(a, map[string]any{"refreshToken": s.RefreshToken}).Status
			}()
		}
		wg.Wait()
		close(codes)
		ok := 0
		for c := range codes {
			if c == 200 {
				ok++
			}
		}
		if ok > 1 {
			t.Fatalf("%d refreshes of one token succeeded", ok)
		}
	})
}

func TestSignOut(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := apptest.Start(t, st)
		signout := func(header map[string]string, cookies ...*http.Cookie) *apptest.Response {
			return a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signout", Header: header, Cookies: cookies})
		}
		t.Run("header: 200, session revoked, cookies cleared", func(t *testing.T) {
			s := a.SignUp(t)
			r := signout(s.Bearer())
			r.Expect(t, 200, map[string]any{"ok": true})
			cleared := 0
			for _, c := range (&http.Response{Header: r.Header}).Cookies() {
				if (c.Name == "sAccessToken" || c.Name == "sRefreshToken") && c.Value == "" && c.Expires.Before(time.Now()) {
					cleared++
				}
			}
			if cleared != 2 {
				t.Fatalf("cookies not cleared: %v", r.Header["Set-Cookie"])
			}
			me(a, s.Bearer()).Expect(t, 401, map[string]any{"reason": "session_revoked"})
			refresh(a, map[string]any{"refreshToken": s.RefreshToken}).Expect(t, 401, nil)
		})
		t.Run("cookie without Origin: 403 csrf_rejected, session untouched", func(t *testing.T) {
			s := a.SignUp(t)
			signout(nil, cookie(s, "sAccessToken")).Expect(t, 403, map[string]any{"code": "csrf_rejected"})
			signout(map[string]string{"Origin": "https://evil.example.com"}, cookie(s, "sAccessToken")).Expect(t, 403, map[string]any{"code": "csrf_rejected"})
			me(a, s.Bearer()).Expect(t, 200, nil)
			signout(map[string]string{"Origin": "https://dashboard.example.com"}, cookie(s, "sAccessToken")).Expect(t, 200, nil)
		})
		t.Run("no session: 401 unauthorized", func(t *testing.T) {
			signout(nil).Expect(t, 401, map[string]any{"code": "unauthorized"})
		})
	})
}

// After a revoke returns, every verification of that session fails, however many race.
func TestRevocationRace(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		var engine *session.Engine
		a := apptest.Start(t, st, apptest.WithFx(fx.Populate(&engine)))
		s := a.SignUp(t)
		me(a, s.Bearer()).Expect(t, 200, nil) // warm every cache
		if ok, err := engine.Revoke(context.Background(), s.SessionHandle); err != nil || !ok {
			t.Fatalf("revoke: %v %v", ok, err)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		stale, other := 0, map[int]int{}
		var example string
		for i := 0; i < 500; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := me(a, s.Bearer())
				mu.Lock()
				defer mu.Unlock()
				switch {
				case r.Status == 200:
					stale++
				case r.Status != 401:
					other[r.Status]++
					example = fmt.Sprintf("%d %s", r.Status, r.Body)
				}
			}()
		}
		wg.Wait()
		if stale > 0 {
			t.Fatalf("%d of 500 verifications after the revoke accepted the revoked session", stale)
		}
		// 500 requests at once on a 2-core CI machine all miss the invalidated cache and
		// queue for the database; a request that gives up there is overload, not a stale
		// answer. Once in CI one did (shown in the log when it happens).
		if len(other) > 0 {
			t.Logf("not 401 (overload, not staleness): %v, e.g. %s", other, example)
		}

	})
}

func TestJWKSAndKeyRotation(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		var issuer *session.Issuer
		a := apptest.Start(t, st, apptest.WithFx(fx.Populate(&issuer)), apptest.WithConfig(func(c *config.Config) { c.AccessTTL = time.Hour; c.RefreshTTL = 90 * 24 * time.Hour }))
		kidOf := func(tok string) string {
			p, err := jwt.ParseSigned(tok, []jose.SignatureAlgorithm{jose.EdDSA})
			if err != nil {
				t.Fatal(err)
			}
			return p.Headers[0].KeyID
		}
		var set jose.JSONWebKeySet
		a.Get("/.well-known/jwks.json").Decode(t, &set)
		s1 := a.SignUp(t)
		// From the first start, one Ed25519 key (authcore's own tokens) and one RSA key
		// (id_tokens, SPEC §21, §29), which rotates with it.
		algs := map[string]string{}
		for _, k := range set.Keys {
			algs[k.Algorithm] += k.KeyID
		}
		if len(set.Keys) != 2 || algs["EdDSA"] != kidOf(s1.AccessToken) || algs["RS256"] == "" {
			t.Fatalf("jwks %+v", set)
		}
		if _, err := issuer.SignIDToken(context.Background(), map[string]any{"sub": s1.UserID}, ""); err != nil {
			t.Fatal(err)
		}
		a.Get("/.well-known/jwks.json").Decode(t, &set)
		if len(set.Keys) != 2 {
			t.Fatalf("an id_token changed the jwks: %+v", set)
		}
		// A token from the old key, signed just before it retires...
		a.Clock.Advance(30*24*time.Hour - 30*time.Minute)
		s2 := a.SignUp(t)
		a.Clock.Advance(31 * time.Minute)
		if err := issuer.ReloadKeys(context.Background()); err != nil {
			t.Fatal(err)
		}
		s3 := a.SignUp(t)
		if kidOf(s3.AccessToken) == kidOf(s2.AccessToken) {
			t.Fatal("no new signing key after the rotation period")
		}
		// ...still verifies after the rotation: nobody is logged out by it.
		me(a, s2.Bearer()).Expect(t, 200, nil)
		me(a, s3.Bearer()).Expect(t, 200, nil)
		a.Get("/.well-known/jwks.json").Decode(t, &set)
		if len(set.Keys) != 4 {
			t.Fatalf("jwks has %d keys, want old and new of both algorithms", len(set.Keys))
		}
	})
}

func TestEngineNotReadyUntilStoreAnswers(t *testing.T) {
	admin := apptest.PostgresAdminURL()
	if admin == "" {
		t.Skip("needs PostgreSQL")
	}
	u, _ := url.Parse(apptest.Stores(t)[1].URL(t))
	u.Host = "127.0.0.1:1" // nothing listens there
	a := apptest.StartUnready(t, "postgres", u.String())
	me(a, nil).Expect(t, 503, map[string]any{"code": "auth_core_sdk_not_ready"})
	refresh(a, map[string]any{"refreshToken": "x"}).Expect(t, 503, map[string]any{"code": "auth_core_sdk_not_ready"})
	a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signout"}).Expect(t, 503, map[string]any{"code": "auth_core_sdk_not_ready"})
	a.Get("/.well-known/jwks.json").Expect(t, 503, map[string]any{"code": "auth_core_sdk_not_ready"})
	a.Get("/v1/auth-core/session/list?projectId=p&userId=u").Expect(t, 503, map[string]any{"code": "auth_core_sdk_not_ready"})
	a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/session/revoke", Body: "{}"}).Expect(t, 503, map[string]any{"code": "auth_core_sdk_not_ready"})
	a.Get("/v1/auth-core/session/recent?projectId=p").Expect(t, 503, map[string]any{"code": "auth_core_sdk_not_ready", "engine": "authcore", "sessions": []any{}})
	a.Get("/readyz").Expect(t, 503, nil)
}

func mustToken(t *testing.T) string {
	// A well-formed refresh token that was never issued.
	a := apptest.StartURL(t, "sqlite", "sqlite::memory:")
	s := a.SignUp(t)
	return s.RefreshToken
}

// Two replicas on one PostgreSQL: a revoke on one is honoured by the other within 1 s,
// although the other had the session cached as live.
func TestRevokeReachesOtherReplicas(t *testing.T) {
	if apptest.PostgresAdminURL() == "" {
		t.Skip("needs PostgreSQL")
	}
	pg := apptest.Stores(t)[1]
	var engineA *session.Engine
	var busB *invalidation.PG
	a := apptest.Start(t, pg, apptest.WithFx(fx.Populate(&engineA)))
	b := apptest.Start(t, pg, apptest.WithFx(fx.Populate(&busB)))
	<-busB.Listening()
	s := a.SignUp(t)
	me(b, s.Bearer()).Expect(t, 200, nil) // b now caches the session as live
	if _, err := engineA.Revoke(context.Background(), s.SessionHandle); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for me(b, s.Bearer()).Status != 401 {
		if time.Since(start) > time.Second {
			t.Fatal("replica b still accepts the session 1 s after the revoke")
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Logf("replica b refused the revoked session after %v", time.Since(start))
}
