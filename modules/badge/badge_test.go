package badge_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"entgo.io/ent/privacy"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/auditevent"
	"github.com/authcore/authcore/ent/hook"
	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/modules/badge"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/product"
	"github.com/authcore/authcore/platform/secret"
)

func TestMain(m *testing.M) { apptest.Main(m) }

// testProduct is a product that exists only in these tests: adding it is the same one
// line (here, one fx option) that adds a real plugin.
type testProduct struct {
	key     string
	mintErr error
	minted  int
	rolled  int
}

func (p *testProduct) Key() string              { return p.key }
func (p *testProduct) Description() string      { return "Test product " + p.key + "." }
func (p *testProduct) Mintable() (bool, string) { return true, "" }

// Mint returns credentials of the product's own type, answered under its own key.
func (p *testProduct) Mint(_ context.Context, _ *ent.Tx, b product.Badge) (any, error) {
	if p.mintErr != nil {
		return nil, p.mintErr
	}
	p.minted++
	return testCredentials{Token: "token-of-" + b.ID}, nil
}

type testCredentials struct {
	Token string `json:"token"`
}

func (p *testProduct) Revoke(context.Context, *ent.Tx, product.Badge) error { return nil }

// Roll returns new credentials of the product's own type, as Mint does.
func (p *testProduct) Roll(_ context.Context, _ *ent.Tx, b product.Badge, _ *time.Time) (any, error) {
	p.rolled++
	return testCredentials{Token: fmt.Sprintf("token-of-%s-roll-%d", b.ID, p.rolled)}, nil
}

type world struct {
	a                          *apptest.App
	prj, other                 string
	admin, dev, viewer, admB   *apptest.Session
	test, unconfigured, broken *testProduct
}

func newWorld(t *testing.T, st apptest.Store) *world {
	w := &world{
		test:         &testProduct{key: "test"},
		unconfigured: &testProduct{key: "nostore", mintErr: fmt.Errorf("object storage for this project: %w", product.ErrNotConfigured)},
		broken:       &testProduct{key: "broken", mintErr: errors.New("the flux capacitor melted")},
	}
	w.a = apptest.Start(t, st, apptest.WithFx(
		product.AsProduct(func() *testProduct { return w.test }),
		product.AsProduct(func() *testProduct { return w.unconfigured }),
		product.AsProduct(func() *testProduct { return w.broken }),
		apptest.NotMintable,
	))
	w.admin, w.dev, w.viewer, w.admB = w.a.SignUp(t), w.a.SignUp(t), w.a.SignUp(t), w.a.SignUp(t)
	w.prj = w.a.CreateProject(t, w.admin)
	w.other = w.a.CreateProject(t, w.admB)
	w.a.AddMember(t, w.admin, w.prj, w.dev, "developer")
	w.a.AddMember(t, w.admin, w.prj, w.viewer, "viewer")
	return w
}

func (w *world) path(prj string) string { return "/v1/projects/" + prj + "/service-badges" }

func (w *world) create(as *apptest.Session, prj string, body any) *apptest.Response {
	return w.a.Do(apptest.Req{Method: http.MethodPost, Path: w.path(prj), Body: body, Header: bearer(as)})
}

func bearer(s *apptest.Session) map[string]string {
	if s == nil {
		return nil
	}
	return s.Bearer()
}

