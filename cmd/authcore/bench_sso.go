package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/authcore/authcore/platform/secret"
)

// Single sign-on for a project's apps (SPEC §25): a warm authorization — the browser's
// SSO session present, a first-party app, so no question — from request to the redirect
// with a code; and the app's code exchange, a confidential client whose answer holds an
// RS256 id_token with a custom claim.

// ssoWorld is a project with a first-party app, one of its people, and the cookies of a
// browser that signed them in once through the console's API.
type ssoWorld struct {
	project, clientID, clientSecret string
	userID                          string
	cookie                          string
}

const ssoRedirect = "http://127.0.0.1/app/callback"

func seedSSO(ctx context.Context, env *benchEnv) (*ssoWorld, error) {
	if w, ok := env.shared["sso"].(*ssoWorld); ok {
		return w, nil
	}
	_, prj, err := benchProject(env)
	if err != nil {
		return nil, err
	}
	w := &ssoWorld{project: prj}
	if w.clientSecret, err = secret.NewToken("rcs"); err != nil {
		return nil, err
	}
	// The app is written as its admin's registration writes it: what is measured is the
	// person's side.
	row, err := env.ent.OAuthClient.Create().SetName("bench app").SetRedirectUris([]string{ssoRedirect}).SetApplicationType("web").
		SetGrantTypes([]string{"authorization_code", "refresh_token"}).SetTokenEndpointAuthMethod("client_secret_basic").
		SetSecretDigest(secret.DigestOf(w.clientSecret).Bytes()).SetProjectID(prj).SetAppType("web").SetFirstParty(true).
		SetClaims(map[string]string{"plan": "metadata.plan"}).Save(ctx)
	if err != nil {
		return nil, err
	}
	w.clientID = row.ID
	body, _ := json.Marshal(map[string]string{"email": "sso-person@example.com", "password": "bench password", "tenantId": prj})
	var person struct {
		User    struct{ ID string }
		Session struct{ AccessToken string }
	}
	if err := benchCall(env, http.MethodPost, "/v1/auth-core/signup", "", body, http.StatusCreated, &person); err != nil {
		return nil, err
	}
	w.userID = person.User.ID
	// The browser's first sign-in: the authorization request, the console's question
	// answered with the person's session, and the SSO cookie the answer sets.
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := noFollow.Get("http://" + env.addr + w.authorizePath())
	if err != nil {
		return nil, err
	}
	res.Body.Close()
	loc, _ := url.Parse(res.Header.Get("Location"))
	id := loc.Query().Get("request")
	if id == "" {
		return nil, fmt.Errorf("authorize answered %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	mark := ""
	for _, c := range res.Cookies() {
		if c.Name == "ac_authz" {
			mark = c.Name + "=" + c.Value
		}
	}
	ask := func(method string, body []byte) (*http.Response, map[string]any, error) {
		req, _ := http.NewRequest(method, "http://"+env.addr+"/v1/oauth/authorizations/"+id, strings.NewReader(string(body)))
		req.Header.Set("Authorization", "Bearer "+person.Session.AccessToken)
		req.Header.Set("Cookie", mark)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, nil, err
		}
		defer res.Body.Close()
		var out map[string]any
		err = json.NewDecoder(res.Body).Decode(&out)
		return res, out, err
	}
	_, view, err := ask(http.MethodGet, nil)
	if err != nil {
		return nil, err
	}
	decision, _ := json.Marshal(map[string]any{"decision": "approve", "csrfToken": view["csrfToken"]})
	res, _, err = ask(http.MethodPost, decision)
	if err != nil {
		return nil, err
	}
	for _, c := range res.Cookies() {
		if strings.HasPrefix(c.Name, "ac_sso_") {
			w.cookie = c.Name + "=" + c.Value
		}
	}
	if w.cookie == "" {
		return nil, fmt.Errorf("the console's approval (%d) set no SSO cookie", res.StatusCode)
	}
	// One warm authorization now, to say what is wrong before the run would.
	req, _ := http.NewRequest(http.MethodGet, "http://"+env.addr+w.authorizePath(), nil)
	req.Header.Set("Cookie", w.cookie)
	if res, err = noFollow.Do(req); err != nil {
		return nil, err
	}
	res.Body.Close()
	if loc := res.Header.Get("Location"); res.StatusCode != http.StatusFound || !strings.Contains(loc, "code=") {
		return nil, fmt.Errorf("a warm authorization answered %d %s", res.StatusCode, loc)
	}
	env.shared["sso"] = w
	return w, nil
}

func (w *ssoWorld) authorizePath() string {
	v := oauth2.GenerateVerifier()
	return "/oauth/authorize?" + url.Values{"response_type": {"code"}, "client_id": {w.clientID}, "redirect_uri": {ssoRedirect},
		"scope": {"openid profile email"}, "state": {"bench"}, "nonce": {"bench"}, "code_challenge": {oauth2.S256ChallengeFromVerifier(v)},
		"code_challenge_method": {"S256"}}.Encode()
}

func ssoScenarios() []scenario {
	return []scenario{
		{name: "GET /oauth/authorize (warm SSO, first-party app → code)", conns: 4, setup: func(ctx context.Context, env *benchEnv) (request, error) {
			w, err := seedSSO(ctx, env)
			if err != nil {
				return request{}, err
			}
			return request{Method: http.MethodGet, Path: w.authorizePath(), Header: map[string]string{"Cookie": w.cookie}, Expect: http.StatusFound}, nil
		}},
		{name: "POST /v1/oauth/token (app code → RS256 id_token, client secret)", setup: func(ctx context.Context, env *benchEnv) (request, error) {
			w, err := seedSSO(ctx, env)
			if err != nil {
				return request{}, err
			}
			g, err := env.ent.OAuthGrant.Create().SetClientID(w.clientID).SetClientName("bench app").SetClientHost("127.0.0.1").
				SetUserID(w.userID).SetProjectID(w.project).SetScopes([]string{"openid", "profile", "email"}).SetResources([]string{}).
				SetUpdatedAt(time.Now()).Save(ctx)
			if err != nil {
				return request{}, err
			}
			next, err := seedCodes(ctx, env, g, ssoRedirect, false)
			if err != nil {
				return request{}, err
			}
			basic := "Basic " + base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(w.clientID)+":"+url.QueryEscape(w.clientSecret)))
			return request{Method: http.MethodPost, Path: "/v1/oauth/token", Header: map[string]string{"Content-Type": "application/x-www-form-urlencoded",
				"Authorization": basic}, NextBody: next, Expect: 200}, nil
		}},
	}
}
