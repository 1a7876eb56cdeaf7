package trust_test

import (
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/internal/interop"
)

// Workload identity federation (SPEC §22): a workload's platform token becomes an access
// token for one of the project's resources, with no secret stored anywhere; every attack
// on the assertion fails.
func TestWorkloadIdentityFederation(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := startApp(t, st)
		admin := a.SignUp(t)
		prj := a.CreateProject(t, admin)
		mcp := "https://mcp.payments.example/mcp"
		a.RegisterResource(t, admin, prj, mcp, []string{"mcp:tools", "mcp:admin"})
		k8s := newPlatform(t)
		ti := trustIssuer(t, a, admin, prj, map[string]any{"issuer": k8s.URL, "kind": "workload", "name": "prod cluster",
			"audience": "authcore", "subjectPattern": "system:serviceaccount:payments:*", "scopes": []string{"mcp:tools"}, "resources": []string{mcp}})
		const sa = "system:serviceaccount:payments:invoicer"

		got := jwtBearer(a, k8s.token(t, sa, "authcore", nil), mcp, url.Values{"scope": {"mcp:tools"}}, nil).Expect(t, 200, map[string]any{"scope": "mcp:tools", "token_type": "Bearer"})
		claims := a.VerifyAccessToken(t, got["access_token"].(string), mcp)
		if claims["sub"] != "wif:"+k8s.URL+"#"+sa || claims["client_id"] != ti["id"] || claims["project_id"] != prj {
			t.Fatalf("claims %v", claims)
		}
		// No scope asked for: what the trust allows and the resource takes.
		jwtBearer(a, k8s.token(t, sa, "authcore", nil), mcp, nil, nil).Expect(t, 200, map[string]any{"scope": "mcp:tools"})
		introspector := a.MintAuthClient(t, admin, prj, nil)
		in := a.PostForm("/v1/oauth/introspect", url.Values{"token": {got["access_token"].(string)}}, apptest.Basic(introspector.ID, introspector.Secret)).Expect(t, 200, map[string]any{"active": true})
		if in["sub"] != claims["sub"] {
			t.Fatalf("introspected %v", in)
		}

		refused := func(name, assertion string, more url.Values, code string) {
			t.Run(name, func(t *testing.T) {
				jwtBearer(a, assertion, mcp, more, nil).Expect(t, 400, map[string]any{"error": code})
			})
		}
		once := k8s.token(t, sa, "authcore", nil)
		jwtBearer(a, once, mcp, nil, nil).Expect(t, 200, nil)
		refused("a replayed assertion", once, nil, "invalid_grant")
		refused("for another audience", k8s.token(t, sa, "vault", nil), nil, "invalid_grant")
		refused("a subject outside the pattern", k8s.token(t, "system:serviceaccount:kube-system:admin", "authcore", nil), nil, "invalid_grant")
		refused("expired", k8s.token(t, sa, "authcore", func(c map[string]any) { c["exp"] = time.Now().Add(-time.Minute).Unix() }), nil, "invalid_grant")
		refused("living past ten minutes", k8s.token(t, sa, "authcore", func(c map[string]any) { c["exp"] = time.Now().Add(time.Hour).Unix() }), nil, "invalid_grant")
		refused("an untrusted issuer", newPlatform(t).token(t, sa, "authcore", nil), nil, "invalid_grant")
		refused("no scope left", k8s.token(t, sa, "authcore", nil), url.Values{"scope": {"mcp:admin"}}, "invalid_scope")
		refused("not a JWT", "not-a-jwt", nil, "invalid_grant")
		refused("a NUL in the issuer", k8s.token(t, sa, "authcore", func(c map[string]any) { c["iss"] = k8s.URL + "\x00" }), nil, "invalid_grant")
		refused("a NUL in the jti", k8s.token(t, sa, "authcore", func(c map[string]any) { c["jti"] = "a\x00b" }), nil, "invalid_grant")
		refused("alg none", "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0."+strings.Split(k8s.token(t, sa, "authcore", nil), ".")[1]+".", nil, "invalid_grant")
		t.Run("a resource outside the trust", func(t *testing.T) {
			other := "https://mcp.payments.example/other"
			a.RegisterResource(t, admin, prj, other, nil)
			jwtBearer(a, k8s.token(t, sa, "authcore", nil), other, nil, nil).Expect(t, 400, map[string]any{"error": "invalid_target"})
		})
		t.Run("no resource", func(t *testing.T) {
			a.PostForm("/v1/oauth/token", url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:jwt-bearer"}, "assertion": {k8s.token(t, sa, "authcore", nil)}}, nil).
				Expect(t, 400, map[string]any{"error": "invalid_target"})
		})
		if st.Name == "postgres" {
			t.Run("replayed on another replica", func(t *testing.T) {
				other := startApp(t, st) // the same database
				twice := k8s.token(t, sa, "authcore", nil)
				jwtBearer(a, twice, mcp, nil, nil).Expect(t, 200, nil)
				jwtBearer(other, twice, mcp, nil, nil).Expect(t, 400, map[string]any{"error": "invalid_grant"})
			})
		}
		// Audited; and ending the trust ends what it gave.
		trail := a.Do(apptest.Req{Path: "/v1/projects/" + prj + "/audit?limit=200", Header: admin.Bearer()}).Expect(t, 200, nil)["events"].([]any)
		if n := countAction(trail, "trust.jwt_bearer"); n < 3 {
			t.Fatalf("%d trust.jwt_bearer records", n)
		}
		a.Do(apptest.Req{Method: http.MethodDelete, Path: "/v1/projects/" + prj + "/trust/issuers/" + ti["id"].(string), Header: admin.Bearer()}).Expect(t, 200, nil)
		a.PostForm("/v1/oauth/introspect", url.Values{"token": {got["access_token"].(string)}}, apptest.Basic(introspector.ID, introspector.Secret)).Expect(t, 200, map[string]any{"active": false})
		jwtBearer(a, k8s.token(t, sa, "authcore", nil), mcp, nil, nil).Expect(t, 400, map[string]any{"error": "invalid_grant"})
	})
}