func (w *world) count(t *testing.T) (badges, audits int) {
	ctx := context.Background()
	var b int
	if err := w.a.DB.SQL.QueryRowContext(ctx, "SELECT count(*) FROM "+badge.Table.Name).Scan(&b); err != nil {
		t.Fatal(err)
	}
	a, err := w.a.Ent.AuditEvent.Query().Where(auditevent.ActionHasPrefix("service_badge.")).Count(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return b, a
}

func TestCreate(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		ctx := context.Background()

		t.Run("201 with badge, plaintext, s3 and auth null for db; default role viewer; audited", func(t *testing.T) {
			got := w.create(w.admin, w.prj, map[string]any{"name": "ci", "product": "db"}).Expect(t, 201, map[string]any{"s3": nil, "auth": nil})
			b := got["badge"].(map[string]any)
			if b["product"] != "db" || b["name"] != "ci" || b["role"] != "viewer" || b["projectId"] != w.prj || b["createdBy"] != w.admin.UserID || b["expiresAt"] != nil {
				t.Fatalf("badge %v", b)
			}
			pt := got["plaintext"].(string)
			if !strings.HasPrefix(pt, "ac_db_") || !secret.CheckToken("db", pt) || b["secretHint"] != secret.Hint(pt) {
				t.Fatalf("plaintext %q hint %v", pt, b["secretHint"])
			}
			ev, err := w.a.Ent.AuditEvent.Query().Where(auditevent.Action("service_badge.create"), auditevent.ProjectID(w.prj)).Only(ctx)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]any{"badgeId": b["id"], "product": "db", "name": "ci", "role": "viewer"}
			if len(ev.Metadata) != len(want) || *ev.ActorID != w.admin.UserID {
				t.Fatalf("audit %+v", ev)
			}
			for k, v := range want {
				if ev.Metadata[k] != v {
					t.Fatalf("audit metadata %v, want %v", ev.Metadata, want)
				}
			}
		})
		t.Run("expiresInDays sets expiry to creation plus N×24h", func(t *testing.T) {
			b := w.create(w.admin, w.prj, map[string]any{"name": "x", "product": "db", "expiresInDays": 30, "role": "admin"}).Expect(t, 201, nil)["badge"].(map[string]any)
			created, _ := time.Parse(time.RFC3339Nano, b["createdAt"].(string))
			expires, _ := time.Parse(time.RFC3339Nano, b["expiresAt"].(string))
			if !expires.Equal(created.Add(30*24*time.Hour)) || b["role"] != "admin" {
				t.Fatalf("created %v expires %v", created, expires)
			}
		})
		for _, tc := range []struct {
			name string
			body map[string]any
		}{
			{"name of 80 multi-byte characters", map[string]any{"name": strings.Repeat("ü", 80), "product": "db"}},
			{"name of 1 character", map[string]any{"name": "x", "product": "db"}},
			{"expiresInDays 1", map[string]any{"name": "x", "product": "db", "expiresInDays": 1}},
			{"expiresInDays 365", map[string]any{"name": "x", "product": "db", "expiresInDays": 365}},
			{"expiresInDays 30.0 is an integer", map[string]any{"name": "x", "product": "db", "expiresInDays": 30.0}},
			{"role developer", map[string]any{"name": "x", "product": "db", "role": "developer"}},
			{"unknown fields ignored", map[string]any{"name": "x", "product": "db", "color": "blue"}},
		} {
			t.Run(tc.name+" accepted", func(t *testing.T) { w.create(w.admin, w.prj, tc.body).Expect(t, 201, nil) })
		}

		shape := []struct {
			name   string
			body   any
			fields []string
		}{
			{"no body", nil, []string{"body"}},
			{"not JSON", "name=x", []string{"body"}},
			{"JSON array", `[{"name":"x","product":"db"}]`, []string{"body"}},
			{"missing name", map[string]any{"product": "db"}, []string{"name"}},
			{"empty name", map[string]any{"name": "", "product": "db"}, []string{"name"}},
			{"81-character name", map[string]any{"name": strings.Repeat("n", 81), "product": "db"}, []string{"name"}},
			{"name not a string", map[string]any{"name": 12, "product": "db"}, []string{"name"}},
			{"name with control characters", map[string]any{"name": "a\tb", "product": "db"}, []string{"name"}},
			{"missing product", map[string]any{"name": "x"}, []string{"product"}},
			{"unknown product", map[string]any{"name": "x", "product": "nosuchproduct"}, []string{"product"}},
			{"expiresInDays 0", map[string]any{"name": "x", "product": "db", "expiresInDays": 0}, []string{"expiresInDays"}},
			{"expiresInDays 366", map[string]any{"name": "x", "product": "db", "expiresInDays": 366}, []string{"expiresInDays"}},
			{"expiresInDays 1.5", map[string]any{"name": "x", "product": "db", "expiresInDays": 1.5}, []string{"expiresInDays"}},
			{"expiresInDays \"30\"", map[string]any{"name": "x", "product": "db", "expiresInDays": "30"}, []string{"expiresInDays"}},
			{"expiresInDays null", map[string]any{"name": "x", "product": "db", "expiresInDays": nil}, []string{"expiresInDays"}},
			{"bad name and bad expiresInDays: both listed", map[string]any{"name": "", "product": "db", "expiresInDays": 0}, []string{"name", "expiresInDays"}},
			{"bad shape wins over a product not mintable", map[string]any{"name": "", "product": apptest.NotMintableKey}, []string{"name"}},
		}
		for _, tc := range shape {
			t.Run(tc.name+": 400 validation_failed listing each issue", func(t *testing.T) {
				before, beforeAudit := w.count(t)
				got := w.create(w.admin, w.prj, tc.body).Expect(t, 400, map[string]any{"code": "validation_failed", "message": "invalid request body"})
				issues := got["issues"].([]any)
				if len(issues) != len(tc.fields) {
					t.Fatalf("issues %v, want fields %v", issues, tc.fields)
				}
				for i, f := range tc.fields {
					is := issues[i].(map[string]any)
					if is["field"] != f || is["reason"] == "" {
						t.Fatalf("issue %d = %v, want field %s", i, is, f)
					}
				}
				if b, a := w.count(t); b != before || a != beforeAudit {
					t.Fatal("a rejected create wrote")
				}
			})
		}
		t.Run("a product not mintable: 400 product_not_available with its reason", func(t *testing.T) {
			before, beforeAudit := w.count(t)
			w.create(w.admin, w.prj, map[string]any{"name": "x", "product": apptest.NotMintableKey}).
				Expect(t, 400, map[string]any{"code": "product_not_available", "message": apptest.NotMintableReason})
			if b, a := w.count(t); b != before || a != beforeAudit {
				t.Fatal("a refused create wrote")
			}
		})
		t.Run("rule order: a product not mintable with a bad role answers product_not_available", func(t *testing.T) {
			w.create(w.admin, w.prj, map[string]any{"name": "x", "product": apptest.NotMintableKey, "role": "owner"}).Expect(t, 400, map[string]any{"code": "product_not_available"})
		})
		for name, role := range map[string]any{"owner": "owner", "5": 5, "null": nil, "empty": "", "upper case": "Admin"} {
			t.Run("role "+name+": 400 validation_failed invalid role", func(t *testing.T) {
				got := w.create(w.admin, w.prj, map[string]any{"name": "x", "product": "db", "role": role}).
					Expect(t, 400, map[string]any{"code": "validation_failed", "message": "invalid role"})
				if _, ok := got["issues"]; ok {
					t.Fatal("rule 3 has no issues list")
				}
			})
		}
		t.Run("rule 4: a mint failing for unconfigured storage is 503 storage_not_configured, nothing written", func(t *testing.T) {
			before, beforeAudit := w.count(t)
			w.create(w.admin, w.prj, map[string]any{"name": "x", "product": "nostore"}).
				Expect(t, 503, map[string]any{"code": "storage_not_configured", "message": "object storage for this project: not configured"})
			if b, a := w.count(t); b != before || a != beforeAudit {
				t.Fatal("a failed mint left a badge or an audit record")
			}
		})
		t.Run("any other mint failure is the generic 500, cause logged not sent", func(t *testing.T) {
			r := w.create(w.admin, w.prj, map[string]any{"name": "x", "product": "broken"})
			r.Expect(t, 500, map[string]any{"code": "internal_error", "message": "internal error"})
			if strings.Contains(string(r.Body), "flux") || !w.a.Logs.Contains("flux capacitor") {
				t.Fatal("cause sent, or not logged")
			}
		})
		t.Run("a test-only product plugs in and mints with its own credentials", func(t *testing.T) {
			got := w.create(w.admin, w.prj, map[string]any{"name": "x", "product": "test"}).
				Expect(t, 201, map[string]any{"s3": nil, "auth": nil, "db": nil, "nostore": nil})
			b := got["badge"].(map[string]any)
			own, _ := got["test"].(map[string]any)
			if own["token"] != "token-of-"+b["id"].(string) || w.test.minted != 1 {
				t.Fatalf("%v", got)
			}
			if !strings.HasPrefix(got["plaintext"].(string), "ac_test_") {
				t.Fatal("secret not prefixed with the product")
			}
		})
	})
}

