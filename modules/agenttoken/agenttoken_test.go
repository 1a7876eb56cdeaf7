package agenttoken_test

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/fx"

	"github.com/authcore/authcore/ent/auditevent"
	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/modules/agenttoken"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/invalidation"
	"github.com/authcore/authcore/platform/secret"
)

func TestMain(m *testing.M) { apptest.Main(m) }

type world struct {
	a                  *apptest.App
	prj, other         string
	admin, dev, adminB *apptest.Session
}

func newWorld(t *testing.T, st apptest.Store) *world {
	a := apptest.Start(t, st)
	w := &world{a: a, admin: a.SignUp(t), dev: a.SignUp(t), adminB: a.SignUp(t)}
	w.prj = a.CreateProject(t, w.admin)
	w.other = a.CreateProject(t, w.adminB)
	a.AddMember(t, w.admin, w.prj, w.dev, "developer")
	return w
}

func (w *world) path(prj string) string { return "/v1/auth-core/projects/" + prj + "/ai/agents" }

func (w *world) create(as *apptest.Session, prj string, body any) *apptest.Response {
	return w.a.Do(apptest.Req{Method: http.MethodPost, Path: w.path(prj), Body: body, Header: auth(as)})
}

func (w *world) mint(t *testing.T, body any) (plaintext, id string) {
	got := w.create(w.admin, w.prj, body).Expect(t, 200, nil)
	return got["plaintext"].(string), got["agent"].(map[string]any)["id"].(string)
}

func (w *world) me(header string) *apptest.Response {
	h := map[string]string{}
	if header != "" {
		h["Authorization"] = header
	}
	return w.a.Do(apptest.Req{Path: "/v1/auth-core/ai/me", Header: h})
}

func auth(s *apptest.Session) map[string]string {
	if s == nil {
		return nil
	}
	return s.Bearer()
}

var tokenPattern = regexp.MustCompile(`^ac_ai_[0-9A-Za-z]{38}$`)

func TestCreate(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		t.Run("200 (not 201) with agent, plaintext and note; defaults", func(t *testing.T) {
			got := w.create(w.admin, w.prj, map[string]any{}).Expect(t, 200, map[string]any{"engine": "authcore", "projectId": w.prj})
			pt := got["plaintext"].(string)
			if !tokenPattern.MatchString(pt) || !secret.CheckToken("ai", pt) {
				t.Fatalf("plaintext %q", pt)
			}
			if !strings.Contains(got["note"].(string), "Authorization: Bearer <token>") {
				t.Fatalf("note %q", got["note"])
			}
			ag := got["agent"].(map[string]any)
			if ag["agentName"] != "agent" || len(ag["scopes"].([]any)) != 0 || ag["createdBy"] != w.admin.UserID || ag["lastUsedAt"] != nil {
				t.Fatalf("agent %v", ag)
			}
			created, _ := time.Parse(time.RFC3339Nano, ag["createdAt"].(string))
			expires, _ := time.Parse(time.RFC3339, ag["expiresAt"].(string))
			if d := expires.Sub(created); d < 720*time.Hour-time.Second || d > 720*time.Hour {
				t.Fatalf("default ttl %v", d)
			}
			if ag["tokenHint"] != secret.Hint(pt) || strings.Contains(fmt.Sprint(ag), pt[6:]) {
				t.Fatalf("hint %v", ag["tokenHint"])
			}
			for _, k := range []string{"digest", "plaintext", "secret"} {
				if _, ok := ag[k]; ok {
					t.Fatalf("agent record has %s", k)
				}
			}
		})
		for name, body := range map[string]any{"missing body": nil, "unparsable body": "{nope", "array body": "[1]"} {
			t.Run(name+" is treated as {}", func(t *testing.T) {
				got := w.create(w.admin, w.prj, body).Expect(t, 200, nil)
				if got["agent"].(map[string]any)["agentName"] != "agent" {
					t.Fatal("defaults not applied")
				}
			})
		}
		valid := []struct {
			name string
			body map[string]any
		}{
			{"ttlHours 1", map[string]any{"ttlHours": 1}},
			{"ttlHours 8760", map[string]any{"ttlHours": 8760}},
			{"ttlHours 1.5", map[string]any{"ttlHours": 1.5}},
			{"agentName of 100", map[string]any{"agentName": strings.Repeat("ä", 100)}},
			{"32 scopes", map[string]any{"scopes": manyScopes(32)}},
			{"scope charset", map[string]any{"scopes": []string{"db:read", "s3.write", "a_b-c*", "x" + strings.Repeat("y", 63)}}},
		}
		for _, tc := range valid {
			t.Run(tc.name+" accepted", func(t *testing.T) { w.create(w.admin, w.prj, tc.body).Expect(t, 200, nil) })
		}
		t.Run("ttlHours 1.5 expires 90 minutes later", func(t *testing.T) {
			ag := w.create(w.admin, w.prj, map[string]any{"ttlHours": 1.5}).Expect(t, 200, nil)["agent"].(map[string]any)
			created, _ := time.Parse(time.RFC3339Nano, ag["createdAt"].(string))
			expires, _ := time.Parse(time.RFC3339, ag["expiresAt"].(string))
			if d := expires.Sub(created); d < 90*time.Minute-time.Second || d > 90*time.Minute {
				t.Fatalf("%v", d)
			}
		})
		invalid := []struct {
			name string
			body map[string]any
		}{
			{"ttlHours 0", map[string]any{"ttlHours": 0}},
			{"ttlHours 8761", map[string]any{"ttlHours": 8761}},
			{"ttlHours -1", map[string]any{"ttlHours": -1}},
			{"ttlHours \"abc\"", map[string]any{"ttlHours": "abc"}},
			{"ttlHours true", map[string]any{"ttlHours": true}},
			{"ttlHours null", map[string]any{"ttlHours": nil}},
			{"agentName empty", map[string]any{"agentName": ""}},
			{"agentName of 101", map[string]any{"agentName": strings.Repeat("a", 101)}},
			{"agentName not a string", map[string]any{"agentName": 5}},
			{"agentName with a control character", map[string]any{"agentName": "a\nb"}},
			{"33 scopes", map[string]any{"scopes": manyScopes(33)}},
			{"scope with upper case", map[string]any{"scopes": []string{"DB:read"}}},
			{"scope of 65 characters", map[string]any{"scopes": []string{"x" + strings.Repeat("y", 64)}}},
			{"scopes not an array", map[string]any{"scopes": "db:read"}},
			{"scopes with a number", map[string]any{"scopes": []any{1}}},
		}
		for _, tc := range invalid {
			t.Run(tc.name+" is 400 create_failed", func(t *testing.T) {
				before := countTokens(t, w)
				got := w.create(w.admin, w.prj, tc.body).Expect(t, 400, map[string]any{"engine": "authcore", "code": "create_failed"})
				if got["message"] == "" {
					t.Fatal("no message")
				}
				if countTokens(t, w) != before {
					t.Fatal("a rejected create wrote a token")
				}
			})
		}
	})
}

