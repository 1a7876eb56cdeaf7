package approval_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/authcore/authcore/internal/apptest"
)

// An agent token minted bound to a DPoP key (SPEC §22) acts as a client only with a proof
// by that key, at the backchannel endpoint and at the token endpoint; the token its
// approval gives is bound to the key too.
func TestDPoPBoundAgentAsClient(t *testing.T) {
	w := newWorld(t, apptest.Stores(t)[0])
	key, thief := apptest.NewDPoPKey(t), apptest.NewDPoPKey(t)
	got := w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/projects/" + w.project + "/ai/agents",
		Body: map[string]any{"agentName": "bound-bot", "scopes": []string{"payments:write"}, "dpopJkt": key.JKT}, Header: w.admin.Bearer()}).Expect(t, 200, nil)
	w.agentID, w.agent = got["agent"].(map[string]any)["id"].(string), got["plaintext"].(string)
	nonce := w.a.PostForm("/v1/oauth/token", nil, nil).Header.Get("DPoP-Nonce")
	post := func(path string, v url.Values, k *apptest.DPoPKey) *apptest.Response {
		v.Set("client_id", w.agentID)
		v.Set("client_secret", w.agent)
		h := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
		if k != nil {
			h["DPoP"] = k.Proof(t, http.MethodPost, w.a.Config.PublicURL+path, "", nonce, w.a.Clock.Now())
		}
		return w.a.Do(apptest.Req{Method: http.MethodPost, Path: path, Body: v.Encode(), Header: h})
	}
	ask := func() url.Values {
		return url.Values{"scope": {"openid payments:write"}, "login_hint": {w.person.Email}, "binding_message": {"Pay INV-1042"}, "authorization_details": {invoice}}
	}
	oauthError(t, post("/v1/oauth/bc-authorize", ask(), nil), 401, "invalid_client")
	oauthError(t, post("/v1/oauth/bc-authorize", ask(), thief), 401, "invalid_client")
	id := post("/v1/oauth/bc-authorize", ask(), key).Expect(t, 200, nil)["auth_req_id"].(string)
	w.approve(t, w.pending(t)).Expect(t, 200, nil)
	poll := func() url.Values {
		return url.Values{"grant_type": {"urn:openid:params:grant-type:ciba"}, "auth_req_id": {id}}
	}
	oauthError(t, post("/v1/oauth/token", poll(), nil), 401, "invalid_client")
	tok := post("/v1/oauth/token", poll(), key).Expect(t, 200, map[string]any{"token_type": "DPoP"})
	if cnf, _ := claims(t, tok["access_token"].(string))["cnf"].(map[string]any); cnf["jkt"] != key.JKT {
		t.Fatalf("cnf %v", cnf)
	}
}
