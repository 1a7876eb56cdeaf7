package authorize_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"go.uber.org/fx"

	"github.com/authcore/authcore/internal/apptest"
	authz "github.com/authcore/authcore/modules/authorize"
)

// grantWorld is a world with one approved grant of a registered client, its first tokens
// redeemed.
type grantWorld struct {
	*world
	f                    *flow
	access, refresh, gid string
	other                string // a second resource of the grant
}

func newGrant(t *testing.T, st apptest.Store) *grantWorld {
	t.Helper()
	w := newWorld(t, st)
	g := &grantWorld{world: w, f: newFlow(register(t, w.a, "http://127.0.0.1/callback"), "http://127.0.0.1:6000/callback")}
	g.f.extra.Set("resource", w.mcp.URL)
	g.other = w.mcp.URL + "/other"
	w.a.RegisterResource(t, w.admin, w.project, g.other, nil)
	g.f.extra.Add("resource", g.other)
	g.f.extra.Set("scope", "tools:call") // what the MCP server's scopes allow
	got := redeem(w.a, g.f, approve(t, w.a, w.admin, g.f), nil).Expect(t, 200, nil)
	g.access, g.refresh = got["access_token"].(string), got["refresh_token"].(string)
	g.gid = apptest.ClaimsOf(t, g.access)["grant_id"].(string)
	return g
}

func (g *grantWorld) introspect(t *testing.T, token string) map[string]any {
	t.Helper()
	return g.a.PostForm("/v1/oauth/introspect", url.Values{"token": {token}}, apptest.Basic(g.introspector.ID, g.introspector.Secret)).Expect(t, 200, nil)
}

func (g *grantWorld) refreshWith(refresh string, more url.Values) *apptest.Response {
	form := url.Values{"grant_type": {"refresh_token"}, "client_id": {g.f.clientID}, "refresh_token": {refresh}}
	for k, v := range more {
		form[k] = v
	}
	return g.a.PostForm("/v1/oauth/token", form, nil)
}

// A grant's tokens are credentials of the registry (SPEC §15): introspection knows them,
// RFC 7009 revokes the grant through its refresh token, and every change is audited.
func TestGrantTokens(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		g := newGrant(t, st)
		a := g.a
		in := g.introspect(t, g.access)
		if in["active"] != true || in["kind"] != "oauth_access_token" || in["grant_id"] != g.gid || in["sub"] != g.admin.UserID || in["client_id"] != g.f.clientID {
			t.Fatalf("introspected access token: %v", in)
		}
		in = g.introspect(t, g.refresh)
		if in["active"] != true || in["kind"] != "oauth_refresh_token" || in["grant_id"] != g.gid || in["scope"] != "tools:call" {
			t.Fatalf("introspected refresh token: %v", in)
		}
		// Another project's resource server learns nothing.
		other := a.SignUp(t)
		theirs := a.MintAuthClient(t, other, a.CreateProject(t, other), nil)
		a.PostForm("/v1/oauth/introspect", url.Values{"token": {g.access}}, apptest.Basic(theirs.ID, theirs.Secret)).Expect(t, 200, map[string]any{"active": false})
		a.PostForm("/v1/oauth/introspect", url.Values{"token": {g.refresh}}, apptest.Basic(theirs.ID, theirs.Secret)).Expect(t, 200, map[string]any{"active": false})

		// The remembered grant: the same request again asks nothing new.
		f := newFlow(g.f.clientID, g.f.redirect)
		f.extra = g.f.extra
		id := requestOf(t, a, f)
		consentOf(a, g.admin, id).Expect(t, 200, map[string]any{"remembered": true})

		// RFC 7009 with the refresh token ends the grant: both tokens go inactive at once.
		a.PostForm("/v1/oauth/revoke", url.Values{"token": {g.refresh}}, nil).Expect(t, 200, nil)
		g.introspect(t, g.access)
		if in := g.introspect(t, g.access); in["active"] != false {
			t.Fatalf("access token active after its grant was revoked: %v", in)
		}
		if in := g.introspect(t, g.refresh); in["active"] != false {
			t.Fatalf("refresh token active after its grant was revoked: %v", in)
		}
		trail := a.Do(apptest.Req{Path: "/v1/projects/" + g.project + "/audit", Header: g.admin.Bearer()}).Expect(t, 200, nil)["events"].([]any)
		seen := map[string]map[string]any{}
		for _, e := range trail {
			ev := e.(map[string]any)
			seen[ev["action"].(string)] = ev["metadata"].(map[string]any)
		}
		if seen["oauth.grant_create"]["grantId"] != g.gid || seen["oauth.grant_revoke"]["grantId"] != g.gid || seen["oauth.grant_revoke"]["reason"] != "refresh_token_presented" || seen["oauth.grant_revoke"]["via"] != "self" {
			t.Fatalf("audit trail: %v", seen)
		}
	})
}

