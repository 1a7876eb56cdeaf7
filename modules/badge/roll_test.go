package badge_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/authcore/authcore/ent/auditevent"
	"github.com/authcore/authcore/internal/apptest"
)

func (w *world) roll(as *apptest.Session, prj, id string, body any) *apptest.Response {
	return w.a.Do(apptest.Req{Method: http.MethodPost, Path: w.path(prj) + "/" + id + "/roll", Body: body, Header: bearer(as)})
}

func (w *world) me(secret string) int {
	return w.a.Do(apptest.Req{Path: "/v1/service-badges/me", Header: map[string]string{"Authorization": "Bearer " + secret}}).Status
}

func TestRoll(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		mint := func(t *testing.T, body map[string]any) (string, string) {
			got := w.create(w.admin, w.prj, body).Expect(t, 201, nil)
			return got["plaintext"].(string), got["badge"].(map[string]any)["id"].(string)
		}

		t.Run("the create answer plus previousSecretExpiresAt; the product rolls its own credentials", func(t *testing.T) {
			old, id := mint(t, map[string]any{"name": "ci", "product": "test"})
			if w.me(old) != 200 {
				t.Fatal("the minted badge does not verify")
			}
			got := w.roll(w.admin, w.prj, id, map[string]any{"graceHours": 2}).Expect(t, 200, map[string]any{"s3": nil, "auth": nil, "db": nil})
			b := got["badge"].(map[string]any)
			pt := got["plaintext"].(string)
			if b["id"] != id || b["name"] != "ci" || pt == old || b["secretHint"] == "" {
				t.Fatalf("roll answer %v", got)
			}
			if c, _ := got["test"].(map[string]any); c == nil || c["token"] != "token-of-"+id+"-roll-1" {
				t.Fatalf("the test product's credentials: %v", got["test"])
			}
			until, err := time.Parse(time.RFC3339Nano, got["previousSecretExpiresAt"].(string))
			if d := until.Sub(w.a.Clock.Now()); err != nil || d > 2*time.Hour || d < 2*time.Hour-time.Second {
				t.Fatalf("previousSecretExpiresAt %v", got["previousSecretExpiresAt"])
			}
			if w.me(old) != 200 || w.me(pt) != 200 {
				t.Fatal("both secrets must verify during the grace")
			}
			n, err := w.a.Ent.AuditEvent.Query().Where(auditevent.Action("service_badge.roll"), auditevent.ProjectID(w.prj)).Count(context.Background())
			if err != nil || n != 1 {
				t.Fatalf("%d service_badge.roll records (%v)", n, err)
			}
			// A roll in the grace replaces it: the first secret stops now.
			third := w.roll(w.admin, w.prj, id, map[string]any{"graceHours": 0}).Expect(t, 200, nil)["plaintext"].(string)
			if w.me(old) != 401 || w.me(pt) != 401 || w.me(third) != 200 {
				t.Fatal("after a roll with no grace only the newest secret may verify")
			}
		})

		t.Run("the grace ends when the badge does", func(t *testing.T) {
			_, id := mint(t, map[string]any{"name": "ci", "product": "db", "expiresInDays": 1})
			got := w.roll(w.admin, w.prj, id, map[string]any{"graceHours": 48}).Expect(t, 200, nil)
			if got["previousSecretExpiresAt"] != got["badge"].(map[string]any)["expiresAt"] {
				t.Fatalf("grace %v, badge %v", got["previousSecretExpiresAt"], got["badge"].(map[string]any)["expiresAt"])
			}
		})

		t.Run("revoking a rolled badge ends both secrets", func(t *testing.T) {
			old, id := mint(t, map[string]any{"name": "ci", "product": "db"})
			pt := w.roll(w.admin, w.prj, id, nil).Expect(t, 200, nil)["plaintext"].(string)
			w.me(old)
			w.a.Do(apptest.Req{Method: http.MethodDelete, Path: w.path(w.prj) + "/" + id, Header: bearer(w.admin)}).Expect(t, 200, nil)
			if w.me(old) != 401 || w.me(pt) != 401 {
				t.Fatal("a secret of a revoked badge verifies")
			}
			w.roll(w.admin, w.prj, id, nil).Expect(t, 404, map[string]any{"code": "not_found"})
		})

		t.Run("body: optional, an object, graceHours 0..168", func(t *testing.T) {
			_, id := mint(t, map[string]any{"name": "ci", "product": "db"})
			for _, g := range []any{-1, 168.5, "1", nil} {
				r := w.roll(w.admin, w.prj, id, map[string]any{"graceHours": g}).Expect(t, 400, map[string]any{"code": "validation_failed"})
				if r["issues"].([]any)[0].(map[string]any)["field"] != "graceHours" {
					t.Fatalf("%v: %v", g, r)
				}
			}
			w.roll(w.admin, w.prj, id, "[1]").Expect(t, 400, map[string]any{"code": "validation_failed"})
			w.roll(w.admin, w.prj, id, "{x").Expect(t, 400, map[string]any{"code": "validation_failed"})
			w.roll(w.admin, w.prj, id, nil).Expect(t, 200, nil)
			w.roll(w.admin, w.prj, id, map[string]any{"graceHours": 168}).Expect(t, 200, nil)
		})

		t.Run("unknown or another project's: 404; developers: 403", func(t *testing.T) {
			_, id := mint(t, map[string]any{"name": "ci", "product": "db"})
			w.roll(w.admin, w.prj, "bdg_nope", nil).Expect(t, 404, map[string]any{"code": "not_found"})
			w.roll(w.admB, w.other, id, nil).Expect(t, 404, map[string]any{"code": "not_found"})
			w.roll(w.dev, w.prj, id, nil).Expect(t, 403, map[string]any{"code": "forbidden"})
		})

		t.Run("a badge the policy no longer allows is not rolled", func(t *testing.T) {
			_, id := mint(t, map[string]any{"name": "ci", "product": "db"}) // never expires
			policy := "/v1/projects/" + w.prj + "/policy"
			w.a.Do(apptest.Req{Method: http.MethodPut, Path: policy, Body: map[string]any{"badgeMaxExpiresInDays": 30}, Header: bearer(w.admin)}).Expect(t, 200, nil)
			r := w.roll(w.admin, w.prj, id, nil).Expect(t, 400, map[string]any{"code": "validation_failed"})
			if r["issues"].([]any)[0].(map[string]any)["reason"] != "exceeds_policy" {
				t.Fatalf("%v", r)
			}
			w.a.Do(apptest.Req{Method: http.MethodPut, Path: policy, Body: map[string]any{}, Header: bearer(w.admin)}).Expect(t, 200, nil)
		})
	})
}

