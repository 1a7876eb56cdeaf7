package session_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/authcore/authcore/ent/auditevent"
	entsession "github.com/authcore/authcore/ent/session"
	"github.com/authcore/authcore/internal/apptest"
)

// adminWorld is one project A with an admin, a developer, a viewer, a tenant user, and a
// project B with its own admin.
type adminWorld struct {
	a                                  *apptest.App
	prjA, prjB                         string
	admin, dev, viewer, tenant, adminB *apptest.Session
	outsider                           *apptest.Session // a dashboard user of neither project
}

func newAdminWorld(t *testing.T, st apptest.Store) *adminWorld {
	a := apptest.Start(t, st)
	w := &adminWorld{a: a, admin: a.SignUp(t), dev: a.SignUp(t), viewer: a.SignUp(t), adminB: a.SignUp(t), outsider: a.SignUp(t)}
	w.prjA = a.CreateProject(t, w.admin)
	w.prjB = a.CreateProject(t, w.adminB)
	a.AddMember(t, w.admin, w.prjA, w.dev, "developer")
	a.AddMember(t, w.admin, w.prjA, w.viewer, "viewer")
	w.tenant = a.SignUpIn(t, w.prjA)
	return w
}

func (w *adminWorld) list(as *apptest.Session, q url.Values) *apptest.Response {
	return w.a.Do(apptest.Req{Path: "/v1/auth-core/session/list?" + q.Encode(), Header: bearer(as)})
}

func (w *adminWorld) recent(as *apptest.Session, q string) *apptest.Response {
	return w.a.Do(apptest.Req{Path: "/v1/auth-core/session/recent?" + q, Header: bearer(as)})
}

func (w *adminWorld) revoke(as *apptest.Session, query string, body any) *apptest.Response {
	return w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/session/revoke" + query, Body: body, Header: bearer(as)})
}

func bearer(s *apptest.Session) map[string]string {
	if s == nil {
		return nil
	}
	return s.Bearer()
}

func TestSessionList(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newAdminWorld(t, st)
		t.Run("guard first: a viewer without userId is 403, not userId_required", func(t *testing.T) {
			w.list(w.viewer, url.Values{"projectId": {w.prjA}}).Expect(t, 403, map[string]any{"code": "forbidden"})
		})
		t.Run("userId absent: 400 userId_required", func(t *testing.T) {
			w.list(w.admin, url.Values{"projectId": {w.prjA}}).Expect(t, 400, map[string]any{"code": "userId_required"})
		})
		t.Run("userId empty: 400 userId_required", func(t *testing.T) {
			w.list(w.admin, url.Values{"projectId": {w.prjA}, "userId": {""}}).Expect(t, 400, map[string]any{"code": "userId_required"})
		})
		t.Run("a tenant user's handles, count equal to the handles", func(t *testing.T) {
			got := w.list(w.admin, url.Values{"projectId": {w.prjA}, "userId": {w.tenant.UserID}}).
				Expect(t, 200, map[string]any{"userId": w.tenant.UserID, "handles": []string{w.tenant.SessionHandle}, "count": 1, "projectId": w.prjA})
			_ = got
		})
		t.Run("a member's sessions read as absent: dashboard users are out of scope", func(t *testing.T) {
			w.list(w.admin, url.Values{"projectId": {w.prjA}, "userId": {w.dev.UserID}}).
				Expect(t, 200, map[string]any{"handles": []string{}, "count": 0})
		})
		t.Run("an outsider's sessions read as absent", func(t *testing.T) {
			w.list(w.admin, url.Values{"projectId": {w.prjA}, "userId": {w.outsider.UserID}}).
				Expect(t, 200, map[string]any{"handles": []string{}, "count": 0})
		})
	})
}