// Refresh (SPEC §16): rotation, narrowing, the client binding and both lifetimes.
func TestRefresh(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		g := newGrant(t, st)
		a := g.a
		t.Run("it narrows and never widens", func(t *testing.T) {
			g.refreshWith(g.refresh, url.Values{"scope": {"files:write"}}).Expect(t, 400, map[string]any{"error": "invalid_scope"})
			g.refreshWith(g.refresh, url.Values{"resource": {"https://elsewhere.example/x"}}).Expect(t, 400, map[string]any{"error": "invalid_target"})
			got := g.refreshWith(g.refresh, url.Values{"resource": {g.other}}).Expect(t, 200, map[string]any{"scope": "tools:call"})
			if aud := apptest.ClaimsOf(t, got["access_token"].(string))["aud"]; aud != g.other {
				t.Fatalf("narrowed aud %v", aud)
			}
			g.refresh = got["refresh_token"].(string)
		})
		t.Run("another client's refresh is refused", func(t *testing.T) {
			a.PostForm("/v1/oauth/token", url.Values{"grant_type": {"refresh_token"}, "client_id": {register(t, a, "http://127.0.0.1/cb")}, "refresh_token": {g.refresh}}, nil).
				Expect(t, 400, map[string]any{"error": "invalid_grant"})
			for _, drop := range []string{"client_id", "refresh_token"} {
				form := url.Values{"grant_type": {"refresh_token"}, "client_id": {g.f.clientID}, "refresh_token": {g.refresh}}
				form.Del(drop)
				a.PostForm("/v1/oauth/token", form, nil).Expect(t, 400, map[string]any{"error": "invalid_request"})
			}
			g.refreshWith("ac_gr_nonsense", nil).Expect(t, 400, map[string]any{"error": "invalid_grant"})
		})
		t.Run("idle for 30 days it expires", func(t *testing.T) {
			got := g.refreshWith(g.refresh, nil).Expect(t, 200, nil)
			g.refresh = got["refresh_token"].(string)
			a.Clock.Advance(30*24*time.Hour + time.Second)
			defer a.Clock.Advance(-(30*24*time.Hour + time.Second))
			g.refreshWith(g.refresh, nil).Expect(t, 400, map[string]any{"error": "invalid_grant"})
		})
		t.Run("used every 29 days it still ends after 90", func(t *testing.T) {
			g := newGrant(t, st)
			var moved time.Duration
			defer func() { g.a.Clock.Advance(-moved) }()
			for range 3 {
				g.a.Clock.Advance(29 * 24 * time.Hour)
				moved += 29 * 24 * time.Hour
				g.refresh = g.refreshWith(g.refresh, nil).Expect(t, 200, nil)["refresh_token"].(string)
			}
			g.a.Clock.Advance(4 * 24 * time.Hour) // day 91
			moved += 4 * 24 * time.Hour
			g.refreshWith(g.refresh, nil).Expect(t, 400, map[string]any{"error": "invalid_grant"})
		})
	})
}

