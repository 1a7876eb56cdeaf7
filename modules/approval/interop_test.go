package approval_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/internal/browser"
	"github.com/authcore/authcore/internal/interop"
)

// realTime moves the app's clock with the wall clock while a stock client polls at its
// own pace (it sleeps the interval for real), and stops when the test ends.
func realTime(t testing.TB, a *apptest.App) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		last := time.Now()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-tick.C:
				a.Clock.Advance(now.Sub(last))
				last = now
			}
		}
	}()
}

var link = regexp.MustCompile(`http://\S+#/approvals\?request=bcr_\w+`)

// The person's side in Chromium, the agent's with openid-client's CIBA support (SPEC
// §23): the mailed link opens the request on the person's console, where the binding
// message and every field of the invoice are drawn from the registered schema; approving
// gives the agent a token with exactly those details, denying gives it access_denied;
// in ping mode the agent's endpoint receives a ping it can verify (bearer token and
// Standard Webhooks signature) and then collects the token.
func TestCIBAWithOpenIDClientAndAPersonInChromium(t *testing.T) {
	interop.Dir(t)
	w := newWorld(t, apptest.Stores(t)[0])
	realTime(t, w.a)
	page := browser.NewPage(t, browser.Tab(t, nil))
	const wait = 60 * time.Second
	env := []string{"ISSUER=" + w.a.Config.PublicURL, "CLIENT_ID=" + w.agentID, "CLIENT_SECRET=" + w.agent, "LOGIN_HINT=" + w.person.Email,
		"DETAILS=" + invoice, "BINDING=Pay INV-1042", "SCOPE=openid payments:write"}
	signedIn := false
	// open follows the n-th mail's link to the request, signing in the first time.
	open := func(n int) {
		mails := w.inbox.Wait(t, n)
		url := link.FindString(mails[n-1].Text)
		if url == "" {
			t.Fatalf("no link to the request in %q", mails[n-1].Text)
		}
		page.Do(chromedp.Navigate(url))
		if !signedIn {
			page.Do(browser.WaitFor("button", "Sign in"), browser.TypeInto("textbox", "Email", w.person.Email),
				browser.TypeInto("textbox", "Password", w.person.Password), browser.Click("button", "Sign in"))
			signedIn = true
		} else {
			page.Do(chromedp.Reload())
		}
		page.Do(browser.WaitFor("article", "Request from billing-bot"))
	}

	t.Run("approve", func(t *testing.T) {
		agent := interop.Start(t, "ciba-client.mjs", env...)
		if s := agent.Next(wait)["started"].(map[string]any); s["interval"] != float64(1) || s["expires_in"] != float64(300) {
			t.Fatalf("started: %v", s)
		}
		open(1)
		body := page.Eval(`document.querySelector('main').innerText`)
		for _, want := range []string{"Pay INV-1042", "Pay an invoice", "Invoice", "INV-1042", "Amount", "123.5", "Currency", "EUR", "Creditor", "Acme GmbH", "IBAN", "DE89370400440532013000"} {
			if !strings.Contains(body, want) {
				t.Fatalf("the request shows no %q:\n%s", want, body)
			}
		}
		if got := page.Eval(`document.querySelector('.binding').textContent`); got != "Pay INV-1042" {
			t.Fatalf("binding message shown as %q", got)
		}
		page.Shot("approval-request")
		page.Do(browser.Click("button", "Approve"), chromedp.WaitVisible("This request is approved.", chromedp.ByFunc(browser.Text("This request is approved."))))
		res := agent.Next(wait)["result"].(map[string]any)
		if res["error"] != nil || res["sub"] != w.person.UserID || res["scope"] != "openid payments:write" || !jsonEqual(t, res["authorization_details"], invoice) {
			t.Fatalf("openid-client got %v", res)
		}
		if c := claims(t, res["access_token"].(string)); !jsonEqual(t, c["authorization_details"], invoice) {
			t.Fatalf("the access token carries %v", c["authorization_details"])
		}
	})

	t.Run("deny", func(t *testing.T) {
		agent := interop.Start(t, "ciba-client.mjs", env...)
		agent.Next(wait)
		open(2)
		page.Do(browser.Click("button", "Deny"), chromedp.WaitVisible("This request is denied.", chromedp.ByFunc(browser.Text("This request is denied."))))
		if res := agent.Next(wait)["result"].(map[string]any); res["error"] != "access_denied" {
			t.Fatalf("openid-client got %v after a denial", res)
		}
	})

	t.Run("expiry", func(t *testing.T) {
		agent := interop.Start(t, "ciba-client.mjs", append(env, "EXPIRY=3")...)
		agent.Next(wait)
		if res := agent.Next(wait)["result"].(map[string]any); res["error"] == nil || res["access_token"] != nil {
			t.Fatalf("openid-client got %v for an expired request", res)
		}
		// The person arrives too late.
		open(3)
		page.Do(chromedp.WaitVisible("This request is expired.", chromedp.ByFunc(browser.Text("This request is expired."))))
		if page.Eval(`String(document.querySelectorAll('button.approve').length)`) != "0" {
			t.Fatal("an expired request offers Approve")
		}
	})

	t.Run("refusals", func(t *testing.T) {
		outside := newProjectPerson(t, w)
		agent := interop.Start(t, "ciba-client.mjs", append(env, "REFUSALS=1", "LOGIN_HINT_OUTSIDE="+outside,
			`DETAILS_UNREGISTERED=[{"type":"account_information","accounts":["DE89"]}]`,
			"DETAILS_TAMPERED="+strings.Replace(invoice, "123.5", `"123.5; DROP"`, 1))...)
		got := agent.Next(wait)["refusals"].(map[string]any)
		want := map[string]any{"unregisteredType": "invalid_authorization_details", "tamperedDetails": "invalid_authorization_details",
			"outsideHint": "unknown_user_id", "tooFast": "slow_down", "detailsAtTheTokenEndpoint": "invalid_authorization_details"}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: openid-client saw %v, want %v", k, got[k], v)
			}
		}
		w.deny(t, w.pending(t)["id"].(string)).Expect(t, 200, nil) // the one request it made that was valid
		w.inbox.Wait(t, 4)
	})

	t.Run("ping", func(t *testing.T) {
		port := freePort(t)
		set := w.a.Do(apptest.Req{Method: http.MethodPut, Path: "/v1/projects/" + w.project + "/oauth/backchannel-clients/" + w.agentID,
			Body: map[string]any{"deliveryMode": "ping", "notificationEndpoint": fmt.Sprintf("http://127.0.0.1:%d/ping", port)}, Header: w.admin.Bearer()}).
			Expect(t, 200, map[string]any{"deliveryMode": "ping"})
		agent := interop.Start(t, "ciba-client.mjs", append(env, fmt.Sprintf("PING_PORT=%d", port), "PING_SECRET="+set["secret"].(string))...)
		agent.Next(wait)
		open(5)
		page.Do(browser.Click("button", "Approve"), chromedp.WaitVisible("This request is approved.", chromedp.ByFunc(browser.Text("This request is approved."))))
		if p := agent.Next(wait)["ping"].(map[string]any); p["bearer"] != true || p["signed"] != true || p["sameRequest"] != true {
			t.Fatalf("the ping: %v", p)
		}
		if res := agent.Next(wait)["result"].(map[string]any); !jsonEqual(t, res["authorization_details"], invoice) {
			t.Fatalf("openid-client got %v after the ping", res)
		}
	})
}

