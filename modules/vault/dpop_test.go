package vault_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/authcore/authcore/internal/apptest"
)

// An agent token bound to a DPoP key (SPEC §22) gets the person's upstream token only
// with a proof by that key; the upstream's token stays the upstream's (Bearer).
func TestVaultWithADPoPBoundAgent(t *testing.T) {
	w := newWorld(t, apptest.Start(t, apptest.Stores(t)[0], appOptions()))
	key, thief := apptest.NewDPoPKey(t), apptest.NewDPoPKey(t)
	got := w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/projects/" + w.project + "/ai/agents",
		Body: map[string]any{"agentName": "bound", "scopes": []string{"mail:read"}, "dpopJkt": key.JKT}, Header: w.admin.Bearer()}).Expect(t, 200, nil)
	agent := [2]string{got["agent"].(map[string]any)["id"].(string), got["plaintext"].(string)}
	w.connect(t, agent[0]).Expect(t, 201, nil)
	nonce := w.a.PostForm("/v1/oauth/token", nil, nil).Header.Get("DPoP-Nonce")
	exchange := func(k *apptest.DPoPKey) *apptest.Response {
		h := map[string]string{}
		if k != nil {
			h["DPoP"] = k.Proof(t, http.MethodPost, w.a.Config.PublicURL+"/v1/oauth/token", "", nonce, w.a.Clock.Now())
		}
		return w.a.PostForm("/v1/oauth/token", url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"}, "subject_token": {agent[1]},
			"subject_token_type": {"urn:ietf:params:oauth:token-type:access_token"}, "requested_token_type": {"urn:authcore:token-type:upstream-access-token"},
			"resource": {w.provider}, "login_hint": {w.email}}, h)
	}
	oauthError(t, exchange(nil), 400, "invalid_grant")
	oauthError(t, exchange(thief), 400, "invalid_grant")
	tok := exchange(key).Expect(t, 200, map[string]any{"token_type": "Bearer", "issued_token_type": "urn:authcore:token-type:upstream-access-token"})
	if w.userinfo(t, tok["access_token"].(string)) != 200 {
		t.Fatal("the upstream refuses the vault's token")
	}
}
