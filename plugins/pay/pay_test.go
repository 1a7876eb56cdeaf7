package pay_test

import (
	"net/http"
	"testing"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/plugins/pay"
)

func TestMain(m *testing.M) { apptest.Main(m) }

// Seed 4.4 rule 2 and SPEC §6, for pay itself: registered, listed with its description,
// never mintable — 400 product_not_available with its message, after the body's shape and
// before the role. Whether pay can be minted is this package's own setting: the badge
// module's tests use a test product for "not mintable".
func TestPayIsListedButNotMintable(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := apptest.Start(t, st)
		admin := a.SignUp(t)
		prj := a.CreateProject(t, admin)
		create := func(body map[string]any) *apptest.Response {
			return a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + prj + "/service-badges", Body: body, Header: admin.Bearer()})
		}
		t.Run("create: 400 product_not_available", func(t *testing.T) {
			create(map[string]any{"name": "x", "product": "pay"}).
				Expect(t, 400, map[string]any{"code": "product_not_available", "message": pay.NotAvailable})
		})
		t.Run("a bad role still answers product_not_available", func(t *testing.T) {
			create(map[string]any{"name": "x", "product": "pay", "role": "owner"}).Expect(t, 400, map[string]any{"code": "product_not_available"})
		})
		t.Run("a bad shape answers validation_failed first", func(t *testing.T) {
			create(map[string]any{"name": "", "product": "pay"}).Expect(t, 400, map[string]any{"code": "validation_failed"})
		})
		t.Run("listed with its description, not mintable, with the reason", func(t *testing.T) {
			list := a.Do(apptest.Req{Path: "/v1/projects/" + prj + "/service-badges", Header: admin.Bearer()}).Expect(t, 200, nil)
			if d := list["products"].(map[string]any)["pay"]; d != "Payments product, coming later." {
				t.Fatalf("description %v", d)
			}
			products := a.Do(apptest.Req{Path: "/v1/service-badges/products", Header: admin.Bearer()}).Expect(t, 200, nil)["products"].([]any)
			for _, p := range products {
				if p := p.(map[string]any); p["key"] == "pay" {
					if p["mintable"] != false || p["reason"] != pay.NotAvailable {
						t.Fatalf("%v", p)
					}
					return
				}
			}
			t.Fatalf("pay is not in the catalogue: %v", products)
		})
		t.Run("the list filter ignores it", func(t *testing.T) {
			create(map[string]any{"name": "d", "product": "db"}).Expect(t, 201, nil)
			list := a.Do(apptest.Req{Path: "/v1/projects/" + prj + "/service-badges?product=pay", Header: admin.Bearer()}).Expect(t, 200, nil)
			if n := len(list["badges"].([]any)); n != 1 {
				t.Fatalf("?product=pay listed %d badges, want all (1)", n)
			}
		})
	})
}
