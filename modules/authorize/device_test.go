package authorize_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"golang.org/x/oauth2"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/internal/browser"
)

const deviceGrant = "urn:ietf:params:oauth:grant-type:device_code"

// cliApp registers a CLI app of project that uses the device grant, and its x/oauth2
// configuration.
func cliApp(t *testing.T, a *apptest.App, admin *apptest.Session, project string, grants ...string) oauth2.Config {
	t.Helper()
	if grants == nil {
		grants = []string{deviceGrant, "refresh_token"}
	}
	got := createApp(t, a, admin, project, map[string]any{"name": "Acme CLI", "type": "cli", "tokenEndpointAuthMethod": "none",
		"grantTypes": grants, "redirectUris": []string{"http://127.0.0.1/cb"}})
	return oauth2.Config{ClientID: got["app"].(map[string]any)["clientId"].(string), Scopes: []string{"openid", "profile", "offline_access"},
		Endpoint: oauth2.Endpoint{DeviceAuthURL: a.Base + "/v1/oauth/device_authorization", TokenURL: a.Base + "/v1/oauth/token"}}
}

// poll asks the token endpoint once for the device code's tokens.
func poll(a *apptest.App, cfg oauth2.Config, deviceCode string) *apptest.Response {
	return a.PostForm("/v1/oauth/token", url.Values{"grant_type": {deviceGrant}, "client_id": {cfg.ClientID}, "device_code": {deviceCode}}, nil)
}

