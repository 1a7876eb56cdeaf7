package approval_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/authcore/authcore/ent/backchannelrequest"
	"github.com/authcore/authcore/internal/apptest"
)

// Every rule of the backchannel endpoint, one case each (SPEC §23, OpenID CIBA §7, §13,
// RFC 9396 §5): a refusal creates nothing and mails nobody.
func TestBackchannelRequestRules(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		// People the hint may not name: another project's, and a dashboard user.
		other := newProjectPerson(t, w)
		dashboard := w.a.SignUp(t)
		unregistered := `[{"type":"account_information","accounts":["x"]}]`
		base := func(k, v string) url.Values {
			f := url.Values{"scope": {"openid payments:write"}, "login_hint": {w.person.Email}, "binding_message": {"Pay"}, "authorization_details": {invoice}}
			if v == "\x00delete" {
				delete(f, k)
			} else if k != "" {
				f.Set(k, v)
			}
			return f
		}
		cases := []struct {
			name   string
			form   url.Values
			status int
			code   string
		}{
			{"scope without openid", base("scope", "payments:write"), 400, "invalid_scope"},
			{"no scope", base("scope", "\x00delete"), 400, "invalid_scope"},
			{"a scope the agent does not hold", base("scope", "openid payments:admin"), 400, "invalid_scope"},
			{"a scope of bad grammar", base("scope", "openid Pay!"), 400, "invalid_scope"},
			{"a scope that only begins with openid", base("scope", "openid openid:extra"), 400, "invalid_scope"},
			{"no login_hint", base("login_hint", "\x00delete"), 400, "invalid_request"},
			{"login_hint_token", base("login_hint_token", "x"), 400, "invalid_request"},
			{"id_token_hint", base("id_token_hint", "x"), 400, "invalid_request"},
			{"user_code", base("user_code", "1234"), 400, "invalid_request"},
			{"an unknown email", base("login_hint", "nobody@example.com"), 400, "unknown_user_id"},
			{"a user of another project", base("login_hint", other), 400, "unknown_user_id"},
			{"a dashboard user", base("login_hint", dashboard.Email), 400, "unknown_user_id"},
			{"a dashboard user by id", base("login_hint", dashboard.UserID), 400, "unknown_user_id"},
			{"binding_message of 101 characters", base("binding_message", strings.Repeat("b", 101)), 400, "invalid_binding_message"},
			{"binding_message with a control character", base("binding_message", "Pay\nnow"), 400, "invalid_binding_message"},
			{"binding_message with a format character", base("binding_message", "Pay \u202eevil"), 400, "invalid_binding_message"},
			{"requested_expiry 0", base("requested_expiry", "0"), 400, "invalid_request"},
			{"requested_expiry 601", base("requested_expiry", "601"), 400, "invalid_request"},
			{"requested_expiry not a number", base("requested_expiry", "ten"), 400, "invalid_request"},
			{"requested_expiry negative", base("requested_expiry", "-5"), 400, "invalid_request"},
			{"details not JSON", base("authorization_details", "[{"), 400, "invalid_authorization_details"},
			{"details not an array", base("authorization_details", `{"type":"payment_initiation"}`), 400, "invalid_authorization_details"},
			{"details empty", base("authorization_details", `[]`), 400, "invalid_authorization_details"},
			{"eleven details", base("authorization_details", "["+strings.Repeat(strings.Trim(invoice, "[]")+",", 10)+strings.Trim(invoice, "[]")+"]"), 400, "invalid_authorization_details"},
			{"a detail without a type", base("authorization_details", `[{"invoice":"INV-1"}]`), 400, "invalid_authorization_details"},
			{"a detail that is not an object", base("authorization_details", `["payment_initiation"]`), 400, "invalid_authorization_details"},
			{"a type the project did not register", base("authorization_details", unregistered), 400, "invalid_authorization_details"},
			{"a detail its schema refuses (amount as text)", base("authorization_details", strings.Replace(invoice, "123.5", `"123.5"`, 1)), 400, "invalid_authorization_details"},
			{"a detail its schema refuses (a field it does not name)", base("authorization_details", strings.Replace(invoice, `"currency"`, `"note":"x","currency"`, 1)), 400, "invalid_authorization_details"},
			{"a resource the project did not register", base("resource", "https://api.example.com/pay"), 400, "invalid_target"},
			{"scope given twice", func() url.Values { f := base("", ""); f.Add("scope", "openid"); return f }(), 400, "invalid_request"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				r := w.form(t, "/v1/oauth/bc-authorize", c.form)
				oauthError(t, r, c.status, c.code)
			})
		}
		// Client authentication, as at the token endpoint.
		noAuth := base("", "")
		noAuth.Set("client_id", w.agentID)
		oauthError(t, w.form(t, "/v1/oauth/bc-authorize", noAuth), 401, "invalid_client")
		wrong := base("", "")
		wrong.Set("client_id", w.agentID)
		wrong.Set("client_secret", "ac_ai_0000000000000000000000000000000000000000")
		oauthError(t, w.form(t, "/v1/oauth/bc-authorize", wrong), 401, "invalid_client")
		_, otherAgent := w.mintAgent(t, []string{"payments:write"})
		mismatched := base("", "")
		mismatched.Set("client_id", w.agentID)
		mismatched.Set("client_secret", otherAgent)
		oauthError(t, w.form(t, "/v1/oauth/bc-authorize", mismatched), 401, "invalid_client")
		w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/bc-authorize", Body: `{"scope":"openid"}`,
			Header: map[string]string{"Content-Type": "application/json"}}).Expect(t, 400, map[string]any{"error": "invalid_request"})
		w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/bc-authorize"}).Expect(t, 400, map[string]any{"error": "invalid_request"})

		// A revoked agent token asks nothing any more.
		revokedID, revoked := w.mintAgent(t, []string{"payments:write"})
		w.a.Do(apptest.Req{Method: http.MethodDelete, Path: "/v1/auth-core/projects/" + w.project + "/ai/agents/" + revokedID, Header: w.admin.Bearer()}).Expect(t, 200, nil)
		gone := base("", "")
		gone.Set("client_id", revokedID)
		gone.Set("client_secret", revoked)
		oauthError(t, w.form(t, "/v1/oauth/bc-authorize", gone), 401, "invalid_client")

		if n := w.a.Ent.BackchannelRequest.Query().Where(backchannelrequest.ProjectID(w.project)).CountX(t.Context()); n != 0 {
			t.Fatalf("%d requests stored after refusals", n)
		}
		if m := w.inbox.Mails(); len(m) != 0 {
			t.Fatalf("%d mails after refusals", len(m))
		}

		// Boundaries that pass: 100 characters, 600 seconds, the user's id as the hint.
		w.ask(t, url.Values{"binding_message": {strings.Repeat("b", 100)}, "requested_expiry": {"600"}, "login_hint": {w.person.UserID}})
		// An auth badge's client asks too, by client_secret_basic.
		cl := w.authClient(t)
		r := w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/bc-authorize",
			Body:   url.Values{"scope": {"openid"}, "login_hint": {w.person.Email}, "authorization_details": {invoice}}.Encode(),
			Header: map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Authorization": basic(cl[0], cl[1])}})
		r.Expect(t, 200, map[string]any{"expires_in": 300})
		// At most 10 pending per client and person.
		for range 9 {
			w.ask(t, nil)
		}
		oauthError(t, w.form(t, "/v1/oauth/bc-authorize", base("", "")), 403, "access_denied")
	})
}