func TestAuditAtomicity(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		// Make every service_badge.create audit insert fail.
		w.a.Ent.AuditEvent.Use(hook.On(func(next ent.Mutator) ent.Mutator {
			return hook.AuditEventFunc(func(ctx context.Context, m *ent.AuditEventMutation) (ent.Value, error) {
				if a, _ := m.Action(); a == "service_badge.create" {
					return nil, privacy.Denyf("audit store refused the record")
				}
				return next.Mutate(ctx, m)
			})
		}, ent.OpCreate))
		before, _ := w.count(t)
		r := w.create(w.admin, w.prj, map[string]any{"name": "x", "product": "db"})
		if r.Status < 500 {
			t.Fatalf("status %d: the client must get an error", r.Status)
		}
		if b, _ := w.count(t); b != before {
			t.Fatal("a badge remains without its audit record")
		}
	})
}

func TestListAndRevoke(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		ctx := context.Background()
		mint := func(prj string, as *apptest.Session, productKey string) (id, pt string) {
			got := w.create(as, prj, map[string]any{"name": "b-" + productKey, "product": productKey}).Expect(t, 201, nil)
			return got["badge"].(map[string]any)["id"].(string), got["plaintext"].(string)
		}
		dbID, dbPT := mint(w.prj, w.admin, "db")
		testID, _ := mint(w.prj, w.admin, "test")
		otherID, otherPT := mint(w.other, w.admB, "db")
		list := func(q string) map[string]any {
			return w.a.Do(apptest.Req{Path: w.path(w.prj) + q, Header: w.admin.Bearer()}).Expect(t, 200, nil)
		}
		ids := func(got map[string]any) []string {
			var out []string
			for _, b := range got["badges"].([]any) {
				out = append(out, b.(map[string]any)["id"].(string))
			}
			return out
		}
		t.Run("list: live badges newest first, product descriptions from the plugins", func(t *testing.T) {
			got := list("")
			if l := ids(got); len(l) != 2 || l[0] != testID || l[1] != dbID {
				t.Fatalf("%v", l)
			}
			ps := got["products"].(map[string]any)
			if ps["db"] != "Database of the project (tables, query, studio)." || ps[apptest.NotMintableKey] != "A product tests cannot mint." || ps["test"] != "Test product test." {
				t.Fatalf("%v", ps)
			}
		})
		t.Run("filter by a mintable product", func(t *testing.T) {
			if l := ids(list("?product=db")); len(l) != 1 || l[0] != dbID {
				t.Fatalf("%v", l)
			}
		})
		for _, f := range []string{apptest.NotMintableKey, "nosuchproduct", "DB", ""} {
			t.Run("unrecognized filter "+f+" is ignored", func(t *testing.T) {
				if l := ids(list("?product=" + f)); len(l) != 2 {
					t.Fatalf("%v", l)
				}
			})
		}
		t.Run("no secret in the list", func(t *testing.T) {
			r := w.a.Do(apptest.Req{Path: w.path(w.prj), Header: w.admin.Bearer()})
			if strings.Contains(string(r.Body), dbPT) || strings.Contains(string(r.Body), "digest") {
				t.Fatal("secret listed")
			}
		})
		del := func(as *apptest.Session, prj, id string) *apptest.Response {
			return w.a.Do(apptest.Req{Method: http.MethodDelete, Path: w.path(prj) + "/" + id, Header: bearer(as)})
		}
		me := func(pt string) *apptest.Response {
			return w.a.Do(apptest.Req{Path: "/v1/service-badges/me", Header: map[string]string{"Authorization": "Bearer " + pt}})
		}
		t.Run("deleting A's badge through B's path is 404, A's badge untouched, no audit", func(t *testing.T) {
			_, audits := w.count(t)
			del(w.admB, w.other, dbID).Expect(t, 404, map[string]any{"code": "not_found"})
			if _, a := w.count(t); a != audits {
				t.Fatal("audited")
			}
			me(dbPT).Expect(t, 200, nil)
		})
		t.Run("unknown badge: 404 not_found", func(t *testing.T) {
			del(w.admin, w.prj, "bdg_nope").Expect(t, 404, map[string]any{"code": "not_found"})
		})
		t.Run("delete: 200, audited exactly, refused at once, gone from the list", func(t *testing.T) {
			me(dbPT).Expect(t, 200, map[string]any{"authenticated": true, "kind": "service_badge", "badgeId": dbID, "projectId": w.prj, "product": "db", "role": "viewer", "expiresAt": nil})
			del(w.admin, w.prj, dbID).Expect(t, 200, map[string]any{"ok": true, "badgeId": dbID})
			me(dbPT).Expect(t, 401, map[string]any{"authenticated": false, "code": "invalid_token"})
			ev, err := w.a.Ent.AuditEvent.Query().Where(auditevent.Action("service_badge.revoke")).Only(ctx)
			if err != nil || len(ev.Metadata) != 1 || ev.Metadata["badgeId"] != dbID || *ev.ActorID != w.admin.UserID || ev.ProjectID != w.prj {
				t.Fatalf("%+v %v", ev, err)
			}
			if l := ids(list("")); len(l) != 1 {
				t.Fatalf("%v", l)
			}
		})
		t.Run("already revoked: 404 not_found, no second audit record", func(t *testing.T) {
			del(w.admin, w.prj, dbID).Expect(t, 404, map[string]any{"code": "not_found"})
			if n, _ := w.a.Ent.AuditEvent.Query().Where(auditevent.Action("service_badge.revoke")).Count(ctx); n != 1 {
				t.Fatalf("%d revoke records", n)
			}
		})
		t.Run("guards: no session 401; developer, viewer and B's admin 403 on list, create, delete", func(t *testing.T) {
			badges, audits := w.count(t)
			w.a.Do(apptest.Req{Path: w.path(w.prj)}).Expect(t, 401, map[string]any{"code": "unauthorized"})
			w.create(nil, w.prj, map[string]any{"name": "x", "product": "db"}).Expect(t, 401, nil)
			del(nil, w.prj, testID).Expect(t, 401, nil)
			for _, s := range []*apptest.Session{w.dev, w.viewer, w.admB} {
				w.a.Do(apptest.Req{Path: w.path(w.prj), Header: s.Bearer()}).Expect(t, 403, map[string]any{"code": "forbidden"})
				w.create(s, w.prj, map[string]any{"name": "x", "product": "db"}).Expect(t, 403, map[string]any{"code": "forbidden"})
				del(s, w.prj, testID).Expect(t, 403, map[string]any{"code": "forbidden"})
			}
			if b, a := w.count(t); b != badges || a != audits {
				t.Fatal("a refused call wrote")
			}
			if b, err := badge.Table.Read(ctx, w.a.DB, testID); err != nil || b.Revoked() {
				t.Fatal("a refused call revoked")
			}
			me(otherPT).Expect(t, 200, nil)
			_ = otherID
		})
	})
}