func manyScopes(n int) []string {
	s := make([]string, n)
	for i := range s {
		s[i] = fmt.Sprintf("scope%d", i)
	}
	return s
}

func countTokens(t *testing.T, w *world) int {
	var n int
	if err := w.a.DB.SQL.QueryRowContext(context.Background(), "SELECT count(*) FROM "+agenttoken.Table.Name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestListAndRevoke(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		ctx := context.Background()
		pt, id := w.mint(t, map[string]any{"agentName": "one"})
		_, id2 := w.mint(t, map[string]any{"agentName": "two"})
		ptB := w.create(w.adminB, w.other, nil).Expect(t, 200, nil)["plaintext"].(string)
		idB := w.create(w.adminB, w.other, nil).Expect(t, 200, nil)["agent"].(map[string]any)["id"].(string)

		t.Run("list: the project's live tokens, newest first, no secrets", func(t *testing.T) {
			r := w.a.Do(apptest.Req{Path: w.path(w.prj), Header: w.admin.Bearer()})
			got := r.Expect(t, 200, map[string]any{"engine": "authcore", "projectId": w.prj})
			agents := got["agents"].([]any)
			if len(agents) != 2 || agents[0].(map[string]any)["id"] != id2 || agents[1].(map[string]any)["id"] != id {
				t.Fatalf("%v", agents)
			}
			if strings.Contains(string(r.Body), pt) || strings.Contains(string(r.Body), ptB) {
				t.Fatal("a secret in the list")
			}
		})
		del := func(as *apptest.Session, prj, tok string) *apptest.Response {
			return w.a.Do(apptest.Req{Method: http.MethodDelete, Path: w.path(prj) + "/" + tok, Header: auth(as)})
		}
		t.Run("another project's token through my path: 404 revoke_failed, it still works", func(t *testing.T) {
			del(w.admin, w.prj, idB).Expect(t, 404, map[string]any{"engine": "authcore", "code": "revoke_failed"})
			w.me("Bearer "+ptB).Expect(t, 200, nil)
		})
		t.Run("unknown token: 404 revoke_failed", func(t *testing.T) {
			del(w.admin, w.prj, "tok_nope").Expect(t, 404, map[string]any{"code": "revoke_failed"})
		})
		t.Run("revoke: 200, audited, refused at once, gone from the list", func(t *testing.T) {
			w.me("Bearer "+pt).Expect(t, 200, nil) // cached as valid
			del(w.admin, w.prj, id).Expect(t, 200, map[string]any{"engine": "authcore", "ok": true, "projectId": w.prj, "tokenId": id})
			w.me("Bearer "+pt).Expect(t, 401, map[string]any{"code": "invalid_token"})
			got := w.a.Do(apptest.Req{Path: w.path(w.prj), Header: w.admin.Bearer()}).Expect(t, 200, nil)
			if len(got["agents"].([]any)) != 1 {
				t.Fatal("revoked token still listed")
			}
			ev, err := w.a.Ent.AuditEvent.Query().Where(auditevent.Action("ai_token.revoke"), auditevent.ProjectID(w.prj)).Only(ctx)
			if err != nil || ev.Metadata["tokenId"] != id || *ev.ActorID != w.admin.UserID {
				t.Fatalf("%+v %v", ev, err)
			}
			if n, _ := w.a.Ent.AuditEvent.Query().Where(auditevent.Action("ai_token.create"), auditevent.ProjectID(w.prj)).Count(ctx); n != 2 {
				t.Fatalf("%d create records", n)
			}
		})
		t.Run("already revoked: 404 revoke_failed", func(t *testing.T) {
			del(w.admin, w.prj, id).Expect(t, 404, map[string]any{"code": "revoke_failed"})
		})
		t.Run("guards carry engine; nobody but A's admin gets in", func(t *testing.T) {
			before := countTokens(t, w)
			w.a.Do(apptest.Req{Path: w.path(w.prj)}).Expect(t, 401, map[string]any{"engine": "authcore", "code": "unauthorized"})
			w.a.Do(apptest.Req{Path: w.path(w.prj), Header: w.dev.Bearer()}).Expect(t, 403, map[string]any{"engine": "authcore", "code": "forbidden"})
			w.a.Do(apptest.Req{Path: w.path(w.prj), Header: w.adminB.Bearer()}).Expect(t, 403, map[string]any{"engine": "authcore", "code": "forbidden"})
			w.create(w.adminB, w.prj, nil).Expect(t, 403, map[string]any{"engine": "authcore"})
			w.create(w.dev, w.prj, nil).Expect(t, 403, nil)
			del(w.adminB, w.prj, id2).Expect(t, 403, map[string]any{"engine": "authcore"})
			del(nil, w.prj, id2).Expect(t, 401, map[string]any{"engine": "authcore"})
			if countTokens(t, w) != before {
				t.Fatal("a refused call wrote")
			}
			if tok, err := agenttoken.Table.Read(ctx, w.a.DB, id2); err != nil || tok.Revoked() {
				t.Fatal("a refused call revoked")
			}
		})
	})
}