// newProjectPerson is a user of a second project, by email.
func newProjectPerson(t testing.TB, w *world) string {
	t.Helper()
	prj := w.a.CreateProject(t, w.admin)
	return w.a.SignUpIn(t, prj).Email
}

func basic(id, secret string) string {
	r := http.Request{Header: http.Header{}}
	r.SetBasicAuth(url.QueryEscape(id), url.QueryEscape(secret))
	return r.Header.Get("Authorization")
}

// Polling (CIBA §11): pending until answered, slow_down sooner than the interval (which
// grows by 5 s), access_denied after a denial, expired_token after the expiry, and
// invalid_grant for anything not the client's own live request.
func TestPollingRules(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		id := w.ask(t, url.Values{"requested_expiry": {"120"}})
		oauthError(t, w.poll(t, id), 400, "slow_down") // the first poll too waits the interval: 1 + 5 seconds now
		w.a.Clock.Advance(6 * time.Second)
		oauthError(t, w.poll(t, id), 400, "authorization_pending")
		w.a.Clock.Advance(6 * time.Second)
		oauthError(t, w.poll(t, id), 400, "authorization_pending")
		w.a.Clock.Advance(5 * time.Second)
		oauthError(t, w.poll(t, id), 400, "slow_down") // 11 seconds now
		w.a.Clock.Advance(10 * time.Second)
		oauthError(t, w.poll(t, id), 400, "slow_down") // 16
		w.a.Clock.Advance(16 * time.Second)
		oauthError(t, w.poll(t, id), 400, "authorization_pending")
		// Another client's request, a made-up one, one not of our format.
		otherID, otherSecret := w.mintAgent(t, []string{"payments:write"})
		r := w.form(t, "/v1/oauth/token", url.Values{"grant_type": {"urn:openid:params:grant-type:ciba"}, "auth_req_id": {id},
			"client_id": {otherID}, "client_secret": {otherSecret}})
		oauthError(t, r, 400, "invalid_grant")
		oauthError(t, w.poll(t, "ac_ciba_0000000000000000000000000000000000000000"), 400, "invalid_grant")
		tampered := id[:len(id)-1] + "x"
		if tampered == id { // one id in 62 ends in x
			tampered = id[:len(id)-1] + "y"
		}
		oauthError(t, w.poll(t, tampered), 400, "invalid_grant")
		oauthError(t, w.poll(t, ""), 400, "invalid_request")
		// Details in the token request: the approved ones are all there is.
		r = w.form(t, "/v1/oauth/token", url.Values{"grant_type": {"urn:openid:params:grant-type:ciba"}, "auth_req_id": {id},
			"authorization_details": {invoice}})
		oauthError(t, r, 400, "invalid_authorization_details")
		// Without client authentication.
		r = w.form(t, "/v1/oauth/token", url.Values{"grant_type": {"urn:openid:params:grant-type:ciba"}, "auth_req_id": {id}, "client_id": {w.agentID}})
		oauthError(t, r, 401, "invalid_client")

		// Denied: access_denied, and no approval after it.
		a := w.pending(t)
		w.deny(t, a["id"].(string)).Expect(t, 200, map[string]any{"status": "denied"})
		w.a.Clock.Advance(20 * time.Second)
		oauthError(t, w.poll(t, id), 400, "access_denied")
		w.approve(t, a).Expect(t, 409, map[string]any{"code": "already_decided"})
		w.deny(t, a["id"].(string)).Expect(t, 409, map[string]any{"code": "already_decided"})

		// Expired: expired_token, and the person can no longer approve it.
		late := w.ask(t, url.Values{"requested_expiry": {"30"}})
		la := w.pending(t)
		w.a.Clock.Advance(30 * time.Second)
		oauthError(t, w.poll(t, late), 400, "expired_token")
		w.approve(t, la).Expect(t, 409, map[string]any{"code": "request_expired"})
		if got := w.a.Do(apptest.Req{Path: "/v1/auth-core/approvals", Header: w.person.Bearer()}).Expect(t, 200, nil); len(got["approvals"].([]any)) != 0 {
			t.Fatalf("expired requests listed: %v", got)
		}
		w.a.Do(apptest.Req{Path: "/v1/auth-core/approvals/" + la["id"].(string), Header: w.person.Bearer()}).Expect(t, 200, map[string]any{"status": "expired"})

		// The client withdraws a request by RFC 7009: it is denied.
		gone := w.ask(t, nil)
		ga := w.pending(t)
		w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/revoke", Body: url.Values{"token": {gone}}.Encode(),
			Header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}}).Expect(t, 200, nil)
		w.a.Clock.Advance(2 * time.Second)
		oauthError(t, w.poll(t, gone), 400, "access_denied")
		w.approve(t, ga).Expect(t, 409, map[string]any{"code": "already_decided"})
	})
}