// Grants as records: mine, the project's (admins), revoked by either (SPEC §16).
func TestGrantRecords(t *testing.T) {
	g := newGrant(t, apptest.Stores(t)[0])
	a := g.a
	mine := a.Get("/v1/auth-core/oauth/grants", "Authorization", "Bearer "+g.admin.AccessToken).Expect(t, 200, nil)["grants"].([]any)
	project := a.Get("/v1/projects/"+g.project+"/oauth/grants", "Authorization", "Bearer "+g.admin.AccessToken).Expect(t, 200, nil)["grants"].([]any)
	if len(mine) != 1 || len(project) != 1 || mine[0].(map[string]any)["id"] != g.gid {
		t.Fatalf("mine %v, project %v", mine, project)
	}
	dev := a.SignUp(t)
	a.AddMember(t, g.admin, g.project, dev, "developer")
	a.Get("/v1/projects/"+g.project+"/oauth/grants", "Authorization", "Bearer "+dev.AccessToken).Expect(t, 403, nil)
	a.Get("/v1/auth-core/oauth/grants", "Authorization", "Bearer "+dev.AccessToken).Expect(t, 200, map[string]any{"grants": []any{}})
	// Not theirs: as if it did not exist.
	a.Do(apptest.Req{Method: http.MethodDelete, Path: "/v1/auth-core/oauth/grants/" + g.gid, Header: dev.Bearer()}).Expect(t, 404, nil)
	a.Do(apptest.Req{Method: http.MethodDelete, Path: "/v1/projects/" + g.project + "/oauth/grants/" + g.gid, Header: dev.Bearer()}).Expect(t, 403, nil)
	if in := g.introspect(t, g.access); in["active"] != true {
		t.Fatalf("%v", in)
	}
	a.Do(apptest.Req{Method: http.MethodDelete, Path: "/v1/projects/" + g.project + "/oauth/grants/" + g.gid, Header: g.admin.Bearer()}).
		Expect(t, 200, map[string]any{"revoked": true, "grantId": g.gid})
	a.Do(apptest.Req{Method: http.MethodDelete, Path: "/v1/projects/" + g.project + "/oauth/grants/" + g.gid, Header: g.admin.Bearer()}).Expect(t, 404, nil)
	if in := g.introspect(t, g.access); in["active"] != false {
		t.Fatalf("active after revoke: %v", in)
	}
	g.refreshWith(g.refresh, nil).Expect(t, 400, map[string]any{"error": "invalid_grant"})
}

// Client credentials honour audience (RFC 8693 §2.1) as they do resource, for the
// project's registered resources only (SPEC §16).
func TestClientCredentialsAudience(t *testing.T) {
	w := newWorld(t, apptest.Stores(t)[0])
	cl := w.introspector
	api := w.mcp.URL + "/api" // no scopes of its own, so the client's role may be carried
	w.a.RegisterResource(t, w.admin, w.project, api, nil)
	got := w.a.PostForm("/v1/oauth/token", url.Values{"grant_type": {"client_credentials"}, "audience": {api}}, apptest.Basic(cl.ID, cl.Secret)).Expect(t, 200, nil)
	if aud := apptest.ClaimsOf(t, got["access_token"].(string))["aud"]; aud != api {
		t.Fatalf("aud %v", aud)
	}
	w.a.PostForm("/v1/oauth/token", url.Values{"grant_type": {"client_credentials"}, "audience": {"https://elsewhere.example/api"}}, apptest.Basic(cl.ID, cl.Secret)).
		Expect(t, 400, map[string]any{"error": "invalid_target"})
}

