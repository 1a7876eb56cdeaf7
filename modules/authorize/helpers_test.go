package authorize_test

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"golang.org/x/oauth2"

	"github.com/authcore/authcore/internal/apptest"
)

// noFollow is an HTTP client that shows redirects instead of following them, as a test of
// where the authorization endpoint sends a browser must.
var noFollow = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// flow is one authorization request of a public client, with its PKCE pair.
type flow struct {
	clientID, redirect, state string
	verifier, challenge       string
	extra                     url.Values
}

func newFlow(clientID, redirect string) *flow {
	v := oauth2.GenerateVerifier()
	return &flow{clientID: clientID, redirect: redirect, state: "st-" + v[:8], verifier: v, challenge: oauth2.S256ChallengeFromVerifier(v), extra: url.Values{}}
}

func (f *flow) query() url.Values {
	q := url.Values{"response_type": {"code"}, "client_id": {f.clientID}, "redirect_uri": {f.redirect}, "state": {f.state},
		"code_challenge": {f.challenge}, "code_challenge_method": {"S256"}}
	for k, v := range f.extra {
		q[k] = v
	}
	return q
}

// authorize sends the browser's GET /oauth/authorize and returns the answer, unfollowed.
func authorize(t testing.TB, a *apptest.App, q url.Values) *http.Response {
	t.Helper()
	res, err := noFollow.Get(a.Base + "/oauth/authorize?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res
}

// requestOf is the pending request a good authorization request was parked as. The
// browser mark it set is kept, as the browser that opened it keeps its cookie.
func requestOf(t *testing.T, a *apptest.App, f *flow) string {
	t.Helper()
	res := authorize(t, a, f.query())
	loc, _ := url.Parse(res.Header.Get("Location"))
	if res.StatusCode != http.StatusFound || loc == nil || loc.Path != "/console/authorize" || !strings.HasPrefix(loc.Query().Get("request"), "azr_") {
		t.Fatalf("authorize answered %d, Location %q", res.StatusCode, res.Header.Get("Location"))
	}
	id := loc.Query().Get("request")
	for _, c := range res.Cookies() {
		if c.Name == "ac_authz" {
			marks.Store(id, c.Name+"="+c.Value)
		}
	}
	return id
}

// marks are the browser marks of parked requests, by request id.
var marks sync.Map

// opener is s's headers from the browser that opened request id.
func opener(s *apptest.Session, id string) map[string]string {
	h := s.Bearer()
	if m, ok := marks.Load(id); ok {
		h["Cookie"] = m.(string)
	}
	return h
}

// consentOf is the consent page's view of request id for s, from the browser that opened it.
func consentOf(a *apptest.App, s *apptest.Session, id string) *apptest.Response {
	return a.Do(apptest.Req{Path: "/v1/oauth/authorizations/" + id, Header: opener(s, id)})
}

// decideAs posts s's decision on request id from the browser that opened it.
func decideAs(a *apptest.App, s *apptest.Session, id string, body any) *apptest.Response {
	return a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/authorizations/" + id, Header: opener(s, id), Body: body})
}

// backQuery is the query of where the answer sends the browser back to the client; it
// fails unless that is f's redirect URI.
func backQuery(t *testing.T, f *flow, location string) url.Values {
	t.Helper()
	u, err := url.Parse(location)
	if err != nil || !strings.HasPrefix(location, f.redirect) {
		t.Fatalf("sent to %q, not back to %s", location, f.redirect)
	}
	return u.Query()
}

// approve lets s approve f's request as the consent page does, and returns the code.
func approve(t *testing.T, a *apptest.App, s *apptest.Session, f *flow) string {
	t.Helper()
	id := requestOf(t, a, f)
	c := consentOf(a, s, id).Expect(t, 200, map[string]any{"canApprove": true})
	got := decideAs(a, s, id, map[string]any{"decision": "approve", "csrfToken": c["csrfToken"]}).Expect(t, 200, nil)
	q := backQuery(t, f, got["redirectTo"].(string))
	if q.Get("state") != f.state || q.Get("iss") == "" || q.Get("code") == "" {
		t.Fatalf("redirect back %v", q)
	}
	return q.Get("code")
}

// redeem trades a code at the token endpoint.
func redeem(a *apptest.App, f *flow, code string, more url.Values) *apptest.Response {
	form := url.Values{"grant_type": {"authorization_code"}, "client_id": {f.clientID}, "code": {code}, "redirect_uri": {f.redirect}, "code_verifier": {f.verifier}}
	for k, v := range more {
		form[k] = v
	}
	return a.PostForm("/v1/oauth/token", form, nil)
}

// register registers a public client for redirect.
func register(t *testing.T, a *apptest.App, redirect string) string {
	t.Helper()
	got := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/register", Body: map[string]any{
		"client_name": "Test Host", "redirect_uris": []string{redirect}}}).Expect(t, 201, map[string]any{"token_endpoint_auth_method": "none"})
	return got["client_id"].(string)
}