// Approving needs an authentication within 5 minutes, whether the person has a second
// factor or not (SPEC §23); nobody decides another person's request.
func TestApprovingNeedsAFreshAuthentication(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		id := w.ask(t, url.Values{"requested_expiry": {"600"}})
		a := w.pending(t)
		w.a.Clock.Advance(5*time.Minute + time.Second)
		// Keep the session's access token fresh: the refresh keeps the old authentication time.
		w.person = w.refresh(t, w.person)
		w.approve(t, a).Expect(t, 403, map[string]any{"code": "reauthentication_required"})
		// Another person of the project: not theirs to see or decide.
		stranger := w.a.SignUpIn(t, w.project)
		w.a.Do(apptest.Req{Path: "/v1/auth-core/approvals/" + a["id"].(string), Header: stranger.Bearer()}).Expect(t, 404, nil)
		w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/approvals/" + a["id"].(string) + "/approve",
			Body: map[string]any{"detailsDigest": a["detailsDigest"]}, Header: stranger.Bearer()}).Expect(t, 404, nil)
		w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/approvals/" + a["id"].(string) + "/deny", Header: stranger.Bearer()}).Expect(t, 404, nil)
		w.a.Do(apptest.Req{Path: "/v1/auth-core/approvals/" + a["id"].(string)}).Expect(t, 401, nil)
		// Signing in again is a fresh authentication.
		w.person = w.signIn(t, w.person)
		w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/approvals/" + a["id"].(string) + "/approve", Body: `{}`, Header: w.person.Bearer()}).
			Expect(t, 400, map[string]any{"code": "validation_failed"})
		w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/approvals/" + a["id"].(string) + "/approve", Header: w.person.Bearer()}).
			Expect(t, 400, map[string]any{"code": "validation_failed"})
		w.approve(t, a).Expect(t, 200, map[string]any{"status": "approved"})
		w.a.Clock.Advance(2 * time.Second)
		w.poll(t, id).Expect(t, 200, nil)
	})
}