func countAction(events []any, action string) int {
	n := 0
	for _, e := range events {
		if e.(map[string]any)["action"] == action {
			n++
		}
	}
	return n
}

// The trust routes: admins only, with a step-up; bad bodies change nothing.
func TestTrustRoutes(t *testing.T) {
	a := startApp(t, apptest.Stores(t)[0])
	admin := a.SignUp(t)
	prj := a.CreateProject(t, admin)
	base := "/v1/projects/" + prj + "/trust/issuers"
	for name, body := range map[string]any{
		"no body":                              nil,
		"no issuer":                            map[string]any{"kind": "workload", "audience": "x", "subjectPattern": "*"},
		"a relative issuer":                    map[string]any{"issuer": "/x", "kind": "workload", "audience": "x", "subjectPattern": "*"},
		"an unknown kind":                      map[string]any{"issuer": "https://k8s.example", "kind": "robot"},
		"a workload without audience":          map[string]any{"issuer": "https://k8s.example", "kind": "workload", "subjectPattern": "*"},
		"a workload without a subject pattern": map[string]any{"issuer": "https://k8s.example", "kind": "workload", "audience": "x"},
		"an enterprise with audience":          map[string]any{"issuer": "https://idp.example", "kind": "enterprise", "audience": "x"},
		"bad scopes":                           map[string]any{"issuer": "https://k8s.example", "kind": "workload", "audience": "x", "subjectPattern": "*", "scopes": []string{"Not A Scope"}},
		"an unregistered resource":             map[string]any{"issuer": "https://k8s.example", "kind": "workload", "audience": "x", "subjectPattern": "*", "resources": []string{"https://elsewhere.example"}},
		"jwks and jwksUri":                     map[string]any{"issuer": "https://k8s.example", "kind": "workload", "audience": "x", "subjectPattern": "*", "jwksUri": "https://k8s.example/jwks", "jwks": map[string]any{"keys": []any{}}},
		"a private key in jwks":                map[string]any{"issuer": "https://k8s.example", "kind": "workload", "audience": "x", "subjectPattern": "*", "jwks": map[string]any{"keys": []any{map[string]any{"kty": "oct", "k": "c2VjcmV0"}}}},
		"trustEmail of the wrong type":         map[string]any{"issuer": "https://k8s.example", "kind": "workload", "audience": "x", "subjectPattern": "*", "trustEmail": "yes"},
		"a name with a control char":           map[string]any{"issuer": "https://k8s.example", "kind": "workload", "audience": "x", "subjectPattern": "*", "name": "a\u0007"},
	} {
		t.Run(name, func(t *testing.T) {
			a.Do(apptest.Req{Method: http.MethodPost, Path: base, Header: admin.Bearer(), Body: body}).Expect(t, 400, map[string]any{"code": "validation_failed"})
		})
	}
	a.Get(base, "Authorization", "Bearer "+admin.AccessToken).Expect(t, 200, map[string]any{"issuers": []any{}})
	good := map[string]any{"issuer": "https://k8s.example", "kind": "workload", "audience": "authcore", "subjectPattern": "*"}
	a.Do(apptest.Req{Method: http.MethodPost, Path: base, Header: admin.Bearer(), Body: good}).Expect(t, 201, map[string]any{"subjectClaim": "sub"})
	a.Do(apptest.Req{Method: http.MethodPost, Path: base, Header: admin.Bearer(), Body: good}).Expect(t, 409, map[string]any{"code": "issuer_exists"})
	dev := a.SignUp(t)
	a.AddMember(t, admin, prj, dev, "developer")
	a.Do(apptest.Req{Method: http.MethodPost, Path: base, Header: dev.Bearer(), Body: good}).Expect(t, 403, nil)
	a.Get(base, "Authorization", "Bearer "+dev.AccessToken).Expect(t, 403, nil)
	a.Do(apptest.Req{Method: http.MethodDelete, Path: base + "/tis_nope", Header: admin.Bearer()}).Expect(t, 404, nil)
	as := "/v1/projects/" + prj + "/trust/authorization-servers"
	a.Do(apptest.Req{Method: http.MethodPost, Path: as, Header: admin.Bearer(), Body: map[string]any{"issuer": "https://as.example"}}).Expect(t, 400, map[string]any{"code": "validation_failed"})
	got := a.Do(apptest.Req{Method: http.MethodPost, Path: as, Header: admin.Bearer(), Body: map[string]any{"issuer": "https://as.example", "clientId": "dcr_x"}}).Expect(t, 201, nil)
	a.Get(as, "Authorization", "Bearer "+admin.AccessToken).Expect(t, 200, nil)
	a.Do(apptest.Req{Method: http.MethodDelete, Path: as + "/" + got["id"].(string), Header: admin.Bearer()}).Expect(t, 200, map[string]any{"ok": true})
}

