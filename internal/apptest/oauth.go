package apptest

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"golang.org/x/oauth2"
)

// AuthClient is an auth badge's OAuth client, as the create answer gave it.
type AuthClient struct {
	ID, Secret, TokenURL, BadgeID, ProjectID string
}

// MintAuthClient mints an auth badge in project as admin; extra adds to the request body.
func (a *App) MintAuthClient(t testing.TB, admin *Session, project string, extra map[string]any) AuthClient {
	t.Helper()
	body := map[string]any{"name": "m2m", "product": "auth"}
	for k, v := range extra {
		body[k] = v
	}
	got := a.Do(Req{Method: http.MethodPost, Path: "/v1/projects/" + project + "/service-badges", Body: body, Header: admin.Bearer()}).Expect(t, 201, map[string]any{"s3": nil})
	au := got["auth"].(map[string]any)
	return AuthClient{ID: au["clientId"].(string), Secret: au["clientSecret"].(string), TokenURL: au["tokenUrl"].(string),
		BadgeID: got["badge"].(map[string]any)["id"].(string), ProjectID: project}
}

// PostForm posts form (application/x-www-form-urlencoded) to path with header.
func (a *App) PostForm(path string, form url.Values, header map[string]string) *Response {
	h := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	for k, v := range header {
		h[k] = v
	}
	return a.Do(Req{Method: http.MethodPost, Path: path, Body: form.Encode(), Header: h})
}

// Basic is client_secret_basic for id and secret (RFC 6749 §2.3.1: each form-encoded).
func Basic(id, secret string) map[string]string {
	return map[string]string{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(id)+":"+url.QueryEscape(secret)))}
}

// VerifyAccessToken checks an access token the way a resource server would: against the
// JWKS fetched over HTTP, with go-jose, for audience; it returns every claim.
func (a *App) VerifyAccessToken(t testing.TB, token, audience string) map[string]any {
	t.Helper()
	res, err := http.Get(a.Base + "/.well-known/jwks.json")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var set jose.JSONWebKeySet
	if err := json.NewDecoder(res.Body).Decode(&set); err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.ParseSigned(token, []jose.SignatureAlgorithm{jose.EdDSA})
	if err != nil {
		t.Fatal(err)
	}
	keys := set.Key(tok.Headers[0].KeyID)
	if len(keys) != 1 {
		t.Fatalf("kid %q not in the JWKS", tok.Headers[0].KeyID)
	}
	// RFC 9068: an OAuth access token says so in its header, so no verifier can take it
	// for another kind of JWT signed by the same keys.
	if typ := tok.Headers[0].ExtraHeaders["typ"]; typ != "at+jwt" {
		t.Fatalf("typ %v, want at+jwt", typ)
	}
	var std jwt.Claims
	var all map[string]any
	if err := tok.Claims(keys[0].Key, &std, &all); err != nil {
		t.Fatalf("signature does not verify: %v", err)
	}
	// iss is the server's own URL; nbf = iat, so a verifier with clock skew accepts a
	// fresh token.
	if std.NotBefore == nil || std.IssuedAt == nil || *std.NotBefore != *std.IssuedAt {
		t.Fatalf("nbf %v, iat %v", std.NotBefore, std.IssuedAt)
	}
	if err := std.ValidateWithLeeway(jwt.Expected{Issuer: a.Base, AnyAudience: jwt.Audience{audience}, Time: a.Clock.Now()}, 0); err != nil {
		t.Fatal(err)
	}
	return all
}

// ClaimsOf reads a JWT's claims without checking it.
func ClaimsOf(t testing.TB, token string) map[string]any {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", token)
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	var c map[string]any
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// ConnectedApp is an application a person connected through the OAuth authorization code
// flow (SPEC §16): its registered client, the code it spent and the tokens it holds.
type ConnectedApp struct {
	ClientID, Code, CSRF               string
	AccessToken, RefreshToken, GrantID string
}

// ApproveCode sends admin's browser to the authorization endpoint with q (a code flow's
// parameters) and approves the request on the consent page for project, as the console
// does; it returns the code the redirect carries.
func (a *App) ApproveCode(t testing.TB, admin *Session, project string, q url.Values) string {
	t.Helper()
	code, _ := a.approve(t, admin, project, q)
	return code
}

func (a *App) approve(t testing.TB, admin *Session, project string, q url.Values) (code, csrf string) {
	t.Helper()
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := noFollow.Get(a.Base + "/oauth/authorize?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	loc, err := url.Parse(res.Header.Get("Location"))
	if err != nil || loc.Query().Get("request") == "" {
		t.Fatalf("authorize answered %d, Location %q", res.StatusCode, res.Header.Get("Location"))
	}
	path := "/v1/oauth/authorizations/" + loc.Query().Get("request")
	// The consent page runs in the browser that opened the request: it carries the mark.
	browser := admin.Bearer()
	for _, c := range res.Cookies() {
		browser["Cookie"] = c.Name + "=" + c.Value
	}
	csrf = a.Do(Req{Path: path, Header: browser}).Expect(t, 200, nil)["csrfToken"].(string)
	to := a.Do(Req{Method: http.MethodPost, Path: path, Header: browser, Body: map[string]any{"decision": "approve", "csrfToken": csrf, "projectId": project}}).
		Expect(t, 200, nil)["redirectTo"].(string)
	back, _ := url.Parse(to)
	return back.Query().Get("code"), csrf
}

// ConnectApp runs the authorization code flow through the API as a host and its person
// would, without a browser: register a public client, authorize (for resource when not
// ""), approve as admin for project, redeem the code with its PKCE verifier.
func (a *App) ConnectApp(t testing.TB, admin *Session, project, resource string) ConnectedApp {
	t.Helper()
	const redirect = "http://127.0.0.1/callback"
	var app ConnectedApp
	app.ClientID = a.Do(Req{Method: http.MethodPost, Path: "/v1/oauth/register", Body: map[string]any{"client_name": "app", "redirect_uris": []string{redirect}}}).
		Expect(t, 201, nil)["client_id"].(string)
	verifier := oauth2.GenerateVerifier()
	q := url.Values{"response_type": {"code"}, "client_id": {app.ClientID}, "redirect_uri": {redirect}, "state": {"s"},
		"code_challenge": {oauth2.S256ChallengeFromVerifier(verifier)}, "code_challenge_method": {"S256"}}
	if resource != "" {
		q.Set("resource", resource)
	}
	app.Code, app.CSRF = a.approve(t, admin, project, q)
	tok := a.PostForm("/v1/oauth/token", url.Values{"grant_type": {"authorization_code"}, "client_id": {app.ClientID}, "code": {app.Code},
		"redirect_uri": {redirect}, "code_verifier": {verifier}}, nil).Expect(t, 200, nil)
	app.AccessToken, app.RefreshToken = tok["access_token"].(string), tok["refresh_token"].(string)
	app.GrantID, _ = ClaimsOf(t, app.AccessToken)["grant_id"].(string)
	return app
}
