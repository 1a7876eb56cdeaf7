package account_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"go.uber.org/fx"
	"golang.org/x/oauth2"

	"github.com/authcore/authcore/ent/auditevent"
	"github.com/authcore/authcore/ent/schema"
	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/modules/vault"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/secret"
)

// benchWorld is a deprovWorld with what a person's 100 credentials need besides: 20 apps
// (one grant each), 10 upstream providers (one vault connection each) and two agents of
// the project that ask the person for approvals.
type benchWorld struct {
	*deprovWorld
	keys      *secret.Keyring
	apps      []string
	providers []string
	// askers are two agents of the project ({id, secret}): a client has at most ten
	// requests pending for one person.
	askers [2][2]string
}

// person is a new person of the project, an admin of the org, signed in once.
func (w *benchWorld) person(b *testing.B) *apptest.Session {
	b.Helper()
	p := w.a.SignUpIn(b, w.project)
	w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + w.project + "/orgs/" + w.org + "/members", Body: map[string]any{"userId": p.UserID, "role": "admin"},
		Header: w.admin.Bearer()}).Expect(b, 201, nil)
	return p
}

// grantTo is the person's grant to app (its authorization code flow, as connect runs it).
func (w *benchWorld) grantTo(b *testing.B, p *apptest.Session, app string) {
	b.Helper()
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	verifier := oauth2.GenerateVerifier()
	q := url.Values{"response_type": {"code"}, "client_id": {app}, "redirect_uri": {w.redirect}, "state": {"st"},
		"code_challenge": {oauth2.S256ChallengeFromVerifier(verifier)}, "code_challenge_method": {"S256"}, "resource": {w.resource}, "scope": {"mail:read offline_access"}}
	res, err := noFollow.Get(w.a.Base + "/oauth/authorize?" + q.Encode())
	if err != nil {
		b.Fatal(err)
	}
	res.Body.Close()
	loc, _ := url.Parse(res.Header.Get("Location"))
	path := "/v1/oauth/authorizations/" + loc.Query().Get("request")
	browser := p.Bearer()
	for _, c := range res.Cookies() {
		browser["Cookie"] = c.Name + "=" + c.Value
	}
	csrf := w.a.Do(apptest.Req{Path: path, Header: browser}).Expect(b, 200, nil)["csrfToken"].(string)
	to := w.a.Do(apptest.Req{Method: http.MethodPost, Path: path, Header: browser, Body: map[string]any{"decision": "approve", "csrfToken": csrf}}).
		Expect(b, 200, nil)["redirectTo"].(string)
	back, _ := url.Parse(to)
	w.a.PostForm("/v1/oauth/token", url.Values{"grant_type": {"authorization_code"}, "client_id": {app}, "code": {back.Query().Get("code")},
		"redirect_uri": {w.redirect}, "code_verifier": {verifier}}, nil).Expect(b, 200, nil)
}

// hundred gives p 100 live credentials: 30 sessions, 20 OAuth grants (each with an access
// and a refresh token), 20 agent tokens they mint, 20 pending approvals, 10 vault
// connections (written straight to the store, as authcore bench does: the providers have
// no revocation endpoint, so no upstream is reached and the figure is authcore's own).
func (w *benchWorld) hundred(b *testing.B, p *apptest.Session) {
	b.Helper()
	for range 29 {
		w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signin", Body: map[string]any{"email": p.Email, "password": p.Password, "tenantId": w.project}}).Expect(b, 200, nil)
	}
	for _, app := range w.apps {
		w.grantTo(b, p, app)
	}
	for range 20 {
		w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/orgs/" + w.org + "/ai/agents", Body: map[string]any{"agentName": "helper"},
			Header: p.Bearer()}).Expect(b, 200, nil)
	}
	for i := range 20 {
		asker := w.askers[i%2]
		form := url.Values{"client_id": {asker[0]}, "client_secret": {asker[1]}, "scope": {"openid"}, "login_hint": {p.Email}, "binding_message": {"Bench"}}
		w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/bc-authorize", Body: form.Encode(),
			Header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}}).Expect(b, 200, nil)
	}
	now := time.Now()
	for _, prov := range w.providers {
		id := schema.NewID(schema.VaultConnectionIDPrefix)
		plain, _ := json.Marshal(map[string]string{"accessToken": "upstream-access-token", "refreshToken": "upstream-refresh-token", "tokenType": "Bearer"})
		sealed, err := vault.SealedTokens.Seal(w.keys, plain, id)
		if err != nil {
			b.Fatal(err)
		}
		w.a.Ent.VaultConnection.Create().SetID(id).SetProjectID(w.project).SetProviderID(prov).SetUserID(p.UserID).SetAgents([]string{w.askers[0][0]}).
			SetTokensSealed(sealed).SetAccessExpiresAt(now.Add(time.Hour)).SetCreatedAt(now).SetUpdatedAt(now).ExecX(context.Background())
	}
}

