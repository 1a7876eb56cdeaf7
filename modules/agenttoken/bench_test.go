package agenttoken_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/authcore/authcore/internal/apptest"
)

// BenchmarkAIMeWarm is GET /v1/auth-core/ai/me through the whole HTTP stack with a warm
// cache: what every agent request costs the server. Its allocs/op are the figure to keep
// (timings on a busy machine are not); through the network, see `authcore bench`.
func BenchmarkAIMeWarm(b *testing.B) {
	a, h := apptest.Handler(b, apptest.Stores(b)[0])
	admin := a.SignUp(b)
	prj := a.CreateProject(b, admin)
	tok := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/projects/" + prj + "/ai/agents", Body: map[string]any{}, Header: admin.Bearer()}).
		Expect(b, 200, nil)["plaintext"].(string)
	apptest.Bench(b, h, apptest.Request(http.MethodGet, "/v1/auth-core/ai/me", map[string]string{"Authorization": "Bearer " + tok}, nil))
}

// BenchmarkIntrospectAgentWarm is RFC 7662 introspection of an agent token by a resource
// server, warm.
func BenchmarkIntrospectAgentWarm(b *testing.B) {
	a, h := apptest.Handler(b, apptest.Stores(b)[0])
	admin := a.SignUp(b)
	prj := a.CreateProject(b, admin)
	rs := a.MintAuthClient(b, admin, prj, nil)
	tok := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/projects/" + prj + "/ai/agents", Body: map[string]any{}, Header: admin.Bearer()}).
		Expect(b, 200, nil)["plaintext"].(string)
	header := apptest.Basic(rs.ID, rs.Secret)
	header["Content-Type"] = "application/x-www-form-urlencoded"
	apptest.Bench(b, h, apptest.Request(http.MethodPost, "/v1/oauth/introspect", header, []byte(url.Values{"token": {tok}}.Encode())))
}

// BenchmarkOrgBoundVsUnbound is ai/me and RFC 7662 introspection, warm, of a token bound
// to an org (SPEC §26) beside an unbound one, in one app and one run, so their ratio is
// the cost of the binding: org_id rides in the cached row, so it should be within noise
// (the target is 5 %), with no store read per request for either.
func BenchmarkOrgBoundVsUnbound(b *testing.B) {
	a, h := apptest.Handler(b, apptest.Stores(b)[0])
	admin := a.SignUp(b)
	prj := a.CreateProject(b, admin)
	rs := a.MintAuthClient(b, admin, prj, nil)
	org := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + prj + "/orgs", Body: map[string]any{"name": "Acme"}, Header: admin.Bearer()}).
		Expect(b, 201, nil)["id"].(string)
	mint := func(body map[string]any) string {
		return a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/projects/" + prj + "/ai/agents", Body: body, Header: admin.Bearer()}).
			Expect(b, 200, nil)["plaintext"].(string)
	}
	tokens := []struct{ name, token string }{{"unbound", mint(map[string]any{})}, {"org", mint(map[string]any{"orgId": org})}}
	header := apptest.Basic(rs.ID, rs.Secret)
	header["Content-Type"] = "application/x-www-form-urlencoded"
	for _, tok := range tokens {
		b.Run("me/"+tok.name, func(b *testing.B) {
			apptest.Bench(b, h, apptest.Request(http.MethodGet, "/v1/auth-core/ai/me", map[string]string{"Authorization": "Bearer " + tok.token}, nil))
		})
	}
	for _, tok := range tokens {
		b.Run("introspect/"+tok.name, func(b *testing.B) {
			apptest.Bench(b, h, apptest.Request(http.MethodPost, "/v1/oauth/introspect", header, []byte(url.Values{"token": {tok.token}}.Encode())))
		})
	}
}
