package vault_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/fx"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/secret"
)

// Who may connect what, and with which agents (SPEC §23).
func TestConnectRules(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, apptest.Start(t, st, appOptions()))
		path := "/v1/auth-core/connections/" + w.provider
		post := func(body any, h map[string]string) *apptest.Response {
			return w.a.Do(apptest.Req{Method: http.MethodPost, Path: path, Body: body, Header: h})
		}
		for name, body := range map[string]any{
			"no body": nil, "no agents": map[string]any{}, "agents empty": map[string]any{"agents": []string{}},
			"agents not a list": map[string]any{"agents": "tok_x"}, "21 agents": map[string]any{"agents": strings.Split(strings.Repeat("cli_0123456789ab,", 21), ",")[:21]},
			"an id of no agent": map[string]any{"agents": []string{"usr_0123456789abcdef"}},
		} {
			t.Run(name, func(t *testing.T) { post(body, w.bearer()).Expect(t, 400, map[string]any{"code": "validation_failed"}) })
		}
		post(map[string]any{"agents": []string{"tok_0123456789ABCDEFGHJKMNPQRS"}}, w.bearer()).Expect(t, 400, map[string]any{"code": "unknown_agent"})
		// Signed out; a dashboard user; another project's person; an unknown provider.
		post(map[string]any{"agents": []string{w.agentA[0]}}, nil).Expect(t, 401, nil)
		post(map[string]any{"agents": []string{w.agentA[0]}}, w.admin.Bearer()).Expect(t, 404, nil)
		otherProject := w.a.CreateProject(t, w.admin)
		post(map[string]any{"agents": []string{w.agentA[0]}}, w.a.SignUpIn(t, otherProject).Bearer()).Expect(t, 404, nil)
		w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/connections/idp_00000000000000000000000000", Body: map[string]any{"agents": []string{w.agentA[0]}},
			Header: w.bearer()}).Expect(t, 404, nil)
		// A person of the project who never signed in with the provider has nothing to connect.
		post(map[string]any{"agents": []string{w.agentA[0]}}, w.a.SignUpIn(t, w.project).Bearer()).Expect(t, 409, map[string]any{"code": "sign_in_first"})

		// The tokens move into the connection: connecting again changes only the agents,
		// until a new sign-in leaves new tokens.
		w.connect(t, w.agentA[0]).Expect(t, 201, nil)
		if n := w.a.Ent.Identity.Query().CountX(t.Context()); n == 0 {
			t.Fatal("no identity")
		}
		for _, id := range w.a.Ent.Identity.Query().AllX(t.Context()) {
			if id.UserID == w.userID && id.TokensSealed != "" {
				t.Fatal("the identity still holds the tokens after the connection took them")
			}
		}
		w.connect(t, w.agentA[0], w.agentB[0]).Expect(t, 200, nil)
		w.exchange(t, w.agentB).Expect(t, 200, nil)
		agents := w.a.Do(apptest.Req{Path: "/v1/auth-core/connections/agents", Header: w.bearer()}).Expect(t, 200, nil)["agents"].([]any)
		if len(agents) != 2 {
			t.Fatalf("agents to choose from: %v", agents)
		}
		// A provider without offline access keeps no tokens to connect.
		w.a.Do(apptest.Req{Method: http.MethodPatch, Path: "/v1/projects/" + w.project + "/auth/providers/" + w.provider, Body: map[string]any{"offline": false},
			Header: w.admin.Bearer()}).Expect(t, 200, nil)
		w.connect(t, w.agentA[0]).Expect(t, 409, map[string]any{"code": "offline_access_required"})
	})
}

