package vault_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authcore/authcore/internal/apptest"
)

// A person connects their upstream account for one agent; that agent exchanges its own
// token for the upstream's access token and calls the upstream's API with it, while the
// person never handed it a secret; another agent gets nothing; an expired token is
// refreshed once; the upstream down is a clear error that loses nothing; revoking ends
// it here and upstream (SPEC §23).
func TestVault(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, apptest.Start(t, st, appOptions()))
		created := w.connect(t, w.agentA[0]).Expect(t, 201, map[string]any{"providerId": w.provider, "providerName": "Acme Mail", "status": "connected"})
		if ag := created["agents"].([]any); len(ag) != 1 || ag[0] != w.agentA[0] {
			t.Fatalf("agents: %v", created)
		}
		tok := w.exchange(t, w.agentA).Expect(t, 200, map[string]any{"issued_token_type": "urn:authcore:token-type:upstream-access-token", "token_type": "Bearer"})
		access := tok["access_token"].(string)
		if w.userinfo(t, access) != 200 || tok["expires_in"].(float64) <= 0 {
			t.Fatalf("the upstream refuses the vault's token: %v", tok)
		}
		// The agent not chosen, an unknown person, a made-up provider, no person named.
		oauthError(t, w.exchange(t, w.agentB), 400, "invalid_grant")
		oauthError(t, exchangeOn(w.a, w.agentA[1], w.provider, "nobody@example.com"), 400, "invalid_grant")
		oauthError(t, exchangeOn(w.a, w.agentA[1], "idp_00000000000000000000000000", w.email), 400, "invalid_target")
		oauthError(t, exchangeOn(w.a, w.agentA[1], w.provider, ""), 400, "invalid_request")
		oauthError(t, exchangeOn(w.a, "ac_ai_0000000000000000000000000000000000000000", w.provider, w.email), 400, "invalid_grant")
		// An access token exchanged from the agent token speaks for the same agent; one of
		// the agent not chosen does not.
		for agent, want := range map[[2]string]int{w.agentA: 200, w.agentB: 400} {
			jwt := w.a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/token", Header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"},
				Body: "grant_type=urn:ietf:params:oauth:grant-type:token-exchange&subject_token_type=urn:ietf:params:oauth:token-type:access_token&subject_token=" + agent[1]}).
				Expect(t, 200, nil)["access_token"].(string)
			exchangeOn(w.a, jwt, w.provider, w.email).Expect(t, want, nil)
		}

		// Expired: the next exchange refreshes it, once.
		before := w.up.Counts(t, w.client)
		w.a.Clock.Advance(11 * time.Minute)
		fresh := w.exchange(t, w.agentA).Expect(t, 200, nil)["access_token"].(string)
		again := w.exchange(t, w.agentA).Expect(t, 200, nil)["access_token"].(string)
		if fresh == access || again != fresh || w.userinfo(t, fresh) != 200 {
			t.Fatalf("refresh: old %q new %q again %q", access[:8], fresh[:8], again[:8])
		}
		if got := w.up.Counts(t, w.client); got.Refresh != before.Refresh+1 {
			t.Fatalf("%d upstream refreshes for one expiry", got.Refresh-before.Refresh)
		}

		// The upstream down: a clear error, and nothing lost.
		w.up.Tamper(t, w.client, "down")
		w.a.Clock.Advance(11 * time.Minute)
		r := w.exchange(t, w.agentA)
		oauthError(t, r, 503, "temporarily_unavailable")
		if r.Header.Get("Retry-After") == "" {
			t.Fatal("no Retry-After")
		}
		w.up.Tamper(t, w.client, "")
		back := w.exchange(t, w.agentA).Expect(t, 200, nil)["access_token"].(string)
		if w.userinfo(t, back) != 200 {
			t.Fatal("the connection did not survive the upstream being down")
		}

		// The person's list shows the connection, never a token; a stranger's list is empty.
		list := w.a.Do(apptest.Req{Path: "/v1/auth-core/connections", Header: w.bearer()}).Expect(t, 200, nil)
		if body := w.a.Do(apptest.Req{Path: "/v1/auth-core/connections", Header: w.bearer()}).Body; strings.Contains(string(body), back) {
			t.Fatal("the list shows a token")
		}
		conn := list["connections"].([]any)[0].(map[string]any)
		stranger := w.a.SignUpIn(t, w.project)
		w.a.Do(apptest.Req{Method: http.MethodDelete, Path: "/v1/auth-core/connections/" + conn["id"].(string), Header: stranger.Bearer()}).Expect(t, 404, nil)

		// Revoked: here at once, and at the upstream (RFC 7009).
		w.a.Do(apptest.Req{Method: http.MethodDelete, Path: "/v1/auth-core/connections/" + conn["id"].(string), Header: w.bearer()}).
			Expect(t, 200, map[string]any{"ok": true, "upstreamRevoked": true})
		oauthError(t, w.exchange(t, w.agentA), 400, "invalid_grant")
		if got := w.up.Counts(t, w.client); got.Revocation != 1 || got.LiveRefreshTokens != 0 {
			t.Fatalf("upstream after the revocation: %+v", got)
		}
		if w.userinfo(t, back) == 200 {
			t.Fatal("the upstream still takes the connection's access token")
		}
		for _, secret := range []string{access, fresh, back} {
			if strings.Contains(w.a.Logs.String(), secret) {
				t.Fatal("an upstream token was logged")
			}
		}
	})
}