func (w *world) signIn(t testing.TB, s *apptest.Session) *apptest.Session {
	t.Helper()
	got := w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signin",
		Body: map[string]any{"email": s.Email, "password": s.Password, "tenantId": w.project}}).Expect(t, 200, nil)
	out := *s
	out.AccessToken = got["session"].(map[string]any)["accessToken"].(string)
	return &out
}

func (w *world) refresh(t testing.TB, s *apptest.Session) *apptest.Session {
	t.Helper()
	got := w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/session/refresh",
		Body: map[string]any{"refreshToken": s.RefreshToken}}).Expect(t, 200, nil)
	out := *s
	out.AccessToken = got["session"].(map[string]any)["accessToken"].(string)
	out.RefreshToken = got["session"].(map[string]any)["refreshToken"].(string)
	return &out
}

// Tokens never issue for details other than those the person saw: a digest that is not
// theirs, a type whose schema changed before the approval, or after it (SPEC §23).
func TestChangedDetailsNeverIssue(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		id := w.ask(t, nil)
		a := w.pending(t)
		tampered := map[string]any{"id": a["id"], "detailsDigest": strings.Repeat("0", 64)}
		w.approve(t, tampered).Expect(t, 409, map[string]any{"code": "details_changed"})

		// The schema changes after the approval: the approved request never gives a token.
		w.approve(t, a).Expect(t, 200, map[string]any{"status": "approved"})
		looser := strings.Replace(paymentSchema, `"exclusiveMinimum":0`, `"minimum":0`, 1)
		w.a.Do(apptest.Req{Method: http.MethodPut, Path: "/v1/projects/" + w.project + "/oauth/authorization-details/payment_initiation",
			Body: map[string]any{"name": "Pay an invoice", "schema": json.RawMessage(looser)}, Header: w.admin.Bearer()}).Expect(t, 200, nil)
		w.a.Clock.Advance(2 * time.Second)
		oauthError(t, w.poll(t, id), 400, "access_denied")
		w.a.Clock.Advance(2 * time.Second)
		oauthError(t, w.poll(t, id), 400, "access_denied")

		// The schema changes before the approval: the person is told, and cannot approve.
		second := w.ask(t, nil)
		b := w.pending(t)
		w.a.Do(apptest.Req{Method: http.MethodPut, Path: "/v1/projects/" + w.project + "/oauth/authorization-details/payment_initiation",
			Body: map[string]any{"name": "Pay an invoice", "schema": json.RawMessage(paymentSchema)}, Header: w.admin.Bearer()}).Expect(t, 200, nil)
		now := w.a.Do(apptest.Req{Path: "/v1/auth-core/approvals/" + b["id"].(string), Header: w.person.Bearer()}).Expect(t, 200, nil)
		if now["types"].([]any)[0].(map[string]any)["changed"] != true {
			t.Fatalf("the change is not shown: %v", now)
		}
		w.approve(t, b).Expect(t, 409, map[string]any{"code": "details_changed"})
		// Removed types likewise.
		w.a.Do(apptest.Req{Method: http.MethodDelete, Path: "/v1/projects/" + w.project + "/oauth/authorization-details/payment_initiation",
			Header: w.admin.Bearer()}).Expect(t, 200, map[string]any{"ok": true})
		w.approve(t, b).Expect(t, 409, map[string]any{"code": "details_changed"})
		w.a.Clock.Advance(2 * time.Second)
		oauthError(t, w.poll(t, second), 400, "authorization_pending")
	})
}

