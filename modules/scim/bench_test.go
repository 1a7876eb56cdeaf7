package scim_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/authcore/authcore/internal/apptest"
)

// BenchmarkSCIMUserCreate is SCIM user creations a second through the real route on the
// first store (a tenant user made verified in the org's domain, enrolled in the org, the
// SCIM record and its audit records in one transaction), beside its baseline in the same
// run: the project admin's own user creation (POST /v1/projects/{id}/users, no password),
// which makes the same tenant user without the org and the SCIM record. The ratio of the
// two is the report's figure.
func BenchmarkSCIMUserCreate(b *testing.B) {
	world := newWorld(b, apptest.Stores(b)[0])
	n := 0
	b.Run("scim", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			n++
			world.scim(http.MethodPost, "/Users", user(fmt.Sprintf("bench%d@acme.example", n), nil)).Expect(b, 201, nil)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "users/s")
	})
	b.Run("admin_api", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			n++
			world.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + world.project + "/users",
				Body:   map[string]any{"email": fmt.Sprintf("base%d@acme.example", n), "emailVerified": true, "metadata": map[string]any{"name": "Ada Lovelace"}},
				Header: world.admin.Bearer()}).Expect(b, 201, nil)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "users/s")
	})
}