func TestBadgeMe(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		got := w.create(w.admin, w.prj, map[string]any{"name": "x", "product": "test", "expiresInDays": 1, "role": "developer"}).Expect(t, 201, nil)
		pt := got["plaintext"].(string)
		me := func(h string) *apptest.Response {
			return w.a.Do(apptest.Req{Path: "/v1/service-badges/me", Header: map[string]string{"Authorization": h}})
		}
		me("Bearer "+pt).Expect(t, 200, map[string]any{"authenticated": true, "kind": "service_badge", "product": "test", "role": "developer"})
		me("Basic "+pt).Expect(t, 401, map[string]any{"code": "unauthorized"})
		me("Bearer ").Expect(t, 401, map[string]any{"code": "unauthorized"})
		me("Bearer ac_zzz_"+pt[8:]).Expect(t, 401, map[string]any{"code": "invalid_token"})
		tampered := pt[:len(pt)-1] + "0"
		if tampered == pt {
			tampered = pt[:len(pt)-1] + "1"
		}
		before := w.a.DB.Queries()
		me("Bearer "+tampered).Expect(t, 401, map[string]any{"code": "invalid_token"})
		if w.a.DB.Queries() != before {
			t.Fatal("a bad checksum reached the store")
		}
		aiTok, _ := secret.NewToken("ai")
		me("Bearer "+aiTok).Expect(t, 401, map[string]any{"code": "invalid_token"})
		w.a.Clock.Advance(24*time.Hour - time.Second)
		me("Bearer "+pt).Expect(t, 200, nil)
		w.a.Clock.Advance(time.Second)
		me("Bearer "+pt).Expect(t, 401, map[string]any{"code": "invalid_token"})
	})
}