// endedAll fails unless the deprovisioning of userID ended all 100 of their credentials,
// as its audit record counts them.
func (w *benchWorld) endedAll(b *testing.B, userID string) {
	b.Helper()
	evs := w.a.Ent.AuditEvent.Query().Where(auditevent.Action("org.member_deprovisioned"), auditevent.ProjectID(w.project)).AllX(context.Background())
	for _, ev := range evs {
		if ev.Metadata["userId"] != userID {
			continue
		}
		total := 0
		for _, n := range ev.Metadata["ended"].(map[string]any) {
			total += int(n.(float64))
		}
		if total != 100 {
			b.Fatalf("the deprovisioning ended %d credentials, not 100: %v", total, ev.Metadata["ended"])
		}
		return
	}
	b.Fatal("no deprovisioning record")
}

// BenchmarkDeprovisionFanOut is SPEC §27's deprovisioning fan-out for a person with 100
// live credentials of every kind, beside its baseline in the same run: a person with one
// (the session of their sign-up). Each iteration seeds both people (untimed) and times
// the two Deprovision calls; it reports each's milliseconds and their ratio.
func BenchmarkDeprovisionFanOut(b *testing.B) {
	for _, st := range apptest.Stores(b) {
		b.Run(st.Name, func(b *testing.B) {
			w := &benchWorld{deprovWorld: &deprovWorld{}}
			w.a = apptest.Start(b, st, deprovOptions(&w.dep, apptest.WithFx(fx.Populate(&w.keys)))...)
			w.setUp(b)
			w.revokeMinted(b)
			for i := range 20 {
				w.apps = append(w.apps, w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + w.project + "/apps", Header: w.admin.Bearer(),
					Body: map[string]any{"name": fmt.Sprint("App ", i), "type": "spa", "redirectUris": []string{w.redirect}, "backchannelLogoutUri": w.logout.srv.URL + "/logout",
						"grantTypes": []string{"authorization_code", "refresh_token"}}}).Expect(b, 201, nil)["app"].(map[string]any)["clientId"].(string))
			}
			for i := range 10 {
				w.providers = append(w.providers, w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + w.project + "/auth/providers", Header: w.admin.Bearer(),
					Body: map[string]any{"type": "oauth2", "name": fmt.Sprint("Mail ", i), "authorizationEndpoint": w.logout.srv.URL + "/authorize",
						"tokenEndpoint": w.logout.srv.URL + "/token", "userinfoEndpoint": w.logout.srv.URL + "/userinfo", "clientId": "bench",
						"clientSecret": "bench secret", "offline": true}}).Expect(b, 201, nil)["id"].(string))
			}
			for i := range w.askers {
				got := w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/projects/" + w.project + "/ai/agents",
					Body: map[string]any{"agentName": "asker", "scopes": []string{}}, Header: w.admin.Bearer()}).Expect(b, 200, nil)
				w.askers[i] = [2]string{got["agent"].(map[string]any)["id"].(string), got["plaintext"].(string)}
			}

			deprovision := func(p *apptest.Session) time.Duration {
				start := time.Now()
				if err := w.dep.Deprovision(context.Background(), identity.Deprovision{TenantID: w.project, UserID: p.UserID, OrgID: w.org, Actor: "directory:bench"}); err != nil {
					b.Fatal(err)
				}
				return time.Since(start)
			}
			var one, hundred time.Duration
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				single, many := w.person(b), w.person(b)
				w.hundred(b, many)
				b.StartTimer()
				one += deprovision(single)
				hundred += deprovision(many)
				b.StopTimer()
				w.endedAll(b, many.UserID)
				b.StartTimer()
			}
			n := float64(b.N)
			b.ReportMetric(float64(one.Microseconds())/1000/n, "ms/1-credential")
			b.ReportMetric(float64(hundred.Microseconds())/1000/n, "ms/100-credentials")
			b.ReportMetric(float64(hundred)/float64(one), "ratio")
		})
	}
}