// Enterprise-managed authorization (SPEC §22) across two authcores: A, the enterprise's
// identity provider, issues an ID-JAG from the id_token its person signed in with; B, the
// resource's authorization server, trusts A and gives the person's agent a token for its
// resource through the client the ID-JAG names.
func TestIDJAGAcrossTwoServers(t *testing.T) {
	st := apptest.Stores(t)[0]
	a, rs := startIdP(t, st), startApp(t, st)
	idp := a.App
	idpIss, rsIss := issuerOf(t, idp), issuerOf(t, rs)

	// B: the resource, its client for the agent, and its trust in A.
	rsAdmin := rs.SignUp(t)
	rsPrj := rs.CreateProject(t, rsAdmin)
	mcp := "https://mcp.vendor.example/mcp"
	rs.RegisterResource(t, rsAdmin, rsPrj, mcp, []string{"mcp:tools", "mcp:admin"})
	agentClient, agentSecret := register(t, rs, "https://agent.enterprise.example/cb")
	otherClient, otherSecret := register(t, rs, "https://other.example/cb")
	trustIssuer(t, rs, rsAdmin, rsPrj, map[string]any{"issuer": idpIss, "kind": "enterprise", "trustEmail": true, "scopes": []string{"mcp:tools"}, "resources": []string{mcp}})

	// A: the person (their address proven), their project allowing B, the enterprise's
	// agent app, the sign-in.
	person := a.person(t)
	idpPrj := idp.CreateProject(t, person)
	idp.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + idpPrj + "/trust/authorization-servers", Header: person.Bearer(),
		Body: map[string]any{"issuer": rsIss, "clientId": agentClient}}).Expect(t, 201, nil)
	appID, appSecret := register(t, idp, "https://agent.enterprise.example/cb")
	idt := idToken(t, idp, person, idpPrj, appID, appSecret, "https://agent.enterprise.example/cb", "openid email")
	// The person exists at B as a user of the project's tenant, with the same address.
	rs.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signup", Body: map[string]any{"email": person.Email, "password": "correct horse battery", "tenantId": rsPrj}}).Expect(t, 201, nil)

	jag := func(t *testing.T, audience, scope string) *apptest.Response {
		return idp.PostForm("/v1/oauth/token", url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"},
			"requested_token_type": {"urn:ietf:params:oauth:token-type:id-jag"}, "subject_token": {idt},
			"subject_token_type": {"urn:ietf:params:oauth:token-type:id_token"}, "audience": {audience}, "resource": {mcp}, "scope": {scope}},
			apptest.Basic(appID, appSecret))
	}
	issued := jag(t, rsIss, "mcp:tools").Expect(t, 200, map[string]any{"issued_token_type": "urn:ietf:params:oauth:token-type:id-jag", "token_type": "N_A"})
	idJAG := issued["access_token"].(string)
	got := jwtBearer(rs, idJAG, mcp, nil, apptest.Basic(agentClient, agentSecret)).Expect(t, 200, map[string]any{"scope": "mcp:tools"})
	claims := rs.VerifyAccessToken(t, got["access_token"].(string), mcp)
	if claims["client_id"] != agentClient || claims["project_id"] != rsPrj || claims["sub"] == person.UserID {
		t.Fatalf("claims %v (sub must be B's user, not A's)", claims)
	}

	t.Run("A refuses an authorization server no project allows", func(t *testing.T) {
		jag(t, "https://unknown-as.example", "mcp:tools").Expect(t, 400, map[string]any{"error": "invalid_target"})
	})
	t.Run("A refuses without client authentication", func(t *testing.T) {
		idp.PostForm("/v1/oauth/token", url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"}, "requested_token_type": {"urn:ietf:params:oauth:token-type:id-jag"},
			"subject_token": {idt}, "subject_token_type": {"urn:ietf:params:oauth:token-type:id_token"}, "audience": {rsIss}}, nil).Expect(t, 401, map[string]any{"error": "invalid_client"})
	})
	t.Run("A refuses another client's id_token", func(t *testing.T) {
		x, xs := register(t, idp, "https://x.example/cb")
		idp.PostForm("/v1/oauth/token", url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"}, "requested_token_type": {"urn:ietf:params:oauth:token-type:id-jag"},
			"subject_token": {idt}, "subject_token_type": {"urn:ietf:params:oauth:token-type:id_token"}, "audience": {rsIss}}, apptest.Basic(x, xs)).Expect(t, 400, map[string]any{"error": "invalid_grant"})
	})
	t.Run("B refuses a replayed ID-JAG", func(t *testing.T) {
		jwtBearer(rs, idJAG, mcp, nil, apptest.Basic(agentClient, agentSecret)).Expect(t, 400, map[string]any{"error": "invalid_grant"})
	})
	t.Run("B refuses an ID-JAG presented by another client", func(t *testing.T) {
		fresh := jag(t, rsIss, "mcp:tools").Expect(t, 200, nil)["access_token"].(string)
		jwtBearer(rs, fresh, mcp, nil, apptest.Basic(otherClient, otherSecret)).Expect(t, 400, map[string]any{"error": "invalid_grant"})
		jwtBearer(rs, jag(t, rsIss, "mcp:tools").Expect(t, 200, nil)["access_token"].(string), mcp, nil, nil).Expect(t, 401, map[string]any{"error": "invalid_client"})
	})
	t.Run("B refuses an ID-JAG for another authorization server", func(t *testing.T) {
		third := "https://third-as.example"
		idp.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + idpPrj + "/trust/authorization-servers", Header: person.Bearer(),
			Body: map[string]any{"issuer": third, "clientId": agentClient}}).Expect(t, 201, nil)
		elsewhere := jag(t, third, "mcp:tools").Expect(t, 200, nil)["access_token"].(string)
		jwtBearer(rs, elsewhere, mcp, nil, apptest.Basic(agentClient, agentSecret)).Expect(t, 400, map[string]any{"error": "invalid_grant"})
	})
	t.Run("B gives no scope beyond the ID-JAG's and its trust's", func(t *testing.T) {
		narrow := jag(t, rsIss, "mcp:tools").Expect(t, 200, nil)["access_token"].(string)
		jwtBearer(rs, narrow, mcp, url.Values{"scope": {"mcp:tools mcp:admin"}}, apptest.Basic(agentClient, agentSecret)).Expect(t, 200, map[string]any{"scope": "mcp:tools"})
		wide := jag(t, rsIss, "mcp:tools mcp:admin").Expect(t, 200, nil)["access_token"].(string)
		got := jwtBearer(rs, wide, mcp, nil, apptest.Basic(agentClient, agentSecret)).Expect(t, 200, nil)
		if got["scope"] != "mcp:tools" {
			t.Fatalf("scope %v, want the trust's mcp:tools only", got["scope"])
		}
	})
	t.Run("B refuses an issuer it does not trust", func(t *testing.T) {
		other := rs.SignUp(t)
		otherPrj := rs.CreateProject(t, other)
		mcp2 := "https://mcp2.vendor.example/mcp"
		rs.RegisterResource(t, other, otherPrj, mcp2, nil)
		fresh := jag(t, rsIss, "mcp:tools").Expect(t, 200, nil)["access_token"].(string)
		jwtBearer(rs, fresh, mcp2, nil, apptest.Basic(agentClient, agentSecret)).Expect(t, 400, map[string]any{"error": "invalid_grant"})
	})
	meta := rs.Get("/.well-known/oauth-authorization-server").Expect(t, 200, nil)
	if !contains(strings.Join(toStrings(meta["authorization_grant_profiles_supported"]), " "), "id-jag") ||
		!contains(strings.Join(toStrings(meta["grant_types_supported"]), " "), "jwt-bearer") {
		t.Fatalf("metadata %v", meta)
	}
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// An ID-JAG names its person by subject (SPEC §22): at B, the user who linked their
// identity at A (authcore as A's people's OpenID Provider, §20–§21) is the one it names,
// whatever their address; with no link and no trusted email it names no one.
func TestIDJAGForALinkedPerson(t *testing.T) {
	st := apptest.Stores(t)[0]
	idp, rs := startApp(t, st), startApp(t, st)
	idpIss, rsIss := issuerOf(t, idp), issuerOf(t, rs)

	rsAdmin := rs.SignUp(t)
	rsPrj := rs.CreateProject(t, rsAdmin)
	mcp := "https://mcp.vendor.example/mcp"
	rs.RegisterResource(t, rsAdmin, rsPrj, mcp, []string{"mcp:tools"})
	agentClient, agentSecret := register(t, rs, "https://agent.enterprise.example/cb")
	trustIssuer(t, rs, rsAdmin, rsPrj, map[string]any{"issuer": idpIss, "kind": "enterprise", "scopes": []string{"mcp:tools"}})

	person := idp.SignUp(t)
	idpPrj := idp.CreateProject(t, person)
	idp.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + idpPrj + "/trust/authorization-servers", Header: person.Bearer(),
		Body: map[string]any{"issuer": rsIss, "clientId": agentClient}}).Expect(t, 201, nil)
	appID, appSecret := register(t, idp, "https://agent.enterprise.example/cb")
	jag := func(t *testing.T) string {
		idt := idToken(t, idp, person, idpPrj, appID, appSecret, "https://agent.enterprise.example/cb", "openid")
		return idp.PostForm("/v1/oauth/token", url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"},
			"requested_token_type": {"urn:ietf:params:oauth:token-type:id-jag"}, "subject_token": {idt},
			"subject_token_type": {"urn:ietf:params:oauth:token-type:id_token"}, "audience": {rsIss}, "resource": {mcp}, "scope": {"mcp:tools"}},
			apptest.Basic(appID, appSecret)).Expect(t, 200, nil)["access_token"].(string)
	}

	// At B, a user with another address, not yet linked: the ID-JAG names no one.
	user := rs.SignUpIn(t, rsPrj)
	jwtBearer(rs, jag(t), mcp, nil, apptest.Basic(agentClient, agentSecret)).Expect(t, 400, map[string]any{"error": "invalid_grant"})

	// B's project signs its people in with A; the user links their identity at A.
	provider := rs.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + rsPrj + "/auth/providers", Header: rsAdmin.Bearer(),
		Body: map[string]any{"type": "oidc", "name": "Enterprise", "issuer": idpIss, "clientId": "pending", "clientSecret": "pending"}}).Expect(t, 201, nil)
	fedClient, fedSecret := register(t, idp, provider["callbackUrl"].(string))
	rs.Do(apptest.Req{Method: http.MethodPatch, Path: "/v1/projects/" + rsPrj + "/auth/providers/" + provider["id"].(string), Header: rsAdmin.Bearer(),
		Body: map[string]any{"clientId": fedClient, "clientSecret": fedSecret}}).Expect(t, 200, nil)
	linkAt(t, rs, idp, user, person, idpPrj, provider["id"].(string))

	got := jwtBearer(rs, jag(t), mcp, nil, apptest.Basic(agentClient, agentSecret)).Expect(t, 200, map[string]any{"scope": "mcp:tools"})
	if claims := rs.VerifyAccessToken(t, got["access_token"].(string), mcp); claims["sub"] != user.UserID {
		t.Fatalf("sub %v, want B's linked user %s", claims["sub"], user.UserID)
	}
}