func TestAIMeHeaders(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		pt, id := w.mint(t, map[string]any{"agentName": "bot", "scopes": []string{"db:read"}})
		unauthorized := map[string]any{"engine": "authcore", "authenticated": false, "code": "unauthorized"}
		invalid := map[string]any{"engine": "authcore", "authenticated": false, "code": "invalid_token"}

		t.Run("valid: 200 with the verification fields", func(t *testing.T) {
			got := w.me("Bearer "+pt).Expect(t, 200, map[string]any{
				"engine": "authcore", "authenticated": true, "kind": "ai_agent",
				"tokenId": id, "projectId": w.prj, "agentName": "bot", "scopes": []string{"db:read"}, "createdBy": w.admin.UserID,
			})
			if got["expiresAt"] == nil {
				t.Fatal("no expiresAt")
			}
		})
		raw := func(header string) (int, string) {
			req := "GET /v1/auth-core/ai/me HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
			if header != "" {
				req += "Authorization: " + header + "\r\n"
			}
			return w.a.Raw(t, req+"\r\n")
		}
		for _, tc := range []struct {
			name, header string
			status       int
			code         string
		}{
			{"missing header", "", 401, "unauthorized"},
			{"lower-case bearer", "bearer " + pt, 401, "unauthorized"},
			{"Bearer alone", "Bearer", 401, "unauthorized"},
			{"Bearer and one space", "Bearer ", 401, "unauthorized"},
			{"Bearer and spaces", "Bearer    ", 401, "unauthorized"},
			{"tab instead of space", "Bearer\t" + pt, 401, "unauthorized"},
			{"Basic scheme", "Basic " + pt, 401, "unauthorized"},
			{"surrounding spaces are trimmed", "Bearer    " + pt + "   ", 200, ""},
			{"garbage", "Bearer nonsense", 401, "invalid_token"},
			{"another kind of token", "Bearer " + mustToken(t, "db"), 401, "invalid_token"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				status, body := raw(tc.header)
				if status != tc.status || (tc.code != "" && !strings.Contains(body, `"code":"`+tc.code+`"`)) {
					t.Fatalf("%d %s", status, body)
				}
				if tc.status == 401 && !strings.Contains(body, `"engine":"authcore"`) {
					t.Fatalf("no engine: %s", body)
				}
			})
		}
		t.Run("status bodies via net/http too", func(t *testing.T) {
			w.me("").Expect(t, 401, unauthorized)
			w.me("Bearer x").Expect(t, 401, invalid)
		})
		t.Run("a tampered checksum is refused without a store query", func(t *testing.T) {
			tampered := pt[:len(pt)-1] + flip(pt[len(pt)-1])
			before := w.a.DB.Queries()
			w.me("Bearer "+tampered).Expect(t, 401, invalid)
			if q := w.a.DB.Queries() - before; q != 0 {
				t.Fatalf("%d store queries for a token with a bad checksum", q)
			}
		})
		t.Run("an unknown well-formed token is looked up once, then cached as unknown", func(t *testing.T) {
			unknown := mustToken(t, "ai")
			first := w.a.DB.Queries()
			w.me("Bearer "+unknown).Expect(t, 401, invalid)
			if q := w.a.DB.Queries() - first; q != 1 {
				t.Fatalf("%d store queries for the first sight of a token, want 1 (is the counter blind?)", q)
			}
			before := w.a.DB.Queries()
			for i := 0; i < 5; i++ {
				w.me("Bearer "+unknown).Expect(t, 401, invalid)
			}
			if q := w.a.DB.Queries() - before; q != 0 {
				t.Fatalf("%d store queries for a known-unknown token", q)
			}
		})
		t.Run("a valid token is looked up once", func(t *testing.T) {
			w.me("Bearer " + pt)
			before := w.a.DB.Queries()
			for i := 0; i < 5; i++ {
				w.me("Bearer "+pt).Expect(t, 200, nil)
			}
			if q := w.a.DB.Queries() - before; q != 0 {
				t.Fatalf("%d store queries on a warm cache", q)
			}
		})
	})
}