// Connections' tokens are sealed under the master key and re-sealed by keys reseal: after
// it, a server with the new key alone still serves and refreshes them (SPEC §23).
func TestVaultTokensReseal(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		url := st.FreshURL(t)
		keyA := base64.StdEncoding.EncodeToString(apptest.TestMasterKey)
		keyB := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{9}, 32))
		withKey := func(k string) apptest.Option { return apptest.WithConfig(func(c *config.Config) { c.MasterKey = k }) }
		a := apptest.StartURL(t, st.Name, url, appOptions(), withKey(keyA))
		w := newWorld(t, a)
		w.connect(t, w.agentA[0]).Expect(t, 201, nil)
		if err := a.Stop(); err != nil {
			t.Fatal(err)
		}
		conn := func(app *apptest.App) string { return app.Ent.VaultConnection.Query().OnlyX(t.Context()).TokensSealed }

		var r secret.Resealer
		mid := apptest.StartURL(t, st.Name, url, appOptions(), withKey(keyB+","+keyA), apptest.WithFx(fx.Populate(&r)))
		sealedA := conn(mid)
		resealed := map[string]int{}
		if err := r.ResealAll(context.Background(), 10, func(name string, n int) { resealed[name] += n }); err != nil {
			t.Fatal(err)
		}
		if resealed["vault connections' upstream tokens"] != 1 || conn(mid) == sealedA {
			t.Fatalf("resealed %v", resealed)
		}
		if err := mid.Stop(); err != nil {
			t.Fatal(err)
		}
		b := apptest.StartURL(t, st.Name, url, appOptions(), withKey(keyB))
		w.a = b
		w.exchange(t, w.agentA).Expect(t, 200, nil)
		b.Clock.Advance(11 * time.Minute)
		if tok := w.exchange(t, w.agentA).Expect(t, 200, nil)["access_token"].(string); w.userinfo(t, tok) != 200 {
			t.Fatal("the refreshed token does not work")
		}
	})
}

// Issue 46: a connection's agents are the project's. The attack: a person of the project
// names agents of another project (its agent tokens, its auth badges' clients, a host's
// client granted there); before, client ids were taken as given. Each is now 400
// unknown_agent and nothing is stored; the project's own clients are taken.
func TestConnectionAgentsBelongToTheProject(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, apptest.Start(t, st, appOptions()))
		w.connect(t, w.agentA[0]).Expect(t, 201, nil)
		stranger := w.a.SignUp(t)
		elsewhere := w.a.CreateProject(t, stranger)
		foreignToken := w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/projects/" + elsewhere + "/ai/agents",
			Body: map[string]any{"agentName": "theirs"}, Header: stranger.Bearer()}).Expect(t, 200, nil)["agent"].(map[string]any)["id"].(string)
		foreignClient := w.a.MintAuthClient(t, stranger, elsewhere, nil).ID
		foreignApp := w.a.ConnectApp(t, stranger, elsewhere, "").ClientID
		unused := w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/register",
			Body: map[string]any{"client_name": "nobody's", "redirect_uris": []string{"http://127.0.0.1/cb"}}}).Expect(t, 201, nil)["client_id"].(string)
		for name, id := range map[string]string{"another project's agent token": foreignToken, "another project's auth client": foreignClient,
			"a host's client granted in another project": foreignApp, "a host's client granted nowhere": unused,
			"an auth client that does not exist": "cli_0123456789ABCDEFGHJKMNPQRS", "a host's client that does not exist": "dcr_0123456789ABCDEFGHJKMNPQRS"} {
			t.Run(name, func(t *testing.T) {
				w.connect(t, w.agentA[0], id).Expect(t, 400, map[string]any{"code": "unknown_agent"})
			})
		}
		got := w.a.Do(apptest.Req{Path: "/v1/auth-core/connections", Header: w.bearer()}).Expect(t, 200, nil)["connections"].([]any)
		if len(got) != 1 || len(got[0].(map[string]any)["agents"].([]any)) != 1 {
			t.Fatalf("a refused connect stored something: %v", got)
		}
		// The project's own clients: an auth badge's, and a host's client granted here.
		mine := w.a.MintAuthClient(t, w.admin, w.project, nil).ID
		app := w.a.ConnectApp(t, w.admin, w.project, "").ClientID
		w.connect(t, w.agentA[0], mine, app).Expect(t, 200, nil)
	})
}