// A CLI of a project gets tokens with the device grant (RFC 8628, SPEC §25): x/oauth2
// asks for a code, the project's user approves it on the console's page in Chromium,
// and x/oauth2's poll gets an access token, a refresh token and an id_token. Until then
// the token endpoint says authorization_pending, and slow_down to a device polling too
// fast; a device code is used once.
func TestDeviceGrant(t *testing.T) {
	w := newWorld(t, apptest.Stores(t)[0])
	a := w.a
	person := a.SignUpIn(t, w.project)
	cfg := cliApp(t, a, w.admin, w.project)
	ctx := context.Background()
	da, err := cfg.DeviceAuth(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$`).MatchString(da.UserCode) || da.Interval != 5 ||
		!strings.HasPrefix(da.VerificationURI, a.Config.SelfURL()+"/console/device") || !strings.Contains(da.VerificationURIComplete, "user_code=") {
		t.Fatalf("device authorization %+v", da)
	}
	poll(a, cfg, da.DeviceCode).Expect(t, 400, map[string]any{"error": "authorization_pending"})
	poll(a, cfg, da.DeviceCode).Expect(t, 400, map[string]any{"error": "slow_down"})

	page := freshBrowser(t)
	page.Do(chromedp.Navigate(da.VerificationURIComplete), browser.WaitFor("button", "Sign in"),
		browser.TypeInto("textbox", "Email", person.Email), browser.TypeInto("textbox", "Password", person.Password),
		browser.Click("button", "Sign in"), browser.WaitFor("button", "Continue"), browser.Click("button", "Continue"),
		browser.WaitFor("button", "Approve"))
	if got := page.Eval(`document.querySelector('[aria-label="Application"]').textContent`); got != "Acme CLI" {
		t.Fatalf("the page names %q", got)
	}
	page.Do(browser.Click("button", "Approve"), browser.WaitFor("heading", "Device connected"))

	tok, err := cfg.DeviceAccessToken(ctx, da) // x/oauth2 waits the interval, then polls
	if err != nil {
		t.Fatal(err)
	}
	if tok.AccessToken == "" || tok.RefreshToken == "" || tok.Extra("id_token") == nil {
		t.Fatalf("tokens %+v", tok)
	}
	info := a.Do(apptest.Req{Path: "/v1/oauth/userinfo", Header: map[string]string{"Authorization": "Bearer " + tok.AccessToken}}).Expect(t, 200, nil)
	if info["sub"] != person.UserID {
		t.Fatalf("userinfo %v", info)
	}
	a.Clock.Advance(6 * time.Second)
	poll(a, cfg, da.DeviceCode).Expect(t, 400, map[string]any{"error": "invalid_grant"})
}

// Each refusal of the device flow, its own case.
func TestDeviceRefusals(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		w := newWorld(t, st)
		a := w.a
		person := a.SignUpIn(t, w.project)
		cfg := cliApp(t, a, w.admin, w.project)
		start := func() *oauth2.DeviceAuthResponse {
			da, err := cfg.DeviceAuth(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			return da
		}
		lookup := func(s *apptest.Session, code string) *apptest.Response {
			return a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/device/lookup", Header: s.Bearer(), Body: map[string]any{"userCode": code}})
		}
		decide := func(s *apptest.Session, code, decision string) *apptest.Response {
			csrf := lookup(s, code).Expect(t, 200, nil)["csrfToken"]
			return a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/device/decide", Header: s.Bearer(),
				Body: map[string]any{"userCode": code, "decision": decision, "csrfToken": csrf}})
		}

		t.Run("a client not registered for the grant", func(t *testing.T) {
			other := cliApp(t, a, w.admin, w.project, "authorization_code")
			a.PostForm("/v1/oauth/device_authorization", url.Values{"client_id": {other.ClientID}, "scope": {"openid"}}, nil).
				Expect(t, 400, map[string]any{"error": "unauthorized_client"})
		})
		t.Run("denied", func(t *testing.T) {
			da := start()
			decide(person, da.UserCode, "deny").Expect(t, 200, map[string]any{"decision": "deny"})
			poll(a, cfg, da.DeviceCode).Expect(t, 400, map[string]any{"error": "access_denied"})
			lookup(person, da.UserCode).Expect(t, 404, map[string]any{"code": "invalid_user_code"}) // answered: single use
		})
		t.Run("expired", func(t *testing.T) {
			da := start()
			a.Clock.Advance(10*time.Minute + time.Second)
			poll(a, cfg, da.DeviceCode).Expect(t, 400, map[string]any{"error": "expired_token"})
			lookup(person, strings.ToLower(da.UserCode)).Expect(t, 404, map[string]any{"code": "invalid_user_code"})
		})
		t.Run("a user of another project", func(t *testing.T) {
			da := start()
			stranger := a.SignUpIn(t, a.CreateProject(t, w.admin))
			lookup(stranger, da.UserCode).Expect(t, 403, map[string]any{"code": "tenant_session_required"})
			lookup(w.admin, da.UserCode).Expect(t, 403, map[string]any{"code": "tenant_session_required"})
		})
		t.Run("missing and wrong fields", func(t *testing.T) {
			a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/device/lookup", Header: person.Bearer(), Body: map[string]any{}}).Expect(t, 400, nil)
			a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/device/lookup", Header: person.Bearer(), Body: map[string]any{"userCode": 7}}).Expect(t, 400, nil)
			a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/device/decide", Header: person.Bearer(),
				Body: map[string]any{"userCode": "BCDF-GHJK", "decision": "maybe", "csrfToken": "x"}}).Expect(t, 400, nil)
			a.PostForm("/v1/oauth/token", url.Values{"grant_type": {deviceGrant}, "client_id": {cfg.ClientID}}, nil).
				Expect(t, 400, map[string]any{"error": "invalid_request"})
			a.PostForm("/v1/oauth/token", url.Values{"grant_type": {deviceGrant}, "client_id": {cfg.ClientID}, "device_code": {"ac_dvc_nothing"}}, nil).
				Expect(t, 400, map[string]any{"error": "invalid_grant"})
		})
	})
}

// Wrong user codes spend a budget per browser and per address: five, then even the right
// code is refused for a while (RFC 8628 §5.1).
func TestDeviceUserCodeBudget(t *testing.T) {
	w := newWorld(t, apptest.Stores(t)[0])
	a := w.a
	person := a.SignUpIn(t, w.project)
	cfg := cliApp(t, a, w.admin, w.project)
	da, err := cfg.DeviceAuth(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	lookup := func(code string) *apptest.Response {
		return a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/device/lookup", Header: person.Bearer(), Body: map[string]any{"userCode": code}})
	}
	for i := range 5 {
		lookup("BBBB-BBB"+string(rune('B'+i))).Expect(t, 404, map[string]any{"code": "invalid_user_code"})
	}
	lookup(da.UserCode).Expect(t, 429, map[string]any{"code": "rate_limited"}) // the right one, too late
	poll(a, cfg, da.DeviceCode).Expect(t, 400, map[string]any{"error": "authorization_pending"})
}
