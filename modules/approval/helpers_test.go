package approval_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/internal/browser"
	"github.com/authcore/authcore/internal/interop"
	"github.com/authcore/authcore/internal/testkit"
	"github.com/authcore/authcore/platform/config"
)

func TestMain(m *testing.M) { apptest.Main(m, browser.Stop, interop.StopUpstream) }

// paymentSchema is the JSON Schema of the type the tests' project registers: an invoice
// to pay, RFC 9396's own example shape.
const paymentSchema = `{"type":"object","required":["type","invoice","amount","currency"],"properties":{
 "type":{"const":"payment_initiation"},
 "invoice":{"type":"string","title":"Invoice","pattern":"^INV-[0-9]+$"},
 "amount":{"type":"number","title":"Amount","exclusiveMinimum":0},
 "currency":{"type":"string","title":"Currency","enum":["EUR","USD"]},
 "creditor":{"type":"object","title":"Creditor","properties":{"name":{"type":"string","title":"Name"},"iban":{"type":"string","title":"IBAN"}}}
},"additionalProperties":false}`

// invoice is one detail of that type.
const invoice = `[{"type":"payment_initiation","invoice":"INV-1042","amount":123.5,"currency":"EUR","creditor":{"name":"Acme GmbH","iban":"DE89370400440532013000"}}]`

// world is one authcore with a project whose admin registered the payment type, an agent
// token of the project, one of its people, and a mail inbox.
type world struct {
	a       *apptest.App
	admin   *apptest.Session
	project string
	person  *apptest.Session
	agentID string
	agent   string // the agent token's secret
	inbox   *testkit.Inbox
}

func newWorld(t testing.TB, st apptest.Store, opts ...apptest.Option) *world {
	t.Helper()
	w := &world{inbox: testkit.StartInbox(t)}
	w.a = apptest.Start(t, st, append([]apptest.Option{apptest.WithConfig(func(c *config.Config) {
		c.WebhookAllowHTTP = true // pings to the tests' own receivers, on loopback
		c.SMTPURL = w.inbox.URL
		c.BackchannelInterval = time.Second
	})}, opts...)...)
	w.admin = w.a.SignUp(t)
	w.project = w.a.CreateProject(t, w.admin)
	w.registerType(t, "payment_initiation", paymentSchema)
	w.person = w.a.SignUpIn(t, w.project)
	w.agentID, w.agent = w.mintAgent(t, []string{"payments:write"})
	return w
}

func (w *world) registerType(t testing.TB, typ, schema string) {
	t.Helper()
	w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + w.project + "/oauth/authorization-details",
		Body: map[string]any{"type": typ, "name": "Pay an invoice", "schema": json.RawMessage(schema)}, Header: w.admin.Bearer()}).Expect(t, 201, nil)
}

func (w *world) mintAgent(t testing.TB, scopes []string) (id, secret string) {
	t.Helper()
	got := w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/projects/" + w.project + "/ai/agents",
		Body: map[string]any{"agentName": "billing-bot", "scopes": scopes}, Header: w.admin.Bearer()}).Expect(t, 200, nil)
	return got["agent"].(map[string]any)["id"].(string), got["plaintext"].(string)
}

// form posts a form to path with the agent's credentials (client_secret_post) added.
func (w *world) form(t testing.TB, path string, v url.Values) *apptest.Response {
	t.Helper()
	v = cloneValues(v)
	if _, given := v["client_id"]; !given {
		v.Set("client_id", w.agentID)
		v.Set("client_secret", w.agent)
	}
	return w.a.Do(apptest.Req{Method: http.MethodPost, Path: path, Body: v.Encode(),
		Header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}})
}

func cloneValues(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

// ask starts a request for the world's person to pay the invoice; extra overrides.
func (w *world) ask(t testing.TB, extra url.Values) string {
	t.Helper()
	v := url.Values{"scope": {"openid payments:write"}, "login_hint": {w.person.Email}, "binding_message": {"Pay INV-1042"},
		"authorization_details": {invoice}}
	for k, vs := range extra {
		v[k] = vs
	}
	got := w.form(t, "/v1/oauth/bc-authorize", v).Expect(t, 200, nil)
	return got["auth_req_id"].(string)
}

func (w *world) poll(t testing.TB, authReqID string) *apptest.Response {
	t.Helper()
	return w.form(t, "/v1/oauth/token", url.Values{"grant_type": {"urn:openid:params:grant-type:ciba"}, "auth_req_id": {authReqID}})
}

// pending is the person's only pending request.
func (w *world) pending(t testing.TB) map[string]any {
	t.Helper()
	got := w.a.Do(apptest.Req{Path: "/v1/auth-core/approvals", Header: w.person.Bearer()}).Expect(t, 200, nil)
	list := got["approvals"].([]any)
	if len(list) != 1 {
		t.Fatalf("%d pending approvals, want 1: %v", len(list), got)
	}
	return list[0].(map[string]any)
}

func (w *world) approve(t testing.TB, a map[string]any) *apptest.Response {
	t.Helper()
	return w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/approvals/" + a["id"].(string) + "/approve",
		Body: map[string]any{"detailsDigest": a["detailsDigest"]}, Header: w.person.Bearer()})
}

func (w *world) deny(t testing.TB, id string) *apptest.Response {
	t.Helper()
	return w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/approvals/" + id + "/deny", Header: w.person.Bearer()})
}

// oauthError expects an RFC 6749 error answer.
func oauthError(t testing.TB, r *apptest.Response, status int, code string) {
	t.Helper()
	r.Expect(t, status, map[string]any{"error": code})
}

// claims decodes a JWT's payload without verifying it (the server's own introspection is
// what the tests trust).
func claims(t testing.TB, jwt string) map[string]any {
	t.Helper()
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", jwt)
	}
	b, err := base64URL(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}