func TestAuditTrail(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		for i := 0; i < 5; i++ {
			w.a.Do(apptest.Req{Method: http.MethodPost, Path: w.path(w.prj), Body: map[string]any{"name": "b", "product": "db"},
				Header: map[string]string{"Authorization": "Bearer " + w.admin.AccessToken, "X-Forwarded-For": "198.51.100.7", "User-Agent": "ci-bot/1"}}).Expect(t, 201, nil)
		}
		page := func(as *apptest.Session, q string) *apptest.Response {
			return w.a.Do(apptest.Req{Path: "/v1/projects/" + w.prj + "/audit" + q, Header: bearer(as)})
		}
		// The project's trail also holds the two member_add records from setup: 7 in all.
		got := page(w.admin, "?limit=3").Expect(t, 200, nil)
		evs := got["events"].([]any)
		if len(evs) != 3 || got["nextBefore"] == nil {
			t.Fatalf("%v", got)
		}
		first := evs[0].(map[string]any)
		for _, k := range []string{"id", "actorId", "projectId", "action", "ipHash", "userAgent", "metadata", "createdAt"} {
			if _, ok := first[k]; !ok {
				t.Fatalf("event lacks %s: %v", k, first)
			}
		}
		if first["action"] != "service_badge.create" || first["userAgent"] != "ci-bot/1" || first["ipHash"] == "198.51.100.7" || len(first["ipHash"].(string)) != 64 {
			t.Fatalf("%v", first)
		}
		seen := map[string]bool{}
		cursor := ""
		for pages := 0; pages < 10; pages++ {
			q := "?limit=3"
			if cursor != "" {
				q += "&before=" + cursor
			}
			got := page(w.admin, q).Expect(t, 200, nil)
			prev := ""
			for _, e := range got["events"].([]any) {
				id := e.(map[string]any)["id"].(string)
				if seen[id] || (prev != "" && id >= prev) {
					t.Fatalf("not newest first without repeats: %s after %s", id, prev)
				}
				seen[id], prev = true, id
			}
			if got["nextBefore"] == nil {
				break
			}
			cursor = got["nextBefore"].(string)
		}
		if len(seen) != 7 {
			t.Fatalf("paged through %d events, want 7", len(seen))
		}
		page(w.dev, "").Expect(t, 403, nil)
		page(w.admB, "").Expect(t, 403, nil)
		page(nil, "").Expect(t, 401, nil)
		if n := len(page(w.admin, "?limit=abc").Expect(t, 200, nil)["events"].([]any)); n != 7 {
			t.Fatalf("default limit: %d", n)
		}
	})
}

