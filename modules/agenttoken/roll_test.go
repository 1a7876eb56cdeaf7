package agenttoken_test

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/fx"

	"github.com/authcore/authcore/ent/auditevent"
	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/platform/invalidation"
)

func (w *world) roll(as *apptest.Session, prj, id string, body any) *apptest.Response {
	return w.a.Do(apptest.Req{Method: http.MethodPost, Path: w.path(prj) + "/" + id + "/roll", Body: body, Header: auth(as)})
}

func (w *world) status(pt string) int { return w.me("Bearer " + pt).Status }

func TestRoll(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)

		t.Run("new secret, same record; the old one works until the grace ends", func(t *testing.T) {
			w := newWorld(t, st) // its clock moves past the sessions' lifetime
			old, id := w.mint(t, map[string]any{"agentName": "bot", "scopes": []string{"files:read"}})
			if w.status(old) != 200 { // now cached as valid until the token expires
				t.Fatal("the minted token does not verify")
			}
			got := w.roll(w.admin, w.prj, id, map[string]any{"graceHours": 1}).
				Expect(t, 200, map[string]any{"engine": "authcore", "projectId": w.prj})
			agent := got["agent"].(map[string]any)
			pt := got["plaintext"].(string)
			if agent["id"] != id || agent["agentName"] != "bot" || pt == old || !tokenPattern.MatchString(pt) || got["note"] == nil {
				t.Fatalf("roll answer %v", got)
			}
			if agent["tokenHint"] == nil || agent["tokenHint"] == "" || agent["tokenHint"].(string)[len(agent["tokenHint"].(string))-4:] != pt[len(pt)-4:] {
				t.Fatalf("tokenHint %v does not describe the new secret", agent["tokenHint"])
			}
			until, err := time.Parse(time.RFC3339Nano, got["previousSecretExpiresAt"].(string))
			if d := until.Sub(w.a.Clock.Now()); err != nil || d > time.Hour || d < time.Hour-time.Second {
				t.Fatalf("previousSecretExpiresAt %v (%v), want in 1 h", got["previousSecretExpiresAt"], err)
			}
			if w.status(pt) != 200 || w.status(old) != 200 {
				t.Fatal("during the grace both secrets must verify")
			}
			w.a.Clock.Advance(time.Hour - time.Second)
			if w.status(old) != 200 {
				t.Fatal("the old secret stopped before its grace ended")
			}
			w.a.Clock.Advance(time.Second)
			if w.status(old) != 401 || w.status(pt) != 200 {
				t.Fatal("after the grace only the new secret may verify")
			}
			n, err := w.a.Ent.AuditEvent.Query().Where(auditevent.Action("ai_token.roll"), auditevent.ProjectID(w.prj)).Count(context.Background())
			if err != nil || n != 1 {
				t.Fatalf("%d ai_token.roll records (%v)", n, err)
			}
		})

		t.Run("answers with a secret are never cached", func(t *testing.T) {
			_, id := w.mint(t, nil)
			if r := w.roll(w.admin, w.prj, id, nil); r.Header.Get("Cache-Control") != "no-store" {
				t.Fatalf("Cache-Control %q", r.Header.Get("Cache-Control"))
			}
		})

		t.Run("graceHours 0 ends the old secret at once, cached or not", func(t *testing.T) {
			old, id := w.mint(t, nil)
			w.status(old)
			got := w.roll(w.admin, w.prj, id, map[string]any{"graceHours": 0}).Expect(t, 200, nil)
			if w.status(old) != 401 || w.status(got["plaintext"].(string)) != 200 {
				t.Fatal("graceHours 0 must retire the old secret now")
			}
		})

		t.Run("the default grace is 24 h; a roll in a grace replaces it", func(t *testing.T) {
			s0, id := w.mint(t, nil)
			s1 := w.roll(w.admin, w.prj, id, nil).Expect(t, 200, nil)
			until, _ := time.Parse(time.RFC3339Nano, s1["previousSecretExpiresAt"].(string))
			if d := until.Sub(w.a.Clock.Now()); d > 24*time.Hour || d < 24*time.Hour-time.Second {
				t.Fatalf("default grace %v", d)
			}
			w.status(s0)
			s2 := w.roll(w.admin, w.prj, id, map[string]any{"graceHours": 2}).Expect(t, 200, nil)
			if w.status(s0) != 401 {
				t.Fatal("the secret two rolls back still verifies")
			}
			if w.status(s1["plaintext"].(string)) != 200 || w.status(s2["plaintext"].(string)) != 200 {
				t.Fatal("the current and the previous secret must verify")
			}
		})

		t.Run("the grace never outlives the token", func(t *testing.T) {
			_, id := w.mint(t, map[string]any{"ttlHours": 1})
			got := w.roll(w.admin, w.prj, id, map[string]any{"graceHours": 48}).Expect(t, 200, nil)
			if got["previousSecretExpiresAt"] != got["agent"].(map[string]any)["expiresAt"] {
				t.Fatalf("grace ends %v, token %v", got["previousSecretExpiresAt"], got["agent"].(map[string]any)["expiresAt"])
			}
		})

		t.Run("revoking a rolled token ends both secrets", func(t *testing.T) {
			s0, id := w.mint(t, nil)
			s1 := w.roll(w.admin, w.prj, id, nil).Expect(t, 200, nil)["plaintext"].(string)
			w.status(s0)
			w.status(s1)
			w.a.Do(apptest.Req{Method: http.MethodDelete, Path: w.path(w.prj) + "/" + id, Header: auth(w.admin)}).Expect(t, 200, nil)
			if w.status(s0) != 401 || w.status(s1) != 401 {
				t.Fatal("a secret of a revoked token verifies")
			}
			w.roll(w.admin, w.prj, id, nil).Expect(t, 404, map[string]any{"code": "roll_failed", "engine": "authcore"})
		})

		t.Run("graceHours bounds and types", func(t *testing.T) {
			_, id := w.mint(t, nil)
			for _, g := range []any{-1, 168.01, 169, "24", nil, true} {
				w.roll(w.admin, w.prj, id, map[string]any{"graceHours": g}).Expect(t, 400, map[string]any{"code": "roll_failed", "engine": "authcore"})
			}
			for _, g := range []any{0, 0.5, 168} {
				w.roll(w.admin, w.prj, id, map[string]any{"graceHours": g}).Expect(t, 200, nil)
			}
			// Like create, a body that is not a JSON object is {}.
			w.a.Do(apptest.Req{Method: http.MethodPost, Path: w.path(w.prj) + "/" + id + "/roll", Body: "{nope", Header: auth(w.admin)}).Expect(t, 200, nil)
		})

		t.Run("unknown, another project's: 404 roll_failed; non-admins: 403", func(t *testing.T) {
			_, id := w.mint(t, nil)
			w.roll(w.admin, w.prj, "tok_unknown", nil).Expect(t, 404, map[string]any{"code": "roll_failed"})
			w.roll(w.adminB, w.other, id, nil).Expect(t, 404, map[string]any{"code": "roll_failed"})
			w.roll(w.dev, w.prj, id, nil).Expect(t, 403, map[string]any{"engine": "authcore"})
			w.roll(nil, w.prj, id, nil).Expect(t, 401, map[string]any{"engine": "authcore"})
		})

		t.Run("a token the policy no longer allows is not rolled", func(t *testing.T) {
			_, id := w.mint(t, map[string]any{"ttlHours": 48, "scopes": []string{"db:read"}})
			w.a.Do(apptest.Req{Method: http.MethodPut, Path: "/v1/projects/" + w.prj + "/policy", Body: map[string]any{"agentTokenMaxTtlHours": 24}, Header: auth(w.admin)}).Expect(t, 200, nil)
			w.roll(w.admin, w.prj, id, nil).Expect(t, 400, map[string]any{"code": "roll_failed"})
			w.a.Do(apptest.Req{Method: http.MethodPut, Path: "/v1/projects/" + w.prj + "/policy", Body: map[string]any{"allowedScopes": []string{"files:*"}}, Header: auth(w.admin)}).Expect(t, 200, nil)
			w.roll(w.admin, w.prj, id, nil).Expect(t, 400, map[string]any{"code": "roll_failed"})
			w.a.Do(apptest.Req{Method: http.MethodPut, Path: "/v1/projects/" + w.prj + "/policy", Body: map[string]any{}, Header: auth(w.admin)}).Expect(t, 200, nil)
		})
	})
}

