package authorize_test

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/authcore/authcore/internal/apptest"
)

// BenchmarkSSOAuthorizeWarm is a warm single sign-on (SPEC §25) through the whole HTTP
// stack: a browser with a live SSO session of the project asks a first-party app's
// /oauth/authorize and is sent back with a code (the session read, the request parked
// and decided, the grant widened, the code written, in the store). Each iteration comes
// from another address, as browsers do: one address's sign-in budget (SPEC §9b) would
// otherwise end the run, which is the figure for a single client.
func BenchmarkSSOAuthorizeWarm(b *testing.B) {
	a, h := apptest.Handler(b, apptest.Stores(b)[0])
	admin := a.SignUp(b)
	project := a.CreateProject(b, admin)
	alice := a.SignUpIn(b, project)
	redirect := "http://127.0.0.1:9/callback"
	row, err := a.Ent.OAuthClient.Create().SetName("Bench").SetRedirectUris([]string{redirect}).SetApplicationType("web").
		SetGrantTypes([]string{"authorization_code"}).SetTokenEndpointAuthMethod("none").SetProjectID(project).SetAppType("web").
		SetFirstParty(true).Save(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	// The first sign-in, decided on the consent API as the console does: it sets the cookie.
	f := newFlow(row.ID, redirect)
	f.extra.Set("scope", "openid")
	res := authorize(b, a, f.query())
	loc, _ := url.Parse(res.Header.Get("Location"))
	id := loc.Query().Get("request")
	mark := ""
	for _, c := range res.Cookies() {
		if c.Name == "ac_authz" {
			mark = c.Name + "=" + c.Value
		}
	}
	hdr := alice.Bearer()
	hdr["Cookie"] = mark
	c := a.Do(apptest.Req{Path: "/v1/oauth/authorizations/" + id, Header: hdr}).Expect(b, 200, nil)
	got := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/authorizations/" + id, Header: hdr,
		Body: map[string]any{"decision": "approve", "csrfToken": c["csrfToken"]}})
	sso := ""
	for _, ck := range (&http.Response{Header: got.Header}).Cookies() {
		if strings.HasPrefix(ck.Name, "ac_sso_") {
			sso = ck.Name + "=" + ck.Value
		}
	}
	if sso == "" {
		b.Fatalf("no SSO cookie: %d %s", got.Status, got.Body)
	}
	ctx := apptest.Request(http.MethodGet, "/oauth/authorize?"+f.query().Encode(), map[string]string{"Cookie": sso}, nil)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ctx.Response.Reset()
		ctx.SetRemoteAddr(&net.TCPAddr{IP: net.IPv4(10, byte(i>>16), byte(i>>8), byte(i)), Port: 40000})
		h(ctx)
		if ctx.Response.StatusCode() != http.StatusFound || !strings.Contains(string(ctx.Response.Header.Peek("Location")), "code=") {
			b.Fatalf("%d %s", ctx.Response.StatusCode(), ctx.Response.Header.Peek("Location"))
		}
	}
}
