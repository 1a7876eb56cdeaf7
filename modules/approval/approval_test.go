package approval_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/authcore/authcore/internal/apptest"
)

func base64URL(s string) ([]byte, error) { return base64.RawURLEncoding.DecodeString(s) }

// An agent asks to pay an invoice; the person sees exactly that, approves it, and the
// token the agent then gets carries exactly the approved details (SPEC §23).
func TestApprovalGivesATokenWithExactlyTheApprovedDetails(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		t.Cleanup(func() {
			if t.Failed() {
				t.Log(w.a.Logs.String())
			}
		})
		meta := w.a.Do(apptest.Req{Path: "/.well-known/openid-configuration"}).Expect(t, 200, nil)
		if meta["backchannel_authentication_endpoint"] != w.a.Config.PublicURL+"/v1/oauth/bc-authorize" ||
			!strings.Contains(strings.Join(asStrings(meta["grant_types_supported"]), " "), "urn:openid:params:grant-type:ciba") {
			t.Fatalf("metadata: %v", meta)
		}
		started := w.form(t, "/v1/oauth/bc-authorize", url.Values{"scope": {"openid payments:write"}, "login_hint": {w.person.Email},
			"binding_message": {"Pay INV-1042"}, "authorization_details": {invoice}, "requested_expiry": {"120"}}).
			Expect(t, 200, map[string]any{"expires_in": 120, "interval": 1})
		authReq := started["auth_req_id"].(string)

		// The person is told by mail, with a link to the request on their console.
		mails := w.inbox.Wait(t, 1)
		a := w.pending(t)
		if m := mails[0]; m.To != w.person.Email || !strings.Contains(m.Text, "/console?tenant="+w.project+"#/approvals?request="+a["id"].(string)) ||
			!strings.Contains(m.Text, `Binding message: "Pay INV-1042"`) || !strings.Contains(m.Text, `Agent: "billing-bot"`) {
			t.Fatalf("mail: %+v", m)
		}
		if a["bindingMessage"] != "Pay INV-1042" || a["client"].(map[string]any)["name"] != "billing-bot" || a["status"] != "pending" {
			t.Fatalf("approval: %v", a)
		}
		if types := a["types"].([]any); len(types) != 1 || types[0].(map[string]any)["name"] != "Pay an invoice" || types[0].(map[string]any)["changed"] != false {
			t.Fatalf("types: %v", a["types"])
		}

		w.a.Clock.Advance(time.Second)
		oauthError(t, w.poll(t, authReq), 400, "authorization_pending")
		w.approve(t, a).Expect(t, 200, map[string]any{"status": "approved"})
		w.a.Clock.Advance(time.Second)
		tok := w.poll(t, authReq).Expect(t, 200, map[string]any{"token_type": "Bearer", "scope": "openid payments:write"})
		if !jsonEqual(t, tok["authorization_details"], invoice) {
			t.Fatalf("answer's details: %v", tok["authorization_details"])
		}
		c := claims(t, tok["access_token"].(string))
		if !jsonEqual(t, c["authorization_details"], invoice) || c["sub"] != w.person.UserID || c["client_id"] != w.agentID || c["scope"] != "payments:write" {
			t.Fatalf("access token claims: %v", c)
		}
		id := claims(t, tok["id_token"].(string))
		if id["sub"] != w.person.UserID || id["aud"] != w.agentID || id["auth_time"] == nil {
			t.Fatalf("id_token claims: %v", id)
		}
		// Its resource servers read the details by introspection too (RFC 9396 §9.2).
		rs := w.authClient(t)
		in := w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/introspect", Body: url.Values{"token": {tok["access_token"].(string)},
			"client_id": {rs[0]}, "client_secret": {rs[1]}}.Encode(), Header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}}).
			Expect(t, 200, map[string]any{"active": true, "sub": w.person.UserID})
		if !jsonEqual(t, in["authorization_details"], invoice) {
			t.Fatalf("introspection: %v", in)
		}
		// One token per approval: the auth_req_id is spent.
		w.a.Clock.Advance(time.Second)
		oauthError(t, w.poll(t, authReq), 400, "invalid_grant")
		w.a.Do(apptest.Req{Path: "/v1/auth-core/approvals/" + a["id"].(string), Header: w.person.Bearer()}).Expect(t, 200, map[string]any{"status": "issued"})

		// The audit trail and the webhook events name each step.
		trail := w.a.Do(apptest.Req{Path: "/v1/projects/" + w.project + "/audit?limit=20", Header: w.admin.Bearer()}).Expect(t, 200, nil)
		var actions []string
		byAction := map[string]map[string]any{}
		for _, e := range trail["events"].([]any) {
			actions = append(actions, e.(map[string]any)["action"].(string))
			byAction[e.(map[string]any)["action"].(string)] = e.(map[string]any)
		}
		for _, want := range []string{"oauth.backchannel_request", "oauth.backchannel_approve", "oauth.backchannel_token"} {
			if !strings.Contains(strings.Join(actions, " "), want) {
				t.Errorf("audit lacks %s: %v", want, actions)
			}
		}
		// Each names its actor (SPEC §28): the agent asks, the person approves, and the
		// agent's token is the agent acting for the person (act, as RFC 8693).
		for action, want := range map[string]map[string]any{
			"oauth.backchannel_request": {"actorType": "agent_token", "actorId": w.agentID, "act": nil},
			"oauth.backchannel_approve": {"actorType": "user", "actorId": w.person.UserID, "act": nil},
			"oauth.backchannel_token": {"actorType": "agent_token", "actorId": w.agentID,
				"act": map[string]any{"sub": w.person.UserID, "act": map[string]any{"sub": w.agentID}}},
		} {
			e := byAction[action]
			for k, v := range want {
				if fmt.Sprint(e[k]) != fmt.Sprint(v) {
					t.Errorf("%s: %s = %v, want %v", action, k, e[k], v)
				}
			}
			if id, _ := e["requestId"].(string); id == "" {
				t.Errorf("%s has no request id: %v", action, e)
			}
		}
	})
}

// authClient mints an auth badge and returns its client id and secret.
func (w *world) authClient(t testing.TB) [2]string {
	t.Helper()
	got := w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + w.project + "/service-badges",
		Body: map[string]any{"name": "api", "product": "auth", "role": "developer"}, Header: w.admin.Bearer()}).Expect(t, 201, nil)
	a := got["auth"].(map[string]any)
	return [2]string{a["clientId"].(string), a["clientSecret"].(string)}
}

func asStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// jsonEqual compares a decoded JSON value with JSON text.
func jsonEqual(t testing.TB, got any, want string) bool {
	t.Helper()
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(got)
	b, _ := json.Marshal(w)
	return string(a) == string(b)
}
