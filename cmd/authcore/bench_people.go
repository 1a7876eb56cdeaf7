package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/authcore/authcore/ent/schema"
	"github.com/authcore/authcore/modules/vault"
)

// People in the loop of agents (SPEC §23): the token vault's warm exchange as a scenario
// of the table, and the time from a person's approval to the agent's token, polling every
// second as a CIBA client does, as a row of its own.

// peopleProject is a bench project with an agent token and one of its people.
type peopleProject struct {
	admin              benchSession
	project            string
	agentID, agent     string
	person             benchSession
	personEmail        string
	personID, password string
}

func seedPeople(env *benchEnv, tag string) (peopleProject, error) {
	admin, prj, err := benchProject(env)
	if err != nil {
		return peopleProject{}, err
	}
	p := peopleProject{admin: admin, project: prj, personEmail: fmt.Sprintf("person-%s@example.com", tag), password: "bench password"}
	var minted struct {
		Agent     struct{ ID string }
		Plaintext string
	}
	if err := benchCall(env, http.MethodPost, "/v1/auth-core/projects/"+prj+"/ai/agents", admin.AccessToken,
		[]byte(`{"agentName":"bench-agent","scopes":["pay:write"]}`), http.StatusOK, &minted); err != nil {
		return p, err
	}
	p.agentID, p.agent = minted.Agent.ID, minted.Plaintext
	body, _ := json.Marshal(map[string]string{"email": p.personEmail, "password": p.password, "tenantId": prj})
	var out struct {
		User    struct{ ID string }
		Session struct{ AccessToken string }
	}
	if err := benchCall(env, http.MethodPost, "/v1/auth-core/signup", "", body, http.StatusCreated, &out); err != nil {
		return p, err
	}
	p.personID, p.person = out.User.ID, benchSession{UserID: out.User.ID, AccessToken: out.Session.AccessToken}
	return p, nil
}

// vaultScenario exchanges an agent token for a connected account's upstream access token
// that has life left: the vault's hot path (introspection of the agent's credential, the
// cached connection), with no call to the upstream. The connection is written straight to
// the store; the upstream is never reached.
func vaultScenario() scenario {
	return scenario{name: "POST /v1/oauth/token (vault exchange, warm)", setup: func(ctx context.Context, env *benchEnv) (request, error) {
		p, err := seedPeople(env, "vault")
		if err != nil {
			return request{}, err
		}
		var prov struct{ ID string }
		body, _ := json.Marshal(map[string]any{"type": "oauth2", "name": "Bench Mail", "authorizationEndpoint": "https://93.184.215.14/authorize",
			"tokenEndpoint": "https://93.184.215.14/token", "userinfoEndpoint": "https://93.184.215.14/userinfo", "clientId": "bench",
			"clientSecret": "bench secret", "offline": true})
		if err := benchCall(env, http.MethodPost, "/v1/projects/"+p.project+"/auth/providers", p.admin.AccessToken, body, http.StatusCreated, &prov); err != nil {
			return request{}, err
		}
		id := schema.NewID(schema.VaultConnectionIDPrefix)
		plain, _ := json.Marshal(map[string]string{"accessToken": "upstream-access-token", "refreshToken": "upstream-refresh-token", "tokenType": "Bearer"})
		sealed, err := vault.SealedTokens.Seal(env.keys, plain, id)
		if err != nil {
			return request{}, err
		}
		now := time.Now()
		if err := env.ent.VaultConnection.Create().SetID(id).SetProjectID(p.project).SetProviderID(prov.ID).SetUserID(p.personID).
			SetAgents([]string{p.agentID}).SetTokensSealed(sealed).SetAccessExpiresAt(now.Add(24 * time.Hour)).SetCreatedAt(now).SetUpdatedAt(now).Exec(ctx); err != nil {
			return request{}, err
		}
		form := url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"}, "subject_token": {p.agent},
			"subject_token_type": {"urn:ietf:params:oauth:token-type:access_token"}, "requested_token_type": {"urn:authcore:token-type:upstream-access-token"},
			"resource": {prov.ID}, "login_hint": {p.personID}}
		return request{Method: http.MethodPost, Path: "/v1/oauth/token", Header: formHeader, Body: []byte(form.Encode()), Expect: 200}, nil
	}}
}

