package project_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"go.uber.org/fx"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/auditevent"
	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/audit/chainer"
)

// quietChainer starts the app with its real chainer held still: it looks once an hour
// and no commit nudges it, so the test says when events are chained (chain), and can see
// them unchained before.
func quietChainer(t *testing.T, st apptest.Store) (*apptest.App, func(t *testing.T, a *apptest.App, project string)) {
	var c *chainer.Chainer
	a := apptest.Start(t, st, apptest.WithFx(
		fx.Decorate(func(chainer.Timing) chainer.Timing { return chainer.Timing{Every: time.Hour} }),
		fx.Decorate(func(audit.Committed) audit.Committed { return stillChainer{} }),
		fx.Populate(&c)))
	return a, func(t *testing.T, a *apptest.App, _ string) {
		t.Helper()
		if _, err := c.ChainPending(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

type stillChainer struct{}

func (stillChainer) Nudge() {}

// The verify route (SPEC §28) recomputes the project's chain and names exactly the first
// broken link: an edited row as hash_mismatch at its place, a deleted one as a missing
// place; events not chained yet are counted, not judged.
func TestVerifyAuditChain(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a, chain := quietChainer(t, st)
		ctx := context.Background()
		admin, viewer := a.SignUp(t), a.SignUp(t)
		prj := a.CreateProject(t, admin)
		a.AddMember(t, admin, prj, viewer, "viewer")
		for i := range 5 {
			a.Do(apptest.Req{Method: http.MethodPut, Path: "/v1/projects/" + prj + "/policy", Header: admin.Bearer(),
				Body: map[string]any{"badgeMaxExpiresInDays": 10 + i}}).Expect(t, 200, nil)
		}
		verify := func() map[string]any {
			return a.Do(apptest.Req{Path: "/v1/projects/" + prj + "/audit/verify", Header: admin.Bearer()}).Expect(t, 200, nil)
		}
		place := func(seq int64) string {
			return a.Ent.AuditEvent.Query().Where(auditevent.ProjectID(prj), auditevent.ChainSeq(seq)).OnlyX(ctx).ID
		}
		total := a.Ent.AuditEvent.Query().Where(auditevent.ProjectID(prj)).CountX(ctx)
		if total < 6 {
			t.Fatalf("only %d events", total)
		}

		t.Run("nothing chained yet: ok, nothing checked, every event unchained", func(t *testing.T) {
			got := verify()
			if got["ok"] != true || got["checked"] != 0.0 || got["head"] != nil || got["firstBroken"] != nil || got["unchained"] != float64(total) {
				t.Fatalf("%v", got)
			}
		})
		chain(t, a, prj)
		t.Run("an intact chain: ok, every link checked, its head named", func(t *testing.T) {
			got := verify()
			last := a.Ent.AuditEvent.Query().Where(auditevent.ProjectID(prj), auditevent.ChainSeq(int64(total))).OnlyX(ctx)
			want := map[string]any{"seq": float64(total), "id": last.ID, "hash": *last.Hash}
			if got["ok"] != true || got["checked"] != float64(total) || got["firstBroken"] != nil || got["unchained"] != 0.0 ||
				fmt.Sprint(got["head"]) != fmt.Sprint(want) {
				t.Fatalf("%v, head want %v", got, want)
			}
		})
		t.Run("an event recorded since is unchained, the chain still ok", func(t *testing.T) {
			a.Do(apptest.Req{Method: http.MethodPut, Path: "/v1/projects/" + prj + "/policy", Header: admin.Bearer(),
				Body: map[string]any{}}).Expect(t, 200, nil)
			if got := verify(); got["ok"] != true || got["checked"] != float64(total) || got["unchained"] != 1.0 {
				t.Fatalf("%v", got)
			}
			chain(t, a, prj)
			total++
		})
		t.Run("only the project's admins verify", func(t *testing.T) {
			a.Do(apptest.Req{Path: "/v1/projects/" + prj + "/audit/verify", Header: viewer.Bearer()}).Expect(t, 403, map[string]any{"code": "forbidden"})
			a.Do(apptest.Req{Path: "/v1/projects/" + prj + "/audit/verify"}).Expect(t, 401, map[string]any{"code": "unauthorized"})
			other := a.CreateProject(t, viewer)
			a.Do(apptest.Req{Path: "/v1/projects/" + other + "/audit/verify", Header: admin.Bearer()}).Expect(t, 403, nil)
		})

		// Tampering below the API, as someone with the database would: a later break is
		// never reported before an earlier one.
		edited, deleted := place(4), place(2)
		if _, err := a.DB.SQL.ExecContext(ctx, `UPDATE audit_events SET metadata = '{"badgeMaxExpiresInDays":365}' WHERE id = '`+edited+`'`); err != nil {
			t.Fatal(err)
		}
		t.Run("an edited row: hash_mismatch at its place, the links before it checked", func(t *testing.T) {
			got := verify()
			want := map[string]any{"seq": 4.0, "id": edited, "reason": "hash_mismatch"}
			if got["ok"] != false || got["checked"] != 3.0 || fmt.Sprint(got["firstBroken"]) != fmt.Sprint(want) ||
				got["head"].(map[string]any)["seq"] != 3.0 || got["head"].(map[string]any)["id"] != place(3) {
				t.Fatalf("%v, want firstBroken %v", got, want)
			}
		})
		if _, err := a.DB.SQL.ExecContext(ctx, `DELETE FROM audit_events WHERE id = '`+deleted+`'`); err != nil {
			t.Fatal(err)
		}
		t.Run("a deleted row before it: missing at its place, no id", func(t *testing.T) {
			got := verify()
			want := map[string]any{"seq": 2.0, "id": nil, "reason": "missing"}
			if got["ok"] != false || got["checked"] != 1.0 || fmt.Sprint(got["firstBroken"]) != fmt.Sprint(want) {
				t.Fatalf("%v, want firstBroken %v", got, want)
			}
		})
		t.Run("a deleted first row: missing at 1, nothing checked", func(t *testing.T) {
			a.DB.SQL.ExecContext(ctx, `DELETE FROM audit_events WHERE id = '`+place(1)+`'`)
			got := verify()
			if got["ok"] != false || got["checked"] != 0.0 || got["head"] != nil ||
				fmt.Sprint(got["firstBroken"]) != fmt.Sprint(map[string]any{"seq": 1.0, "id": nil, "reason": "missing"}) {
				t.Fatalf("%v", got)
			}
		})
	})
}

// Verify reads the chain a page at a time: a chain longer than a page verifies whole, and
// a break on a later page is found at its place.
func TestVerifyAcrossPages(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a, chain := quietChainer(t, st)
		ctx := context.Background()
		admin := a.SignUp(t)
		prj := a.CreateProject(t, admin)
		const n = 1203 // the page is 500: three pages, the last partial
		bulk := make([]*ent.AuditEventCreate, 0, n)
		for i := range n {
			bulk = append(bulk, a.Ent.AuditEvent.Create().SetProjectID(prj).SetAction("test.event").SetActorType("system").
				SetMetadata(map[string]any{"i": i}))
		}
		a.Ent.AuditEvent.CreateBulk(bulk...).ExecX(ctx)
		chain(t, a, prj)
		verify := func() map[string]any {
			return a.Do(apptest.Req{Path: "/v1/projects/" + prj + "/audit/verify", Header: admin.Bearer()}).Expect(t, 200, nil)
		}
		total := float64(a.Ent.AuditEvent.Query().Where(auditevent.ProjectID(prj)).CountX(ctx))
		if got := verify(); got["ok"] != true || got["checked"] != total {
			t.Fatalf("%v, want %v checked", got, total)
		}
		at := a.Ent.AuditEvent.Query().Where(auditevent.ProjectID(prj), auditevent.ChainSeq(1100)).OnlyX(ctx).ID
		if _, err := a.DB.SQL.ExecContext(ctx, `UPDATE audit_events SET action = 'test.other' WHERE id = '`+at+`'`); err != nil {
			t.Fatal(err)
		}
		want := map[string]any{"seq": 1100.0, "id": at, "reason": "hash_mismatch"}
		if got := verify(); got["ok"] != false || got["checked"] != 1099.0 || fmt.Sprint(got["firstBroken"]) != fmt.Sprint(want) {
			t.Fatalf("%v", got)
		}
	})
}