// Expired requests, codes and refresh tokens are pruned; nothing still presentable is.
func TestPruning(t *testing.T) {
	var pruner *authz.Pruner
	w := newWorld(t, apptest.Stores(t)[0], apptest.WithFx(fx.Populate(&pruner)))
	a := w.a
	app := a.ConnectApp(t, w.admin, w.project, w.mcp.URL) // its code is spent, its refresh token live
	f := newFlow(app.ClientID, "http://127.0.0.1/callback")
	f.extra.Set("resource", w.mcp.URL)
	requestOf(t, a, f)                    // a request nobody answers
	approve(t, a, w.admin, newFlowFor(f)) // a code nobody redeems
	ctx := context.Background()
	if n, err := pruner.Prune(ctx); err != nil || n != 0 {
		t.Fatalf("pruned %d before anything expired: %v", n, err)
	}
	a.Clock.Advance(11 * time.Minute)
	defer a.Clock.Advance(-11 * time.Minute)
	// Three requests (two answered, one not) and two codes (spent, and never redeemed);
	// the refresh token lives on.
	if n, err := pruner.Prune(ctx); err != nil || n != 5 {
		t.Fatalf("pruned %d after 11 minutes, want 3 requests and 2 codes: %v", n, err)
	}
	next := a.PostForm("/v1/oauth/token", url.Values{"grant_type": {"refresh_token"}, "client_id": {app.ClientID}, "refresh_token": {app.RefreshToken}}, nil).Expect(t, 200, nil)
	// Past its idle end the refresh token chain goes too: the rotated one and the live one.
	a.Clock.Advance(31 * 24 * time.Hour)
	defer a.Clock.Advance(-31 * 24 * time.Hour)
	if n, err := pruner.Prune(ctx); err != nil || n != 2 {
		t.Fatalf("pruned %d after 31 days, want 2 refresh tokens: %v", n, err)
	}
	a.PostForm("/v1/oauth/token", url.Values{"grant_type": {"refresh_token"}, "client_id": {app.ClientID}, "refresh_token": {next["refresh_token"].(string)}}, nil).
		Expect(t, 400, map[string]any{"error": "invalid_grant"})
}

// Device authorizations and initial access tokens (SPEC §25) go a day after they expire,
// not before: a late poll still hears expired_token meanwhile.
func TestPruningDevicesAndRegistrationTokens(t *testing.T) {
	var pruner *authz.Pruner
	w := newWorld(t, apptest.Stores(t)[0], apptest.WithFx(fx.Populate(&pruner)))
	a := w.a
	cli := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + w.project + "/apps", Header: w.admin.Bearer(),
		Body: map[string]any{"name": "CLI", "type": "cli", "redirectUris": []string{}, "grantTypes": []string{"urn:ietf:params:oauth:grant-type:device_code"}}}).
		Expect(t, 201, nil)["app"].(map[string]any)["clientId"].(string)
	dev := a.PostForm("/v1/oauth/device_authorization", url.Values{"client_id": {cli}, "scope": {"openid"}}, nil).Expect(t, 200, nil)
	a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + w.project + "/apps/registration-tokens", Header: w.admin.Bearer(),
		Body: map[string]any{"expiresInHours": 1}}).Expect(t, 201, nil)
	ctx := context.Background()
	a.Clock.Advance(2 * time.Hour)
	defer a.Clock.Advance(-2 * time.Hour)
	if n, err := pruner.Prune(ctx); err != nil || n != 0 {
		t.Fatalf("pruned %d an hour after expiry: %v", n, err)
	}
	poll := url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:device_code"}, "client_id": {cli}, "device_code": {dev["device_code"].(string)}}
	a.PostForm("/v1/oauth/token", poll, nil).Expect(t, 400, map[string]any{"error": "expired_token"})
	a.Clock.Advance(24 * time.Hour)
	defer a.Clock.Advance(-24 * time.Hour)
	if n, err := pruner.Prune(ctx); err != nil || n != 2 {
		t.Fatalf("pruned %d a day after expiry, want the device authorization and the token: %v", n, err)
	}
}

// newFlowFor is a second request of the same client, for the same resource.
func newFlowFor(f *flow) *flow {
	g := newFlow(f.clientID, f.redirect)
	g.extra = f.extra
	return g
}