// approvalLatency runs approval cycles for d, conns at a time: an agent asks (CIBA
// bc-authorize) and polls every interval, as openid-client does; the person approves; the
// row's latencies are from the approval's answer to the token in the agent's hands, and
// its rate is cycles per second. With a 1 s interval most of it is the wait for the
// agent's next poll (up to a second); the rest is authcore's.
func approvalLatency(ctx context.Context, env *benchEnv, d time.Duration, conns int) (result, error) {
	p, err := seedPeople(env, "ciba")
	if err != nil {
		return result{}, err
	}
	schemaBody := []byte(`{"type":"payment","name":"Pay","schema":{"type":"object","required":["amount"],"properties":{"type":{"type":"string"},"amount":{"type":"number","title":"Amount"}}}}`)
	if err := benchCall(env, http.MethodPost, "/v1/projects/"+p.project+"/oauth/authorization-details", p.admin.AccessToken, schemaBody, http.StatusCreated, nil); err != nil {
		return result{}, err
	}
	interval := env.cfg.BackchannelInterval
	var (
		mu        sync.Mutex
		latencies []time.Duration
		errs      int
	)
	// An agent of its own per worker: one client may have 10 requests pending per person.
	workers := make([]peopleProject, conns)
	for i := range workers {
		var minted struct {
			Agent     struct{ ID string }
			Plaintext string
		}
		if err := benchCall(env, http.MethodPost, "/v1/auth-core/projects/"+p.project+"/ai/agents", p.admin.AccessToken,
			[]byte(`{"agentName":"bench-agent","scopes":["pay:write"]}`), http.StatusOK, &minted); err != nil {
			return result{}, err
		}
		workers[i] = p
		workers[i].agentID, workers[i].agent = minted.Agent.ID, minted.Plaintext
	}
	var wg sync.WaitGroup
	deadline := time.Now().Add(d)
	start := time.Now()
	for _, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) && ctx.Err() == nil {
				lat, err := approvalCycle(env, w, interval)
				mu.Lock()
				if err != nil {
					errs++
				} else {
					latencies = append(latencies, lat)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	r := result{Name: fmt.Sprintf("approval → token (CIBA, %s poll)", interval), Requests: len(latencies), Errors: errs, Elapsed: time.Since(start)}
	if len(latencies) > 0 {
		slices.Sort(latencies)
		r.P50, r.P99 = latencies[len(latencies)/2], latencies[len(latencies)*99/100]
	}
	r.Note = "requests/s = approvals turned into tokens; p50/p99 from the approval's answer to the token"
	return r, nil
}

// approvalCycle is one request, approval and poll to the token; it returns the time
// from the approval to the token.
func approvalCycle(env *benchEnv, p peopleProject, interval time.Duration) (time.Duration, error) {
	binding := fmt.Sprintf("bench %d", rand.Int64())
	form := url.Values{"scope": {"openid pay:write"}, "login_hint": {p.personID}, "binding_message": {binding},
		"authorization_details": {`[{"type":"payment","amount":12.5}]`}, "client_id": {p.agentID}, "client_secret": {p.agent}}
	var started struct {
		AuthReqID string `json:"auth_req_id"`
	}
	if err := postForm(env, "/v1/oauth/bc-authorize", form, http.StatusOK, &started); err != nil {
		return 0, err
	}
	var pending struct {
		Approvals []struct{ ID, DetailsDigest, BindingMessage string }
	}
	if err := benchCall(env, http.MethodGet, "/v1/auth-core/approvals", p.person.AccessToken, nil, http.StatusOK, &pending); err != nil {
		return 0, err
	}
	mine := slices.IndexFunc(pending.Approvals, func(a struct{ ID, DetailsDigest, BindingMessage string }) bool { return a.BindingMessage == binding })
	if mine < 0 {
		return 0, fmt.Errorf("the request is not among the person's approvals")
	}
	// The agent polls on its own schedule, the person answers whenever they do.
	polled := make(chan time.Time, 1)
	failed := make(chan error, 1)
	go func() {
		poll := url.Values{"grant_type": {"urn:openid:params:grant-type:ciba"}, "auth_req_id": {started.AuthReqID}, "client_id": {p.agentID}, "client_secret": {p.agent}}
		for range 120 {
			time.Sleep(interval)
			err := postForm(env, "/v1/oauth/token", poll, http.StatusOK, nil)
			if err == nil {
				polled <- time.Now()
				return
			}
			if !strings.Contains(err.Error(), "authorization_pending") {
				failed <- err
				return
			}
		}
		failed <- fmt.Errorf("no token after 120 polls")
	}()
	// A person answers at no particular moment of the agent's polling.
	time.Sleep(rand.N(interval))
	a := pending.Approvals[mine]
	body, _ := json.Marshal(map[string]string{"detailsDigest": a.DetailsDigest})
	if err := benchCall(env, http.MethodPost, "/v1/auth-core/approvals/"+a.ID+"/approve", p.person.AccessToken, body, http.StatusOK, nil); err != nil {
		return 0, err
	}
	approved := time.Now()
	select {
	case at := <-polled:
		return at.Sub(approved), nil
	case err := <-failed:
		return 0, err
	}
}

func postForm(env *benchEnv, path string, form url.Values, want int, out any) error {
	res, err := http.Post("http://"+env.addr+path, "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != want {
		return fmt.Errorf("%s: %d %s", path, res.StatusCode, b)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

func peopleScenarios() []scenario {
	return []scenario{
		vaultScenario(),
		{name: "approval → token (CIBA)", custom: func(ctx context.Context, env *benchEnv, d time.Duration, conns int) (result, error) {
			// Each cycle waits for polls a second apart: a few dozen at once say more than 64.
			return approvalLatency(ctx, env, d, min(conns, 16))
		}},
	}
}
