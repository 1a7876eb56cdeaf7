package badge_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/authcore/authcore/internal/apptest"
)

// BenchmarkBadgeMeWarm is GET /v1/service-badges/me through the whole HTTP stack with a
// warm cache. Its allocs/op are the figure to keep; through the network, see `authcore bench`.
func BenchmarkBadgeMeWarm(b *testing.B) {
	a, h := apptest.Handler(b, apptest.Stores(b)[0])
	admin := a.SignUp(b)
	prj := a.CreateProject(b, admin)
	secret := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + prj + "/service-badges", Body: map[string]any{"name": "bench", "product": "db"}, Header: admin.Bearer()}).
		Expect(b, 201, nil)["plaintext"].(string)
	apptest.Bench(b, h, apptest.Request(http.MethodGet, "/v1/service-badges/me", map[string]string{"Authorization": "Bearer " + secret}, nil))
}

// BenchmarkIntrospectBadgeWarm is RFC 7662 introspection of a badge secret by a resource
// server, warm: the client's authentication, the registry's dispatch, the kind's answer.
func BenchmarkIntrospectBadgeWarm(b *testing.B) {
	a, h := apptest.Handler(b, apptest.Stores(b)[0])
	admin := a.SignUp(b)
	prj := a.CreateProject(b, admin)
	rs := a.MintAuthClient(b, admin, prj, nil)
	secret := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + prj + "/service-badges", Body: map[string]any{"name": "bench", "product": "db"}, Header: admin.Bearer()}).
		Expect(b, 201, nil)["plaintext"].(string)
	header := apptest.Basic(rs.ID, rs.Secret)
	header["Content-Type"] = "application/x-www-form-urlencoded"
	apptest.Bench(b, h, apptest.Request(http.MethodPost, "/v1/oauth/introspect", header, []byte(url.Values{"token": {secret}}.Encode())))
}