func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// A project's admin registers a type on the console's Approval types screen, and removes
// it (SPEC §23).
func TestConsoleApprovalTypes(t *testing.T) {
	w := newWorld(t, apptest.Stores(t)[0])
	page := browser.NewPage(t, browser.Tab(t, nil))
	page.Do(chromedp.Navigate(w.a.Base+"/console"), browser.WaitFor("button", "Sign in"),
		browser.TypeInto("textbox", "Email", w.admin.Email), browser.TypeInto("textbox", "Password", w.admin.Password),
		browser.Click("button", "Sign in"), browser.WaitFor("link", "Approval types"), browser.Click("link", "Approval types"),
		browser.WaitFor("button", "Register type"), chromedp.WaitVisible("Pay an invoice", chromedp.ByFunc(browser.Text("Pay an invoice"))))
	page.Do(browser.TypeInto("textbox", "Type", "account_information"), browser.TypeInto("textbox", "Name shown to people", "Read your accounts"),
		browser.Click("button", "Register type"), chromedp.WaitVisible("Read your accounts", chromedp.ByFunc(browser.Text("Read your accounts"))))
	page.Shot("approval-types")
	got := w.a.Do(apptest.Req{Path: "/v1/projects/" + w.project + "/oauth/authorization-details", Header: w.admin.Bearer()}).Expect(t, 200, nil)
	if n := len(got["types"].([]any)); n != 2 {
		t.Fatalf("%d types after registering one on the console", n)
	}
	page.Do(browser.Click("button", "Remove account_information"), chromedp.Click(chromedp.CSS("#confirm-yes")),
		chromedp.WaitNotPresent(`//*[contains(text(), "Read your accounts")]`))
	got = w.a.Do(apptest.Req{Path: "/v1/projects/" + w.project + "/oauth/authorization-details", Header: w.admin.Bearer()}).Expect(t, 200, nil)
	if n := len(got["types"].([]any)); n != 1 {
		t.Fatalf("%d types after removing one on the console", n)
	}
}