func TestSecretsNeverStoredOrLogged(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		var secrets []string
		for _, p := range []string{"db", "test"} {
			got := w.create(w.admin, w.prj, map[string]any{"name": "x", "product": p}).Expect(t, 201, nil)
			secrets = append(secrets, got["plaintext"].(string))
		}
		ai := w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/projects/" + w.prj + "/ai/agents", Header: w.admin.Bearer()}).Expect(t, 200, nil)
		secrets = append(secrets, ai["plaintext"].(string))
		for _, s := range secrets {
			w.a.Do(apptest.Req{Path: "/v1/service-badges/me", Header: map[string]string{"Authorization": "Bearer " + s}})
		}
		db, logs := w.a.DumpDB(t), w.a.Logs.String()
		if !strings.Contains(db, "bdg_") || !strings.Contains(db, "tok_") {
			t.Fatal("the scan sees nothing")
		}
		for _, s := range secrets {
			if strings.Contains(db, s) || strings.Contains(logs, s) || strings.Contains(db, s[len(s)-38:len(s)-6]) {
				t.Fatalf("secret %.10s… stored or logged", s)
			}
		}
	})
}

// Issue 46: the audit ipHash is of the client address as the trusted proxies see it (the
// one the rate limits use), never of whatever X-Forwarded-For a caller writes. From a
// peer that is no trusted proxy the header is the caller's own and names nobody; behind
// a trusted proxy, the address the proxy appended counts, not what the client put before.
func TestAuditIPHashIsTheTrustedProxysView(t *testing.T) {
	hashes := func(t *testing.T, a *apptest.App, forwarded ...string) []string {
		admin := a.SignUp(t)
		prj := a.CreateProject(t, admin)
		var out []string
		for _, xff := range forwarded {
			a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + prj + "/service-badges", Body: map[string]any{"name": "b", "product": "db"},
				Header: map[string]string{"Authorization": "Bearer " + admin.AccessToken, "X-Forwarded-For": xff}}).Expect(t, 201, nil)
			evs := a.Do(apptest.Req{Path: "/v1/projects/" + prj + "/audit?limit=1", Header: bearer(admin)}).Expect(t, 200, nil)["events"].([]any)
			h, _ := evs[0].(map[string]any)["ipHash"].(string)
			if len(h) != 64 {
				t.Fatalf("X-Forwarded-For %q: ipHash %v", xff, evs[0])
			}
			out = append(out, h)
		}
		return out
	}
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		t.Run("from an untrusted peer", func(t *testing.T) {
			h := hashes(t, apptest.Start(t, st), "203.0.113.9", "198.51.100.7", "203.0.113.9, 10.0.0.1")
			if h[0] != h[1] || h[1] != h[2] {
				t.Fatalf("one peer, forged X-Forwarded-For, three ipHashes: %v", h)
			}
		})
		t.Run("behind a trusted proxy", func(t *testing.T) {
			a := apptest.Start(t, st, apptest.WithConfig(func(c *config.Config) { c.TrustedProxies = []string{"127.0.0.1/32", "::1/128"} }))
			h := hashes(t, a, "203.0.113.9", "1.2.3.4, 203.0.113.9", "5.6.7.8, 203.0.113.9", "198.51.100.7")
			if h[0] != h[1] || h[1] != h[2] {
				t.Fatalf("one client behind the proxy, forged entries before its address, three ipHashes: %v", h)
			}
			if h[3] == h[0] {
				t.Fatal("two clients behind the proxy, one ipHash")
			}
		})
	})
}
