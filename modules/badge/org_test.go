package badge_test

import (
	"net/http"
	"net/url"
	"slices"
	"testing"

	"github.com/authcore/authcore/internal/apptest"
)

// A badge minted with orgId is bound to that org of the project (SPEC §26): its
// service-badges/me answers orgId and its introspection org_id; an unbound badge answers
// exactly as before; an org of another project, or none, is refused and mints nothing.
func TestOrgBoundBadges(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		org := w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + w.prj + "/orgs", Body: map[string]any{"name": "Acme"}, Header: bearer(w.admin)}).
			Expect(t, 201, nil)["id"].(string)
		foreign := w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + w.other + "/orgs", Body: map[string]any{"name": "Elsewhere"}, Header: bearer(w.admB)}).
			Expect(t, 201, nil)["id"].(string)
		me := func(pt string) map[string]any {
			return w.a.Do(apptest.Req{Path: "/v1/service-badges/me", Header: map[string]string{"Authorization": "Bearer " + pt}}).Expect(t, 200, nil)
		}
		rs := w.a.MintAuthClient(t, w.admin, w.prj, nil)
		introspect := func(pt string) map[string]any {
			h := apptest.Basic(rs.ID, rs.Secret)
			h["Content-Type"] = "application/x-www-form-urlencoded"
			return w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/introspect", Body: url.Values{"token": {pt}}.Encode(), Header: h}).Expect(t, 200, nil)
		}

		bound := w.create(w.admin, w.prj, map[string]any{"name": "billing", "product": "test", "orgId": org}).Expect(t, 201, nil)
		if got := bound["badge"].(map[string]any)["orgId"]; got != org {
			t.Errorf("minted badge's orgId %v", got)
		}
		if got := me(bound["plaintext"].(string)); got["orgId"] != org {
			t.Errorf("service-badges/me: %v", got)
		}
		if got := introspect(bound["plaintext"].(string)); got["org_id"] != org {
			t.Errorf("introspection: %v", got)
		}

		plain := w.create(w.admin, w.prj, map[string]any{"name": "plain", "product": "test"}).Expect(t, 201, nil)["plaintext"].(string)
		var got []string
		for k := range me(plain) {
			got = append(got, k)
		}
		slices.Sort(got)
		if want := []string{"authenticated", "badgeId", "expiresAt", "kind", "product", "projectId", "role"}; !slices.Equal(got, want) {
			t.Errorf("an unbound badge's me has %v, want %v", got, want)
		}
		if _, ok := introspect(plain)["org_id"]; ok {
			t.Error("an unbound badge's introspection names an org")
		}

		before, _ := w.count(t)
		for _, bad := range []any{foreign, "org_nope", "bdg_x", 3} {
			w.create(w.admin, w.prj, map[string]any{"name": "x", "product": "test", "orgId": bad}).Expect(t, 400, map[string]any{"code": "validation_failed"})
		}
		if after, _ := w.count(t); after != before {
			t.Errorf("%d badges after refusals, want %d", after, before)
		}
	})
}