// A person the project's admin blocks lends no agent their upstream account until
// unblocked; deleted, never again (SPEC §25).
func TestVaultRefusesBlockedPeople(t *testing.T) {
	w := newWorld(t, apptest.Start(t, apptest.Stores(t)[0], appOptions()))
	w.connect(t, w.agentA[0]).Expect(t, 201, nil)
	w.exchange(t, w.agentA).Expect(t, 200, nil)
	user := "/v1/projects/" + w.project + "/users/" + w.userID
	w.a.Do(apptest.Req{Method: http.MethodPatch, Path: user, Header: w.admin.Bearer(), Body: map[string]any{"blocked": true}}).Expect(t, 200, nil)
	oauthError(t, w.exchange(t, w.agentA), 400, "invalid_grant")
	w.a.Do(apptest.Req{Method: http.MethodPatch, Path: user, Header: w.admin.Bearer(), Body: map[string]any{"blocked": false}}).Expect(t, 200, nil)
	w.exchange(t, w.agentA).Expect(t, 200, nil)
	w.a.Do(apptest.Req{Method: http.MethodDelete, Path: user, Header: w.admin.Bearer()}).Expect(t, 200, nil)
	oauthError(t, w.exchange(t, w.agentA), 400, "invalid_grant")
}

// 100 agents asking at the moment the token expired make one upstream refresh, and all
// get the new token (SPEC §23).
func TestVaultRefreshesOnceUnderLoad(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, apptest.Start(t, st, appOptions()))
		t.Cleanup(func() {
			if t.Failed() {
				t.Log(w.a.Logs.String())
			}
		})
		w.connect(t, w.agentA[0]).Expect(t, 201, nil)
		first := w.exchange(t, w.agentA).Expect(t, 200, nil)["access_token"].(string)
		before := w.up.Counts(t, w.client)
		w.a.Clock.Advance(11 * time.Minute)
		got := burst(t, 100, func(int) *apptest.Response { return w.exchange(t, w.agentA) })
		if len(got) != 1 || got[first] {
			t.Fatalf("tokens handed out: %v", keys(got))
		}
		if c := w.up.Counts(t, w.client); c.Refresh != before.Refresh+1 {
			t.Fatalf("%d upstream refreshes for 100 agents at one expiry", c.Refresh-before.Refresh)
		}
	})
}

// burst runs n exchanges at once and returns the distinct tokens they got; any answer
// but 200 fails the test.
func burst(t *testing.T, n int, do func(i int) *apptest.Response) map[string]bool {
	t.Helper()
	var mu sync.Mutex
	got := map[string]bool{}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			r := do(i)
			if r.Status != 200 {
				t.Errorf("exchange %d: %d %s", i, r.Status, r.Body)
				return
			}
			tok, _ := r.JSON(t)["access_token"].(string)
			mu.Lock()
			got[tok] = true
			mu.Unlock()
		}()
	}
	close(start)
	wg.Wait()
	return got
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k[:min(len(k), 12)]+"…")
	}
	return out
}

func oauthError(t testing.TB, r *apptest.Response, status int, code string) {
	t.Helper()
	r.Expect(t, status, map[string]any{"error": code})
}

// The upstream no longer takes the connection's refresh token (the person revoked the
// access there): the agent is told the person must connect again, the person's list says
// so, and a new sign-in and connect mends it (SPEC §23).
func TestVaultUpstreamRefusesTheRefresh(t *testing.T) {
	w := newWorld(t, apptest.Start(t, apptest.Stores(t)[0], appOptions()))
	w.connect(t, w.agentA[0]).Expect(t, 201, nil)
	w.up.Forget(t, w.client)
	// Into the last 30 s of the token's 10 minutes, where it is refreshed first: not past
	// them, or the upstream's next id_token (dated by the wall clock) would look expired
	// to the app's clock at the sign-in that mends the connection.
	w.a.Clock.Advance(9*time.Minute + 40*time.Second)
	r := w.exchange(t, w.agentA)
	oauthError(t, r, 400, "invalid_grant")
	if !strings.Contains(string(r.Body), "connect again") {
		t.Fatalf("the agent is not told why: %s", r.Body)
	}
	list := w.a.Do(apptest.Req{Path: "/v1/auth-core/connections", Header: w.bearer()}).Expect(t, 200, nil)["connections"].([]any)
	if list[0].(map[string]any)["status"] != "needs_reconnect" {
		t.Fatalf("status: %v", list)
	}
	w.signIn(t)
	w.connect(t, w.agentA[0]).Expect(t, 200, map[string]any{"status": "connected"})
	if tok := w.exchange(t, w.agentA).Expect(t, 200, nil)["access_token"].(string); w.userinfo(t, tok) != 200 {
		t.Fatal("the mended connection's token does not work")
	}
}