func flip(c byte) string {
	if c == 'a' {
		return "b"
	}
	return "a"
}

func mustToken(t *testing.T, kind string) string {
	s, err := secret.NewToken(kind)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestExpiry(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		pt, _ := w.mint(t, map[string]any{"ttlHours": 1})
		w.me("Bearer "+pt).Expect(t, 200, nil)
		w.a.Clock.Advance(time.Hour - time.Second)
		w.me("Bearer "+pt).Expect(t, 200, nil)
		w.a.Clock.Advance(time.Second)
		w.me("Bearer "+pt).Expect(t, 401, map[string]any{"code": "invalid_token"})
	})
}

func TestLastUsedIsBatchedAndFlushedAtShutdown(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		pt, id := w.mint(t, nil)
		before := w.a.DB.Queries()
		w.me("Bearer "+pt).Expect(t, 200, nil)
		w.me("Bearer "+pt).Expect(t, 200, nil)
		// One lookup, and no write on the request path.
		if q := w.a.DB.Queries() - before; q != 1 {
			t.Fatalf("%d statements for two verifications", q)
		}
		used := w.a.Clock.Now()
		if err := w.a.Stop(); err != nil {
			t.Fatal(err)
		}
		// The app is stopped: read through a fresh one on the same store.
		b := apptest.StartURL(t, st.Name, w.a.Config.DatabaseURL)
		tok, err := agenttoken.Table.Read(context.Background(), b.DB, id)
		if err != nil || tok == nil {
			t.Fatal(tok, err)
		}
		if tok.LastUsedAt == nil || tok.LastUsedAt.Sub(used).Abs() > time.Second {
			t.Fatalf("lastUsedAt %v, want about %v", tok.LastUsedAt, used)
		}
	})
}