func TestSessionRecent(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newAdminWorld(t, st)
		// Three sessions in A's tenant in all.
		w.a.SignUpIn(t, w.prjA)
		w.a.SignUpIn(t, w.prjA)
		count := func(q string) float64 {
			got := w.recent(w.admin, "projectId="+w.prjA+q).Expect(t, 200, nil)
			n := got["count"].(float64)
			if int(n) != len(got["sessions"].([]any)) {
				t.Fatalf("count %v != %d sessions", n, len(got["sessions"].([]any)))
			}
			return n
		}
		t.Run("body: engine, storage, projectId, tenantId defaults to the project's tenant", func(t *testing.T) {
			got := w.recent(w.admin, "projectId="+w.prjA).Expect(t, 200, map[string]any{
				"engine": "authcore", "storage": st.Name, "projectId": w.prjA, "tenantId": w.prjA, "count": 3,
			})
			s := got["sessions"].([]any)[0].(map[string]any)
			for _, k := range []string{"sessionHandle", "userId", "tenantId", "createdAt", "lastActiveAt", "expiresAt", "userAgent", "ipHash"} {
				if _, ok := s[k]; !ok {
					t.Fatalf("element lacks %s: %v", k, s)
				}
			}
			if s["tenantId"] != w.prjA {
				t.Fatalf("tenant filter: %v", s)
			}
		})
		for _, tc := range []struct {
			limit string
			want  float64
		}{
			{"2", 2}, {"0", 1}, {"-5", 1}, {"1", 1}, {"1.9", 1}, {"1e9", 3}, {"500", 3}, {"501", 3},
			{"abc", 3}, {"Infinity", 3}, {"-Infinity", 3}, {"NaN", 3}, {"", 3},
		} {
			t.Run("limit="+tc.limit, func(t *testing.T) {
				if got := count("&limit=" + url.QueryEscape(tc.limit)); got != tc.want {
					t.Fatalf("count %v, want %v", got, tc.want)
				}
			})
		}
		t.Run("tenantId=public reads as empty, members included", func(t *testing.T) {
			w.recent(w.admin, "projectId="+w.prjA+"&tenantId=public").Expect(t, 200, map[string]any{"tenantId": "public", "count": 0, "sessions": []any{}})
		})
		t.Run("another project's tenant reads as empty", func(t *testing.T) {
			w.a.SignUpIn(t, w.prjB)
			w.recent(w.admin, "projectId="+w.prjA+"&tenantId="+w.prjB).Expect(t, 200, map[string]any{"count": 0, "sessions": []any{}})
		})
	})
}

