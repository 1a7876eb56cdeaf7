package console_test

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"
	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/internal/browser"
	"github.com/authcore/authcore/platform/config"
)

// SPEC §17 in a real browser whose WebAuthn calls reach Chromium's virtual authenticator
// (the DevTools WebAuthn domain): a person enrols a passkey and a TOTP app in the console,
// gets recovery codes once, signs out and in with the passkey alone, is asked to step up
// before minting an hour later and does it with the passkey, then signs in with the
// password and a code from the app.
func TestConsoleSecondFactors(t *testing.T) {
	var port string
	// WebAuthn takes no IP address for a relying party: the public URL is localhost's.
	a := apptest.Start(t, apptest.Stores(t)[0], apptest.WithConfig(func(c *config.Config) {
		_, port, _ = net.SplitHostPort(c.Addr)
		c.PublicURL = "http://localhost:" + port
		c.AccessTTL = 24 * time.Hour // the fake clock jumps an hour; the page's tokens stay valid
	}))
	base := "http://localhost:" + port
	ctx := browser.Tab(t, nil)
	p := browser.NewPage(t, ctx)
	if _, err := chromedp.Run(ctx, chromedp.Action[webauthn.AddVirtualAuthenticatorResult](func(ctx context.Context, tg *chromedp.Target) (webauthn.AddVirtualAuthenticatorResult, error) {
		if _, err := cdp.Call(ctx, tg, webauthn.Enable, webauthn.EnableParams{}); err != nil {
			return webauthn.AddVirtualAuthenticatorResult{}, err
		}
		return cdp.Call(ctx, tg, webauthn.AddVirtualAuthenticator, webauthn.AddVirtualAuthenticatorParams{Options: &webauthn.VirtualAuthenticatorOptions{
			Protocol: webauthn.AuthenticatorProtocolCtap2, Transport: webauthn.AuthenticatorTransportInternal,
			HasResidentKey: true, HasUserVerification: true, IsUserVerified: true, AutomaticPresenceSimulation: true,
		}})
	})); err != nil {
		t.Fatalf("virtual authenticator: %v", err)
	}
	email, password := apptest.UniqueEmail(t), "correct horse battery"

	p.Do(chromedp.Navigate(base+"/console"), browser.WaitFor("link", "Create an account"), browser.Click("link", "Create an account"), browser.WaitFor("button", "Sign up"),
		browser.TypeInto("textbox", "Email", email), browser.TypeInto("textbox", "Password", password), browser.Click("button", "Sign up"),
		browser.WaitFor("button", "Create project"),
		browser.TypeInto("textbox", "Project name", "Acme"), browser.Click("button", "Create project"), browser.WaitFor("link", "Agent tokens"),
		chromedp.WaitVisible("Acme (current)", chromedp.ByFunc(browser.Text("Acme (current)"))))

	// Enrol a passkey: the first factor shows ten recovery codes, once.
	p.Do(browser.Click("link", "Account"), browser.WaitFor("button", "Add passkey"), browser.Click("button", "Add passkey"),
		browser.WaitFor("region", "Recovery codes"))
	codes := strings.Fields(p.Eval(`document.querySelector('[data-secret="Codes"]').textContent`))
	if len(codes) != 10 {
		t.Fatalf("recovery codes shown: %v", codes)
	}
	p.Do(chromedp.WaitVisible("Passkey", chromedp.ByFunc(browser.Text("Passkey"))))
	p.Shot("passkey-enrolled")

	// Enrol a TOTP app from the QR code's key; the code is the test's, from that key.
	p.Do(browser.Click("button", "Add authenticator app"), browser.WaitFor("image", "QR code for your authenticator app"))
	p.Shot("totp-qr")
	key := p.Eval(`document.querySelector('[data-secret="TOTP key"]').textContent`)
	// A QR code of an otpauth URL has hundreds of dark modules; none drawn is no code.
	if n, _ := strconv.Atoi(p.Eval(`String(document.querySelectorAll('svg.qr rect').length)`)); n < 100 {
		t.Fatalf("the QR code has %d rects drawn", n)
	}
	p.Do(browser.TypeInto("textbox", "Code from the app", code(t, key, a.Clock.Now())), browser.Click("button", "Confirm"),
		chromedp.WaitVisible("Authenticator app", chromedp.ByFunc(browser.Text("Authenticator app"))))
	if strings.Contains(p.Eval(`document.body.innerText`), codes[0]) {
		t.Fatal("the recovery codes are shown again")
	}
	p.Do(chromedp.Navigate(base+"/console#/account"), chromedp.Reload(), browser.WaitFor("button", "New recovery codes"))
	if body := p.Eval(`document.body.innerText`); strings.Contains(body, codes[0]) || strings.Contains(body, key) {
		t.Fatal("a reload shows a secret again")
	}

	// Sign out; sign in with the passkey alone, no email typed (a discoverable credential).
	p.Do(browser.Click("button", "Sign out"), browser.WaitFor("button", "Sign in with a passkey"), browser.Click("button", "Sign in with a passkey"),
		browser.WaitFor("button", "Mint token"))
	p.Shot("signed-in-with-passkey")

	// An hour later, minting asks for a step-up; the passkey gives it and the token is minted.
	a.Clock.Advance(time.Hour)
	p.Do(browser.TypeInto("textbox", "Agent name", "late-bot"), browser.Click("button", "Mint token"),
		browser.WaitFor("heading", "Confirm it is you"))
	p.Shot("step-up")
	p.Do(browser.Click("button", "Use a passkey"), chromedp.WaitVisible(chromedp.CSS("[data-secret]")))
	if tok := p.Eval(`document.querySelector('[data-secret]').textContent`); !strings.HasPrefix(tok, "ac_ai_") {
		t.Fatalf("minted after step-up: %q", tok)
	}

	// Password and a code from the app: the two-step sign-in.
	a.Clock.Advance(time.Minute) // past the step the app's code confirmed
	p.Do(browser.Click("button", "Sign out"), browser.WaitFor("button", "Sign in"),
		browser.TypeInto("textbox", "Email", email), browser.TypeInto("textbox", "Password", password), browser.Click("button", "Sign in"),
		browser.WaitFor("heading", "Two-step sign-in"))
	p.Shot("second-step")
	p.Do(browser.TypeInto("textbox", "Authentication code", code(t, key, a.Clock.Now())), browser.Click("button", "Verify"),
		browser.WaitFor("button", "Mint token"))
}

func code(t *testing.T, key string, at time.Time) string {
	t.Helper()
	c, err := totp.GenerateCodeCustom(key, at, totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