// 1000 concurrent verifiers while the token is revoked: once the revoke call has
// returned, no verification that starts afterwards succeeds.
func TestRevokeUnderConcurrentVerification(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		pt, id := w.mint(t, nil)
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1000, MaxConnsPerHost: 0}, Timeout: 30 * time.Second}
		defer client.CloseIdleConnections()
		var revokedAt atomic.Int64 // unix nanos once the revoke returned
		var stop atomic.Bool
		var lateSuccesses, calls atomic.Int64
		var wg sync.WaitGroup
		for i := 0; i < 1000; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for !stop.Load() {
					req, _ := http.NewRequest(http.MethodGet, w.a.Base+"/v1/auth-core/ai/me", nil)
					req.Header.Set("Authorization", "Bearer "+pt)
					r := revokedAt.Load()
					res, err := client.Do(req)
					if err != nil {
						continue
					}
					res.Body.Close()
					calls.Add(1)
					if r != 0 && res.StatusCode == 200 {
						lateSuccesses.Add(1)
					}
				}
			}()
		}
		time.Sleep(200 * time.Millisecond)
		w.a.Do(apptest.Req{Method: http.MethodDelete, Path: w.path(w.prj) + "/" + id, Header: w.admin.Bearer()}).Expect(t, 200, nil)
		revokedAt.Store(time.Now().UnixNano())
		time.Sleep(300 * time.Millisecond)
		stop.Store(true)
		wg.Wait()
		if n := lateSuccesses.Load(); n > 0 {
			t.Fatalf("%d verifications that started after the revoke returned succeeded", n)
		}
		t.Logf("%d verifications in all", calls.Load())
	})
}

func TestSecretsNeverStoredOrLogged(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		pt, _ := w.mint(t, nil)
		w.me("Bearer "+pt).Expect(t, 200, nil)
		db, logs := w.a.DumpDB(t), w.a.Logs.String()
		if !strings.Contains(db, "tok_") {
			t.Fatal("the scan sees no tokens: it would pass vacuously")
		}
		// The whole secret, and its random part alone.
		for _, s := range []string{pt, pt[6:38]} {
			if strings.Contains(db, s) || strings.Contains(logs, s) {
				t.Fatalf("the secret %.10s… is in the database or the log", s)
			}
		}
	})
}

func TestMetrics(t *testing.T) {
	w := newWorld(t, apptest.Stores(t)[0])
	pt, _ := w.mint(t, nil)
	w.me("Bearer " + pt)
	w.me("Bearer x")
	w.me("")
	m := string(w.a.Get("/metrics").Body)
	for _, want := range []string{
		`authcore_credentials_issued_total{kind="ai_agent",product=""} 1`,
		`authcore_verifications_total{kind="ai_agent",result="ok"} 1`,
		`authcore_verifications_total{kind="ai_agent",result="invalid_token"} 1`,
		`authcore_verifications_total{kind="ai_agent",result="unauthorized"} 1`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// A revoke on one replica is honoured by another sharing PostgreSQL within 1 s, although
// the other had the token cached as valid.
func TestRevokeReachesOtherReplicas(t *testing.T) {
	if apptest.PostgresAdminURL() == "" {
		t.Skip("needs PostgreSQL")
	}
	pg := apptest.Stores(t)[1]
	var bus *invalidation.PG
	w := newWorld(t, pg)
	b := apptest.Start(t, pg, apptest.WithFx(fx.Populate(&bus)))
	<-bus.Listening()
	pt, id := w.mint(t, nil)
	meB := func() int {
		return b.Do(apptest.Req{Path: "/v1/auth-core/ai/me", Header: map[string]string{"Authorization": "Bearer " + pt}}).Status
	}
	if meB() != 200 {
		t.Fatal("b does not accept the token")
	}
	w.a.Do(apptest.Req{Method: http.MethodDelete, Path: w.path(w.prj) + "/" + id, Header: w.admin.Bearer()}).Expect(t, 200, nil)
	start := time.Now()
	for meB() != 401 {
		if time.Since(start) > time.Second {
			t.Fatal("replica b still accepts the token 1 s after the revoke")
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Logf("replica b refused the token after %v", time.Since(start))
}

// Failed verifications spend the client's budget; successful ones do not.
func TestFailedVerificationsAreRateLimited(t *testing.T) {
	a := apptest.StartURL(t, "sqlite", "sqlite:"+t.TempDir()+"/a.db", apptest.WithConfig(func(c *config.Config) { c.RateLimit = 3 }))
	w := &world{a: a, admin: a.SignUp(t)}
	w.prj = a.CreateProject(t, w.admin)
	pt, _ := w.mint(t, nil)
	for i := 0; i < 10; i++ {
		w.me("Bearer "+pt).Expect(t, 200, nil)
	}
	for i := 0; i < 3; i++ {
		w.me("Bearer nonsense").Expect(t, 401, nil)
	}
	r := w.me("Bearer " + pt)
	r.Expect(t, 429, map[string]any{"code": "rate_limited"})
	if r.Header.Get("Retry-After") == "" {
		t.Fatal("no Retry-After")
	}
}