// RFC 6749 §2.3 at the backchannel endpoint and its grant, read by the same parser as the
// token endpoint: an agent token or an auth badge's client that uses two methods at once
// is refused as invalid_request, whichever two; each method alone is accepted.
func TestOneClientAuthMethodAtTheBackchannel(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		cl := w.authClient(t)
		ask := url.Values{"scope": {"openid"}, "login_hint": {w.person.Email}, "authorization_details": {invoice}}
		post := func(path string, form url.Values, authorization string) *apptest.Response {
			h := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
			if authorization != "" {
				h["Authorization"] = authorization
			}
			return w.a.Do(apptest.Req{Method: http.MethodPost, Path: path, Body: form.Encode(), Header: h})
		}
		with := func(v url.Values, kv ...string) url.Values {
			out := cloneValues(v)
			for i := 0; i < len(kv); i += 2 {
				out.Set(kv[i], kv[i+1])
			}
			return out
		}
		const jwtType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
		for name, c := range map[string]struct {
			form          url.Values
			authorization string
		}{
			"an agent by basic and post":      {with(ask, "client_id", w.agentID, "client_secret", w.agent), basic(w.agentID, w.agent)},
			"an agent by basic and assertion": {with(ask, "client_assertion_type", jwtType, "client_assertion", "a.b.c"), basic(w.agentID, w.agent)},
			"an agent by post and assertion":  {with(ask, "client_id", w.agentID, "client_secret", w.agent, "client_assertion_type", jwtType, "client_assertion", "a.b.c"), ""},
			"a client by basic and post":      {with(ask, "client_id", cl[0], "client_secret", cl[1]), basic(cl[0], cl[1])},
			"a client by post and assertion":  {with(ask, "client_id", cl[0], "client_secret", cl[1], "client_assertion_type", jwtType, "client_assertion", "a.b.c"), ""},
		} {
			t.Run(name, func(t *testing.T) {
				oauthError(t, post("/v1/oauth/bc-authorize", c.form, c.authorization), 400, "invalid_request")
			})
		}
		// Each method alone: the agent by basic and by post, the client by basic and by post.
		for name, c := range map[string]struct {
			form          url.Values
			authorization string
		}{
			"an agent by basic": {ask, basic(w.agentID, w.agent)},
			"an agent by post":  {with(ask, "client_id", w.agentID, "client_secret", w.agent), ""},
			"a client by basic": {ask, basic(cl[0], cl[1])},
			"a client by post":  {with(ask, "client_id", cl[0], "client_secret", cl[1]), ""},
		} {
			t.Run(name, func(t *testing.T) {
				post("/v1/oauth/bc-authorize", c.form, c.authorization).Expect(t, 200, nil)
			})
		}
		// The grant at the token endpoint: two methods refused; basic alone is the agent,
		// whose first poll comes too soon.
		id := w.ask(t, nil)
		poll := url.Values{"grant_type": {"urn:openid:params:grant-type:ciba"}, "auth_req_id": {id}}
		oauthError(t, post("/v1/oauth/token", with(poll, "client_id", w.agentID, "client_secret", w.agent), basic(w.agentID, w.agent)), 400, "invalid_request")
		oauthError(t, post("/v1/oauth/token", with(poll, "client_assertion_type", jwtType, "client_assertion", "a.b.c"), basic(w.agentID, w.agent)), 400, "invalid_request")
		oauthError(t, post("/v1/oauth/token", poll, basic(w.agentID, w.agent)), 400, "slow_down")
	})
}
