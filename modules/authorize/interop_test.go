package authorize_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/go-jose/go-jose/v4"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/internal/browser"
	"github.com/authcore/authcore/internal/interop"
)

// Stock clients, unmodified, against authcore as an OpenID Provider and as the
// authorization server of MCP servers (SPEC §21): openid-client with its default
// discovery, oauth4webapi's strict OIDC processing with private_key_jwt, the MCP
// TypeScript SDK's machine clients (secret and private-key JWT) against an MCP server
// built with the SDK that requires mcp:tools, and an SDK host whose client metadata
// document declares private_key_jwt. One authcore serves them all; a person approves in
// headless Chromium.
func TestStockClients(t *testing.T) {
	interop.Dir(t) // skips (or fails in CI) before anything starts, without Node's clients
	w := newWorld(t, apptest.Stores(t)[0])
	iss := w.issuer(t)
	page := browser.NewPage(t, browser.Tab(t, nil))
	approve := func(authorize any) { person(t, page, w.admin, "Approve", nil)(authorize.(string)) }
	const wait = 60 * time.Second

	t.Run("openid-client: discovery, code flow, id_token, userinfo, refresh, logout", func(t *testing.T) {
		rp := interop.Start(t, "openid-client-rp.mjs", "ISSUER="+iss)
		approve(rp.Next(wait)["authorize"])
		logout := rp.Next(wait)["logout"].(string)
		page.Do(chromedp.Navigate(logout))
		res := rp.Next(wait)["result"].(map[string]any)
		claims, info := res["claims"].(map[string]any), res["userinfo"].(map[string]any)
		if claims["sub"] != w.admin.UserID || claims["email"] != w.admin.Email || claims["iss"] != iss || info["sub"] != w.admin.UserID ||
			info["name"] != "Test User" || res["refreshedSub"] != w.admin.UserID || res["logoutState"] != res["expectedState"] {
			t.Fatalf("openid-client saw %v", res)
		}
		// The browser's session ended with the logout.
		page.Do(chromedp.Navigate(w.a.Base + "/healthz"))
		if got := page.Eval(`(() => { const x = new XMLHttpRequest(); x.open('GET', '/v1/auth-core/session/me', false); x.send(); return String(x.status); })()`); got != "401" {
			t.Errorf("session/me after logout answered %s", got)
		}
	})

	t.Run("oauth4webapi: strict OIDC with private_key_jwt", func(t *testing.T) {
		rp := interop.Start(t, "oauth4webapi-rp.mjs", "ISSUER="+iss)
		approve(rp.Next(wait)["authorize"])
		res := rp.Next(wait)["result"].(map[string]any)
		claims := res["claims"].(map[string]any)
		if claims["sub"] != w.admin.UserID || claims["email"] != w.admin.Email || res["userinfo"].(map[string]any)["email"] != w.admin.Email ||
			res["replayRefused"] != true {
			t.Fatalf("oauth4webapi saw %v", res)
		}
	})

	// The MCP server of both MCP cases, registered as the project's resource with the
	// scope it requires.
	port := freePort(t)
	server := interop.Start(t, "mcp-server.mjs", "ISSUER="+iss, fmt.Sprint("PORT=", port), "REQUIRED_SCOPE=mcp:tools")
	mcpURL := server.Next(wait)["ready"].(string)
	w.a.RegisterResource(t, w.admin, w.project, mcpURL, []string{"mcp:tools"})

	t.Run("MCP SDK machine clients: client secret and private-key JWT", func(t *testing.T) {
		cl := w.a.MintAuthClient(t, w.admin, w.project, nil)
		base := "/v1/projects/" + w.project + "/service-badges/" + cl.BadgeID
		w.a.Do(apptest.Req{Method: http.MethodPut, Path: base + "/scopes", Body: map[string]any{"scopes": []string{"mcp:tools"}}, Header: w.admin.Bearer()}).Expect(t, 200, nil)
		// With scope=mcp:tools configured, as the client asks; and with none, when
		// the server gives what the client holds that the resource allows.
		for _, scope := range []string{"SCOPE=mcp:tools", "SCOPE="} {
			got := interop.Start(t, "mcp-machine-client.mjs", "SERVER="+mcpURL, "ISSUER="+iss, "AUTH=secret", "CLIENT_ID="+cl.ID, "CLIENT_SECRET="+cl.Secret, scope).Next(wait)
			if want := "client=" + cl.ID + " sub=" + cl.ID + " scope=mcp:tools"; got["result"] != want {
				t.Fatalf("secret client (%s): %v, want %q", scope, got, want)
			}
		}
		priv, pemKey := ecKey(t)
		w.a.Do(apptest.Req{Method: http.MethodPost, Path: base + "/keys", Body: map[string]any{"jwk": jose.JSONWebKey{Key: &priv.PublicKey, Algorithm: "ES256", Use: "sig"}},
			Header: w.admin.Bearer()}).Expect(t, 201, nil)
		got := interop.Start(t, "mcp-machine-client.mjs", "SERVER="+mcpURL, "ISSUER="+iss, "AUTH=private_key_jwt", "CLIENT_ID="+cl.ID, "PRIVATE_KEY_PEM="+pemKey, "SCOPE=mcp:tools").Next(wait)
		if !strings.HasPrefix(fmt.Sprint(got["result"]), "client="+cl.ID) {
			t.Fatalf("private-key JWT client: %v", got)
		}
	})

	t.Run("MCP SDK host with a private_key_jwt client metadata document", func(t *testing.T) {
		priv, _ := ecKey(t)
		pub, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &priv.PublicKey, KeyID: "host-key", Algorithm: "ES256", Use: "sig"}}})
		w.serve("/host-jwks.json", pub)
		private, _ := json.Marshal(jose.JSONWebKey{Key: priv, KeyID: "host-key", Algorithm: "ES256"})
		redirectPort := freePort(t)
		callback := fmt.Sprintf("http://127.0.0.1:%d/callback", redirectPort)
		id := w.cimd.URL + "/client.json"
		w.cimdDoc.Store(&map[string]any{"client_id": id, "client_name": "Interop Host", "redirect_uris": []string{callback},
			"grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"},
			"token_endpoint_auth_method": "private_key_jwt", "jwks_uri": w.cimd.URL + "/host-jwks.json"})
		host := interop.Start(t, "mcp-host-cimd.mjs", "SERVER="+mcpURL, "CLIENT_METADATA_URL="+id, "PRIVATE_JWK="+string(private),
			fmt.Sprint("REDIRECT_PORT=", redirectPort))
		approve(host.Next(wait)["authorize"])
		got := host.Next(wait)
		if want := "client=" + id + " sub=" + w.admin.UserID; !strings.HasPrefix(fmt.Sprint(got["result"]), want) || !strings.Contains(fmt.Sprint(got["result"]), "mcp:tools") {
			t.Fatalf("host: %v, want %q… with mcp:tools", got, want)
		}
	})
}