// linkAt links user (signed in at rs) to their identity at idp, where they are person:
// the browser's way through rs's link start, idp's consent and rs's callback.
func linkAt(t *testing.T, rs, idp *apptest.App, user, person *apptest.Session, project, providerID string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	r := rs.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/identities/link/" + providerID, Header: user.Bearer()})
	start := r.Expect(t, 200, nil)["redirectTo"].(string)
	base, _ := url.Parse(rs.Base)
	jar.SetCookies(base, (&http.Response{Header: r.Header}).Cookies())
	get := func(u string) *http.Response {
		t.Helper()
		res, err := browser.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	res := get(start) // to idp's authorize
	for res.StatusCode == http.StatusFound && !strings.Contains(res.Header.Get("Location"), "request=") {
		res = get(res.Header.Get("Location"))
	}
	loc, _ := url.Parse(res.Header.Get("Location"))
	path := "/v1/oauth/authorizations/" + loc.Query().Get("request")
	h := person.Bearer()
	idpBase, _ := url.Parse(idp.Base + path)
	var cookies []string // both servers' cookies: a jar tells hosts apart, not ports
	for _, c := range jar.Cookies(idpBase) {
		cookies = append(cookies, c.Name+"="+c.Value)
	}
	h["Cookie"] = strings.Join(cookies, "; ")
	csrf := idp.Do(apptest.Req{Path: path, Header: h}).Expect(t, 200, nil)["csrfToken"]
	back := idp.Do(apptest.Req{Method: http.MethodPost, Path: path, Header: h, Body: map[string]any{"decision": "approve", "csrfToken": csrf, "projectId": project}}).
		Expect(t, 200, nil)["redirectTo"].(string)
	if res = get(back); res.StatusCode != http.StatusFound {
		t.Fatalf("rs's callback: %d", res.StatusCode)
	}
	ids := rs.Do(apptest.Req{Path: "/v1/auth-core/identities", Header: user.Bearer()}).Expect(t, 200, nil)["identities"].([]any)
	if len(ids) != 1 {
		t.Fatalf("identities %v after the link", ids)
	}
}

// The cross-app flow with stock clients (SPEC §22): oauth4webapi and jose take the ID-JAG
// from the enterprise's authcore and trade it, with a DPoP proof, at the resource's; a
// workload's token is traded there too.
func TestEnterpriseAgentWithStockClients(t *testing.T) {
	interop.Dir(t)
	st := apptest.Stores(t)[0]
	a, rs := startIdP(t, st), startApp(t, st)
	idp := a.App
	idpIss, rsIss := issuerOf(t, idp), issuerOf(t, rs)

	rsAdmin := rs.SignUp(t)
	rsPrj := rs.CreateProject(t, rsAdmin)
	mcp := "https://mcp.vendor.example/mcp"
	rs.RegisterResource(t, rsAdmin, rsPrj, mcp, []string{"mcp:tools"})
	agentClient, agentSecret := register(t, rs, "https://agent.enterprise.example/cb")
	trustIssuer(t, rs, rsAdmin, rsPrj, map[string]any{"issuer": idpIss, "kind": "enterprise", "trustEmail": true, "scopes": []string{"mcp:tools"}})
	k8s := newPlatform(t)
	trustIssuer(t, rs, rsAdmin, rsPrj, map[string]any{"issuer": k8s.URL, "kind": "workload", "audience": rsIss, "subjectPattern": "system:serviceaccount:agents:*", "scopes": []string{"mcp:tools"}})

	person := a.person(t)
	idpPrj := idp.CreateProject(t, person)
	idp.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + idpPrj + "/trust/authorization-servers", Header: person.Bearer(),
		Body: map[string]any{"issuer": rsIss, "clientId": agentClient}}).Expect(t, 201, nil)
	appID, appSecret := register(t, idp, "https://agent.enterprise.example/cb")
	idt := idToken(t, idp, person, idpPrj, appID, appSecret, "https://agent.enterprise.example/cb", "openid email")
	user := rs.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signup", Body: map[string]any{"email": person.Email, "password": "correct horse battery", "tenantId": rsPrj}}).
		Expect(t, 201, nil)["user"].(map[string]any)["id"]

	out := interop.Run(t, 60*time.Second, "enterprise-agent.mjs", "IDP_ISSUER="+idpIss, "RS_ISSUER="+rsIss, "RESOURCE="+mcp, "SCOPE=mcp:tools",
		"IDP_CLIENT_ID="+appID, "IDP_CLIENT_SECRET="+appSecret, "RS_CLIENT_ID="+agentClient, "RS_CLIENT_SECRET="+agentSecret, "ID_TOKEN="+idt,
		"WORKLOAD_TOKEN="+k8s.token(t, "system:serviceaccount:agents:runner", rsIss, nil))
	var got struct {
		Result struct {
			JAG      map[string]any
			Token    map[string]any
			Workload map[string]any
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	r := got.Result
	if r.JAG["typ"] != "oauth-id-jag+jwt" || r.JAG["issued_token_type"] != "urn:ietf:params:oauth:token-type:id-jag" || r.JAG["client_id"] != agentClient || r.JAG["sub"] != person.UserID {
		t.Fatalf("ID-JAG %v", r.JAG)
	}
	if r.Token["token_type"] != "dpop" || r.Token["bound"] != true || r.Token["sub"] != user || r.Token["client_id"] != agentClient || r.Token["scope"] != "mcp:tools" {
		t.Fatalf("token %v", r.Token)
	}
	if r.Workload["token_type"] != "Bearer" || r.Workload["scope"] != "mcp:tools" {
		t.Fatalf("workload %v", r.Workload)
	}
}

// What an ID-JAG may speak for (SPEC §22; the review's attacks): only the project whose
// consent the id_token came from, only an id_token (not an access token of the same
// keys), and an address only when it was proven and the client could read it.
func TestIDJAGSpeaksOnlyForItsProject(t *testing.T) {
	st := apptest.Stores(t)[0]
	a, rs := startIdP(t, st), startApp(t, st)
	idp := a.App
	idpIss, rsIss := issuerOf(t, idp), issuerOf(t, rs)
	rsAdmin := rs.SignUp(t)
	rsPrj := rs.CreateProject(t, rsAdmin)
	mcp := "https://mcp.vendor.example/mcp"
	rs.RegisterResource(t, rsAdmin, rsPrj, mcp, []string{"mcp:tools"})
	attackerClient, attackerSecret := register(t, rs, "https://attacker.example/cb")
	trustIssuer(t, rs, rsAdmin, rsPrj, map[string]any{"issuer": idpIss, "kind": "enterprise", "trustEmail": true, "scopes": []string{"mcp:tools"}})

	victim := a.person(t)
	victimPrj := idp.CreateProject(t, victim)
	rs.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signup", Body: map[string]any{"email": victim.Email, "password": "correct horse battery", "tenantId": rsPrj}}).Expect(t, 201, nil)
	// The attacker's project at A allows B with the attacker's client there, and makes
	// the victim a member (no consent asked of members).
	attacker := a.person(t)
	attackerPrj := idp.CreateProject(t, attacker)
	idp.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + attackerPrj + "/trust/authorization-servers", Header: attacker.Bearer(),
		Body: map[string]any{"issuer": rsIss, "clientId": attackerClient}}).Expect(t, 201, nil)
	idp.AddMember(t, attacker, attackerPrj, victim, "viewer")
	app, appSecret := register(t, idp, "https://attacker.example/cb")
	exchange := func(subject string) *apptest.Response {
		return idp.PostForm("/v1/oauth/token", url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"},
			"requested_token_type": {"urn:ietf:params:oauth:token-type:id-jag"}, "subject_token": {subject},
			"subject_token_type": {"urn:ietf:params:oauth:token-type:id_token"}, "audience": {rsIss}, "resource": {mcp}, "scope": {"mcp:tools"}},
			apptest.Basic(app, appSecret))
	}

	t.Run("the victim signed in for their own project", func(t *testing.T) {
		idt := idToken(t, idp, victim, victimPrj, app, appSecret, "https://attacker.example/cb", "openid email")
		exchange(idt).Expect(t, 400, map[string]any{"error": "invalid_target"})
	})
	t.Run("an access token is no id_token", func(t *testing.T) {
		v := oauth2.GenerateVerifier()
		code := idp.ApproveCode(t, attacker, attackerPrj, url.Values{"response_type": {"code"}, "client_id": {app}, "redirect_uri": {"https://attacker.example/cb"},
			"state": {"s"}, "code_challenge": {oauth2.S256ChallengeFromVerifier(v)}, "code_challenge_method": {"S256"}, "scope": {"openid email"}})
		got := idp.PostForm("/v1/oauth/token", url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {"https://attacker.example/cb"},
			"code_verifier": {v}}, apptest.Basic(app, appSecret)).Expect(t, 200, nil)
		exchange(got["access_token"].(string)).Expect(t, 400, map[string]any{"error": "invalid_grant"})
	})
	t.Run("no email scope, no address", func(t *testing.T) {
		idt := idToken(t, idp, attacker, attackerPrj, app, appSecret, "https://attacker.example/cb", "openid")
		jag := exchange(idt).Expect(t, 200, nil)["access_token"].(string)
		if c := apptest.ClaimsOf(t, jag); c["email"] != nil {
			t.Fatalf("the ID-JAG carries an address the client could not read: %v", c)
		}
		jwtBearer(rs, jag, mcp, nil, apptest.Basic(attackerClient, attackerSecret)).Expect(t, 400, map[string]any{"error": "invalid_grant"})
	})
	t.Run("an address never proven", func(t *testing.T) {
		// The attacker signs up at A with the victim's address at B, never proving it.
		squatter := idp.SignUp(t)
		squatterPrj := idp.CreateProject(t, squatter)
		idp.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + squatterPrj + "/trust/authorization-servers", Header: squatter.Bearer(),
			Body: map[string]any{"issuer": rsIss, "clientId": attackerClient}}).Expect(t, 201, nil)
		rs.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signup", Body: map[string]any{"email": squatter.Email, "password": "correct horse battery", "tenantId": rsPrj}}).Expect(t, 201, nil)
		idt := idToken(t, idp, squatter, squatterPrj, app, appSecret, "https://attacker.example/cb", "openid email")
		jag := exchange(idt).Expect(t, 200, nil)["access_token"].(string)
		if c := apptest.ClaimsOf(t, jag); c["email"] != nil {
			t.Fatalf("the ID-JAG carries an unproven address: %v", c)
		}
		jwtBearer(rs, jag, mcp, nil, apptest.Basic(attackerClient, attackerSecret)).Expect(t, 400, map[string]any{"error": "invalid_grant"})
	})
}