// The replaced secret stops when the grace ends, though it was cached as valid.
func TestRollGraceEnds(t *testing.T) {
	w := newWorld(t, apptest.Stores(t)[0])
	old := w.create(w.admin, w.prj, map[string]any{"name": "ci", "product": "db"}).Expect(t, 201, nil)
	id := old["badge"].(map[string]any)["id"].(string)
	w.me(old["plaintext"].(string))
	pt := w.roll(w.admin, w.prj, id, map[string]any{"graceHours": 1}).Expect(t, 200, nil)["plaintext"].(string)
	w.a.Clock.Advance(time.Hour - time.Second)
	if w.me(old["plaintext"].(string)) != 200 {
		t.Fatal("the old secret stopped early")
	}
	w.a.Clock.Advance(time.Second)
	if w.me(old["plaintext"].(string)) != 401 || w.me(pt) != 200 {
		t.Fatal("after the grace only the new secret verifies")
	}
}

// The catalogue says which products can be minted, and why not the others.
func TestProductCatalogue(t *testing.T) {
	w := newWorld(t, apptest.Stores(t)[0])
	w.a.Get("/v1/service-badges/products").Expect(t, 401, nil)
	got := w.a.Do(apptest.Req{Path: "/v1/service-badges/products", Header: bearer(w.viewer)}).Expect(t, 200, nil)["products"].([]any)
	byKey := map[string]map[string]any{}
	for _, p := range got {
		byKey[p.(map[string]any)["key"].(string)] = p.(map[string]any)
	}
	if byKey["db"]["mintable"] != true || byKey["db"]["reason"] != nil || byKey["s3"]["mintable"] != true {
		t.Fatalf("%v", got)
	}
	if later := byKey[apptest.NotMintableKey]; later["mintable"] != false || later["reason"] != apptest.NotMintableReason {
		t.Fatalf("a product not mintable: %v", later)
	}
}