// Verifications racing a roll: every one of the old secret succeeds (it is in its grace),
// and the new one succeeds from the moment the roll answers. On a second replica sharing
// PostgreSQL, which had the old secret cached, the old one fails once the grace is over.
func TestRollUnderConcurrentVerification(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		var b *apptest.App
		if st.Name == "postgres" {
			var bus *invalidation.PG
			b = apptest.Start(t, st, apptest.WithFx(fx.Populate(&bus)))
			<-bus.Listening()
		}
		old, id := w.mint(t, nil)
		meOn := func(a *apptest.App, pt string) int {
			return a.Do(apptest.Req{Path: "/v1/auth-core/ai/me", Header: map[string]string{"Authorization": "Bearer " + pt}}).Status
		}
		var stop atomic.Bool
		var refused, checked atomic.Int64
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for !stop.Load() {
					checked.Add(1)
					if meOn(w.a, old) != 200 {
						refused.Add(1)
					}
					if b != nil && meOn(b, old) != 200 {
						refused.Add(1)
					}
				}
			}()
		}
		time.Sleep(20 * time.Millisecond)
		pt := w.roll(w.admin, w.prj, id, map[string]any{"graceHours": 1}).Expect(t, 200, nil)["plaintext"].(string)
		if meOn(w.a, pt) != 200 {
			t.Error("the new secret does not verify as the roll answers")
		}
		time.Sleep(20 * time.Millisecond)
		stop.Store(true)
		wg.Wait()
		if refused.Load() > 0 || checked.Load() == 0 {
			t.Fatalf("%d of %d verifications of the old secret failed during its grace", refused.Load(), checked.Load())
		}
		w.a.Clock.Advance(time.Hour)
		if meOn(w.a, old) != 401 {
			t.Fatal("the old secret verifies after its grace")
		}
		if b != nil {
			deadline := time.Now().Add(time.Second)
			for meOn(b, pt) != 200 {
				if time.Now().After(deadline) {
					t.Fatal("replica b does not accept the new secret")
				}
				time.Sleep(5 * time.Millisecond)
			}
			b.Clock.Advance(time.Hour)
			if meOn(b, old) != 401 {
				t.Fatal("replica b accepts the old secret after its grace")
			}
		}
	})
}