func TestSessionRevoke(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newAdminWorld(t, st)
		ctx := context.Background()
		q := "?projectId=" + w.prjA
		badRequest := map[string]any{"code": "bad_request"}
		for name, body := range map[string]any{
			"no body":               nil,
			"unparsable body":       "not json",
			"array body":            "[]",
			"empty object":          map[string]any{},
			"userId without all":    map[string]any{"userId": w.tenant.UserID},
			"all without userId":    map[string]any{"all": true},
			"all false with userId": map[string]any{"all": false, "userId": w.tenant.UserID},
			"all as a string":       map[string]any{"all": "true", "userId": w.tenant.UserID},
		} {
			t.Run(name+": 400 bad_request", func(t *testing.T) {
				got := w.revoke(w.admin, q, body).Expect(t, 400, badRequest)
				if got["message"] == "" {
					t.Fatal("no message")
				}
			})
		}
		t.Run("handle only: revoked 1, audited, refused by the very next session/me", func(t *testing.T) {
			s := w.a.SignUpIn(t, w.prjA)
			w.revoke(w.admin, q, map[string]any{"sessionHandle": s.SessionHandle}).Expect(t, 200, map[string]any{"revoked": 1, "sessionHandle": s.SessionHandle})
			me(w.a, s.Bearer()).Expect(t, 401, map[string]any{"reason": "session_revoked"})
			ev, err := w.a.Ent.AuditEvent.Query().Where(auditevent.Action("session.revoke"), auditevent.ProjectID(w.prjA)).Only(ctx)
			if err != nil || ev.Metadata["sessionHandle"] != s.SessionHandle || *ev.ActorID != w.admin.UserID {
				t.Fatalf("%+v %v", ev, err)
			}
			// Again: nothing left to revoke.
			w.revoke(w.admin, q, map[string]any{"sessionHandle": s.SessionHandle}).Expect(t, 200, map[string]any{"revoked": 0})
		})
		t.Run("projectId from the body wins over the query", func(t *testing.T) {
			s := w.a.SignUpIn(t, w.prjA)
			w.revoke(w.admin, "?projectId="+w.prjB, map[string]any{"sessionHandle": s.SessionHandle, "projectId": w.prjA}).Expect(t, 200, map[string]any{"revoked": 1})
		})
		t.Run("all with userId: every session, audited, all refused at once", func(t *testing.T) {
			s := w.a.SignUpIn(t, w.prjA)
			second := w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signin", Body: map[string]any{"email": s.Email, "password": s.Password, "tenantId": w.prjA}}).Expect(t, 200, nil)
			tok2 := second["session"].(map[string]any)["accessToken"].(string)
			// Rule 2 takes precedence over rule 3 when both apply.
			w.revoke(w.admin, q, map[string]any{"all": true, "userId": s.UserID, "sessionHandle": "ses_ignored"}).Expect(t, 200, map[string]any{"revoked": 2, "userId": s.UserID})
			me(w.a, s.Bearer()).Expect(t, 401, map[string]any{"reason": "session_revoked"})
			me(w.a, map[string]string{"Authorization": "Bearer " + tok2}).Expect(t, 401, map[string]any{"reason": "session_revoked"})
			ev, err := w.a.Ent.AuditEvent.Query().Where(auditevent.Action("session.revoke_all"), auditevent.ProjectID(w.prjA)).Only(ctx)
			if err != nil || ev.Metadata["userId"] != s.UserID || ev.Metadata["revoked"] != float64(2) {
				t.Fatalf("%+v %v", ev, err)
			}
		})
		t.Run("a member's session: revoked 0 and still valid", func(t *testing.T) {
			w.revoke(w.admin, q, map[string]any{"sessionHandle": w.viewer.SessionHandle}).Expect(t, 200, map[string]any{"revoked": 0})
			w.revoke(w.admin, q, map[string]any{"all": true, "userId": w.viewer.UserID}).Expect(t, 200, map[string]any{"revoked": 0})
			me(w.a, w.viewer.Bearer()).Expect(t, 200, nil)
		})
		t.Run("an outsider's session: revoked 0 and still valid", func(t *testing.T) {
			w.revoke(w.admin, q, map[string]any{"sessionHandle": w.outsider.SessionHandle}).Expect(t, 200, map[string]any{"revoked": 0})
			w.revoke(w.admin, q, map[string]any{"all": true, "userId": w.outsider.UserID}).Expect(t, 200, map[string]any{"revoked": 0})
			me(w.a, w.outsider.Bearer()).Expect(t, 200, nil)
		})
	})
}

// Broken object-level authorization: nobody but A's admin can list, see or revoke the
// sessions of A's users, and a refused call changes nothing.
func TestSessionAdminAuthorizationMatrix(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newAdminWorld(t, st)
		ctx := context.Background()
		snapshot := func() string {
			revoked, _ := w.a.Ent.Session.Query().Where(entsession.RevokedAtNotNil()).Count(ctx)
			audits, _ := w.a.Ent.AuditEvent.Query().Count(ctx)
			return fmt.Sprintf("revoked=%d audits=%d", revoked, audits)
		}
		callers := map[string]struct {
			s    *apptest.Session
			want int
		}{
			"admin of B":         {w.adminB, 403},
			"developer of A":     {w.dev, 403},
			"viewer of A":        {w.viewer, 403},
			"user of A's tenant": {w.tenant, 401},
			"anonymous":          {nil, 401},
		}
		routes := map[string]func(s *apptest.Session) *apptest.Response{
			"list": func(s *apptest.Session) *apptest.Response {
				return w.list(s, url.Values{"projectId": {w.prjA}, "userId": {w.tenant.UserID}})
			},
			"recent": func(s *apptest.Session) *apptest.Response { return w.recent(s, "projectId="+w.prjA) },
			"revoke one": func(s *apptest.Session) *apptest.Response {
				return w.revoke(s, "", map[string]any{"projectId": w.prjA, "sessionHandle": w.tenant.SessionHandle})
			},
			"revoke all": func(s *apptest.Session) *apptest.Response {
				return w.revoke(s, "?projectId="+w.prjA, map[string]any{"all": true, "userId": w.tenant.UserID})
			},
		}
		for rname, call := range routes {
			for cname, c := range callers {
				t.Run(rname+" by "+cname, func(t *testing.T) {
					before := snapshot()
					r := call(c.s)
					r.Expect(t, c.want, nil)
					if _, leaked := r.JSON(t)["handles"]; leaked {
						t.Fatal("handles leaked")
					}
					if after := snapshot(); after != before {
						t.Fatalf("a refused call changed the store: %s -> %s", before, after)
					}
				})
			}
		}
		// And the sessions are all still alive.
		me(w.a, w.tenant.Bearer()).Expect(t, 200, nil)
		me(w.a, w.dev.Bearer()).Expect(t, 200, nil)
	})
}