// ecKey is a P-256 key and its private half as PKCS #8 PEM.
func ecKey(t *testing.T) (*ecdsa.PrivateKey, string) {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return priv, string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
}

// freePort is a loopback port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// backChannel is an app's back-channel logout endpoint on loopback: it verifies each
// logout_token against authcore's JWKS with go-oidc's remote key set and keeps the claims.
type backChannel struct {
	url    string
	tokens chan map[string]any
}

func newBackChannel(t *testing.T, jwks string) *backChannel {
	keys := oidc.NewRemoteKeySet(context.Background(), jwks)
	b := &backChannel{tokens: make(chan map[string]any, 4)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		payload, err := keys.VerifySignature(r.Context(), r.PostForm.Get("logout_token"))
		var claims map[string]any
		if err != nil || json.Unmarshal(payload, &claims) != nil {
			http.Error(w, "bad logout token", http.StatusBadRequest)
			return
		}
		b.tokens <- claims
	}))
	t.Cleanup(srv.Close)
	b.url = srv.URL + "/backchannel"
	return b
}

func (b *backChannel) next(t *testing.T) map[string]any {
	t.Helper()
	select {
	case c := <-b.tokens:
		return c
	case <-time.After(15 * time.Second):
		t.Fatal("no logout token reached the app's back-channel")
		return nil
	}
}

// What a platform's people do with two of its apps (SPEC §25), with openid-client as both
// relying parties, registered through the project's apps API: a person of the project
// signs in to the first with a password and a second factor, opens the second and is in
// without typing anything (one sid), signs out of the first, and both apps hear it on
// their back-channel.
func TestAppsWithOpenIDClient(t *testing.T) {
	interop.Dir(t)
	w := newWorld(t, apptest.Stores(t)[0])
	a := w.a
	iss := w.issuer(t)
	person := a.SignUpIn(t, w.project)
	key := enrolTOTP(t, a, person)
	a.Clock.Advance(30 * time.Second) // the enrolment's code is spent: the next one
	const wait = 60 * time.Second
	type app struct {
		env  []string
		back *backChannel
	}
	register := func(name string) app {
		port, bye := freePort(t), freePort(t)
		back := newBackChannel(t, a.Base+"/.well-known/jwks.json")
		got := createApp(t, a, w.admin, w.project, map[string]any{"name": name, "type": "web",
			"redirectUris": []string{fmt.Sprintf("http://127.0.0.1:%d/cb", port)}, "postLogoutRedirectUris": []string{fmt.Sprintf("http://127.0.0.1:%d/bye", bye)},
			"backchannelLogoutUri": back.url})
		return app{back: back, env: []string{"ISSUER=" + iss, "CLIENT_ID=" + got["app"].(map[string]any)["clientId"].(string),
			"CLIENT_SECRET=" + got["clientSecret"].(string), fmt.Sprint("PORT=", port), fmt.Sprint("BYE_PORT=", bye), "STEPS=-"}}
	}
	mail, calendar := register("Mail"), register("Calendar")
	page := freshBrowser(t)

	first := interop.Start(t, "openid-client-app.mjs", mail.env...)
	page.Do(chromedp.Navigate(first.Next(wait)["authorize"].(string)), browser.WaitFor("button", "Sign in"),
		browser.TypeInto("textbox", "Email", person.Email), browser.TypeInto("textbox", "Password", person.Password),
		browser.Click("button", "Sign in"), browser.WaitFor("textbox", "Authentication code"),
		browser.TypeInto("textbox", "Authentication code", totpCode(t, key, a.Clock.Now())), browser.Click("button", "Verify"))
	one := first.Next(wait)["claims"].(map[string]any)

	second := interop.Start(t, "openid-client-app.mjs", calendar.env...)
	page.Do(chromedp.Navigate(second.Next(wait)["authorize"].(string)))
	two := second.Next(wait)["claims"].(map[string]any)
	if one["sub"] != person.UserID || two["sub"] != person.UserID || one["sid"] == nil || one["sid"] != two["sid"] || one["acr"] != "urn:authcore:acr:mfa" {
		t.Fatalf("the apps saw %v and %v", one, two)
	}

	page.Do(chromedp.Navigate(first.Next(wait)["logout"].(string)))
	if got := first.Next(wait); got["loggedOut"] != true {
		t.Fatalf("logout: %v", got)
	}
	for _, b := range []*backChannel{mail.back, calendar.back} {
		if c := b.next(t); c["sid"] != one["sid"] || c["sub"] != person.UserID || c["iss"] != iss {
			t.Fatalf("logout token %v", c)
		}
	}
}