// The attack of the review: any signed-up user creates a project, adds a victim (another
// project's admin) by email as a member, then lists and revokes the victim's sessions.
// None of it reaches the victim.
func TestAdminCannotReachAMembersSessions(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newAdminWorld(t, st)
		attacker := w.a.SignUp(t)
		prj := w.a.CreateProject(t, attacker)
		victim := w.adminB
		w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + prj + "/members",
			Body: map[string]any{"email": victim.Email, "role": "viewer"}, Header: attacker.Bearer()}).Expect(t, 201, nil)

		w.list(attacker, url.Values{"projectId": {prj}, "userId": {victim.UserID}}).Expect(t, 200, map[string]any{"handles": []string{}, "count": 0})
		got := w.recent(attacker, "projectId="+prj+"&tenantId=public").Expect(t, 200, map[string]any{"count": 0})
		if len(got["sessions"].([]any)) != 0 {
			t.Fatalf("saw %v", got["sessions"])
		}
		w.revoke(attacker, "", map[string]any{"projectId": prj, "sessionHandle": victim.SessionHandle}).Expect(t, 200, map[string]any{"revoked": 0})
		w.revoke(attacker, "", map[string]any{"projectId": prj, "all": true, "userId": victim.UserID}).Expect(t, 200, map[string]any{"revoked": 0})
		me(w.a, victim.Bearer()).Expect(t, 200, map[string]any{"userId": victim.UserID})
	})
}

func TestOwnSessions(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := apptest.Start(t, st)
		u := a.SignUp(t)
		// A second session of the same user, newer than the first.
		a.Clock.Advance(time.Second)
		second := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signin", Body: map[string]any{"email": u.Email, "password": u.Password}}).Expect(t, 200, nil)
		secondHandle := second["session"].(map[string]any)["sessionHandle"].(string)
		other := a.SignUp(t)
		mine := func(s *apptest.Session) *apptest.Response {
			return a.Do(apptest.Req{Path: "/v1/auth-core/session/mine", Header: bearer(s)})
		}
		del := func(s *apptest.Session, handle string) *apptest.Response {
			return a.Do(apptest.Req{Method: http.MethodDelete, Path: "/v1/auth-core/session/mine/" + handle, Header: bearer(s)})
		}

		t.Run("lists my live sessions newest first, the current one marked", func(t *testing.T) {
			got := mine(u).Expect(t, 200, map[string]any{"userId": u.UserID, "count": 2})
			ss := got["sessions"].([]any)
			first, last := ss[0].(map[string]any), ss[1].(map[string]any)
			if first["sessionHandle"] != secondHandle || first["current"] != false || last["sessionHandle"] != u.SessionHandle || last["current"] != true {
				t.Fatalf("%v", ss)
			}
			for _, k := range []string{"userId", "tenantId", "createdAt", "lastActiveAt", "expiresAt", "userAgent", "ipHash"} {
				if _, ok := first[k]; !ok {
					t.Fatalf("element lacks %s: %v", k, first)
				}
			}
		})
		t.Run("unauthenticated is 401", func(t *testing.T) {
			mine(nil).Expect(t, 401, map[string]any{"code": "unauthorized"})
			del(nil, secondHandle).Expect(t, 401, map[string]any{"code": "unauthorized"})
		})
		t.Run("another user's handle: revoked 0, and it stays alive", func(t *testing.T) {
			del(other, secondHandle).Expect(t, 200, map[string]any{"revoked": 0, "sessionHandle": secondHandle})
			del(other, u.SessionHandle).Expect(t, 200, map[string]any{"revoked": 0})
			me(a, u.Bearer()).Expect(t, 200, nil)
		})
		t.Run("my other session: revoked 1, refused at once, gone from the list", func(t *testing.T) {
			del(u, secondHandle).Expect(t, 200, map[string]any{"revoked": 1, "sessionHandle": secondHandle})
			me(a, map[string]string{"Authorization": "Bearer " + second["session"].(map[string]any)["accessToken"].(string)}).Expect(t, 401, map[string]any{"reason": "session_revoked"})
			mine(u).Expect(t, 200, map[string]any{"count": 1})
			del(u, secondHandle).Expect(t, 200, map[string]any{"revoked": 0})
		})
		t.Run("an end user of a project has the same routes", func(t *testing.T) {
			tenantUser := a.SignUpIn(t, a.CreateProject(t, other))
			mine(tenantUser).Expect(t, 200, map[string]any{"userId": tenantUser.UserID, "count": 1})
		})
	})
}

// A session's ipHash (of its peer address) and an audit record's ipHash (of the
// X-Forwarded-For an admin sends) use different keys: the same address hashes apart, so an
// admin cannot confirm a guessed address against a session.
func TestIPHashesOfSessionsAndAuditDiffer(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newAdminWorld(t, st)
		got := w.recent(w.admin, "projectId="+w.prjA).Expect(t, 200, map[string]any{"count": 1})
		sessionHash, _ := got["sessions"].([]any)[0].(map[string]any)["ipHash"].(string)
		if sessionHash == "" {
			t.Fatal("no session ipHash")
		}
		// The test client's peer address is 127.0.0.1: send exactly that, audited.
		w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/session/revoke",
			Body:   map[string]any{"projectId": w.prjA, "sessionHandle": w.tenant.SessionHandle},
			Header: map[string]string{"Authorization": "Bearer " + w.admin.AccessToken, "X-Forwarded-For": "127.0.0.1"}}).
			Expect(t, 200, map[string]any{"revoked": 1})
		ev, err := w.a.Ent.AuditEvent.Query().Where(auditevent.Action("session.revoke"), auditevent.ProjectID(w.prjA)).Only(context.Background())
		if err != nil || ev.IPHash == nil {
			t.Fatalf("%v %v", ev, err)
		}
		if *ev.IPHash == sessionHash {
			t.Fatal("the audit ipHash of 127.0.0.1 equals the session's: the keys are shared")
		}
	})
}

// SPEC §9a: ipHash keys are per project (audit) and per tenant (sessions): the same
// address hashes apart in two projects, so admins of one cannot follow it into another.
func TestIPHashesDifferAcrossProjects(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newAdminWorld(t, st)
		inB := w.a.SignUpIn(t, w.prjB) // same peer address, 127.0.0.1, as w.tenant in A
		hashOf := func(admin *apptest.Session, prj string) string {
			got := w.recent(admin, "projectId="+prj).Expect(t, 200, nil)
			h, _ := got["sessions"].([]any)[0].(map[string]any)["ipHash"].(string)
			return h
		}
		if a, b := hashOf(w.admin, w.prjA), hashOf(w.adminB, w.prjB); a == "" || a == b {
			t.Fatalf("session ipHash of one address in two tenants: %q and %q", a, b)
		}
		for _, c := range []struct {
			admin  *apptest.Session
			prj    string
			handle string
		}{{w.admin, w.prjA, w.tenant.SessionHandle}, {w.adminB, w.prjB, inB.SessionHandle}} {
			w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/session/revoke",
				Body:   map[string]any{"projectId": c.prj, "sessionHandle": c.handle},
				Header: map[string]string{"Authorization": "Bearer " + c.admin.AccessToken, "X-Forwarded-For": "203.0.113.9"}}).
				Expect(t, 200, map[string]any{"revoked": 1})
		}
		evA, errA := w.a.Ent.AuditEvent.Query().Where(auditevent.Action("session.revoke"), auditevent.ProjectID(w.prjA)).Only(context.Background())
		evB, errB := w.a.Ent.AuditEvent.Query().Where(auditevent.Action("session.revoke"), auditevent.ProjectID(w.prjB)).Only(context.Background())
		if errA != nil || errB != nil || evA.IPHash == nil || evB.IPHash == nil || *evA.IPHash == *evB.IPHash {
			t.Fatalf("audit ipHash of one X-Forwarded-For in two projects: %v %v (%v %v)", evA, evB, errA, errB)
		}
	})
}
