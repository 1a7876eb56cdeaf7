package account_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authcore/authcore/ent/user"
	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/internal/testkit"
	"github.com/authcore/authcore/platform/config"
)

// SPEC §9a: a reset request carrying a forged Host or X-Forwarded-Host must not make the
// victim's genuine mail link to the attacker's host, whether or not a public URL is set.
func TestMailLinksNeverFollowTheRequestHost(t *testing.T) {
	forged := map[string]string{"Host": "attacker.example", "X-Forwarded-Host": "attacker.example", "X-Forwarded-Proto": "https"}
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		t.Run("with AUTHCORE_PUBLIC_URL", func(t *testing.T) {
			in := testkit.StartInbox(t)
			a := apptest.Start(t, st, withInbox(in), apptest.WithConfig(func(c *config.Config) { c.PublicURL = "https://auth.example.com/" }))
			u := a.SignUp(t)
			post(a, "/v1/auth-core/password/reset-request", map[string]any{"email": u.Email}, forged).Expect(t, 202, nil)
			post(a, "/v1/auth-core/email/verify-request", nil, merge(u.Bearer(), forged)).Expect(t, 202, nil)
			for _, m := range in.Wait(t, 2) {
				if strings.Contains(m.Text+m.HTML, "attacker.example") || !strings.Contains(m.Text, "https://auth.example.com/console/") {
					t.Fatalf("the link follows the request:\n%s", m.Text)
				}
			}
		})
		t.Run("unset: http://localhost and the listen port", func(t *testing.T) {
			in := testkit.StartInbox(t)
			var port string
			a := apptest.Start(t, st, withInbox(in), apptest.WithConfig(func(c *config.Config) {
				c.PublicURL = ""
				_, port, _ = net.SplitHostPort(c.Addr)
			}))
			u := a.SignUp(t)
			post(a, "/v1/auth-core/password/reset-request", map[string]any{"email": u.Email}, forged).Expect(t, 202, nil)
			m := in.Wait(t, 1)[0]
			if want := "http://localhost:" + port + "/console/reset?token=ac_rst_"; !strings.Contains(m.Text, want) || strings.Contains(m.Text, "attacker") {
				t.Fatalf("want a link under %s:\n%s", want, m.Text)
			}
			if !a.Logs.Contains("AUTHCORE_PUBLIC_URL is not set") {
				t.Fatal("no warning at start without a public URL")
			}
		})
	})
}

func merge(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// SPEC §9a: verification mails are capped like reset mails, 3 an hour per account, so a
// signed-in stranger cannot mail-bomb an address they typed in.
func TestVerificationMailsAreCapped(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		in := testkit.StartInbox(t)
		a := apptest.Start(t, st, withInbox(in))
		u := a.SignUp(t)
		for range 20 {
			post(a, "/v1/auth-core/email/verify-request", nil, u.Bearer()).Expect(t, 202, map[string]any{"ok": true})
		}
		in.Wait(t, 3)
		time.Sleep(300 * time.Millisecond)
		if n := len(in.Mails()); n != 3 {
			t.Fatalf("%d verification mails in an hour, want 3", n)
		}
		a.Clock.Advance(61 * time.Minute)
		r := post(a, "/v1/auth-core/signin", map[string]any{"email": u.Email, "password": u.Password}, nil).Expect(t, 200, nil)
		again := &apptest.Session{AccessToken: r["session"].(map[string]any)["accessToken"].(string)}
		post(a, "/v1/auth-core/email/verify-request", nil, again.Bearer()).Expect(t, 202, nil)
		in.Wait(t, 4)
	})
}

// SPEC §9a: display names refuse control characters, and what an older record holds
// never stands on a line of its own in a mail's text part.
func TestDisplayNamesStayInline(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		in := testkit.StartInbox(t)
		a := apptest.Start(t, st, withInbox(in))
		for _, name := range []string{"Eve\n\nClick https://evil.example", "Eve\rX", "Eve\u0000", "Eve\u0085next"} {
			post(a, "/v1/auth-core/signup", map[string]any{"email": apptest.UniqueEmail(t), "password": "correct horse battery", "name": name}, nil).
				Expect(t, 400, map[string]any{"code": "validation_failed", "issues": []any{map[string]any{"field": "name", "reason": "must not contain control characters"}}})
		}
		u := a.SignUp(t)
		// A name stored before the rule existed.
		meta := fmt.Sprintf(`{"name":%q}`, "Eve\n\nUrgent: open https://evil.example now\n")
		if err := a.Ent.User.Update().Where(user.ID(u.UserID)).SetMetadata(meta).Exec(context.Background()); err != nil {
			t.Fatal(err)
		}
		post(a, "/v1/auth-core/password/reset-request", map[string]any{"email": u.Email}, nil).Expect(t, 202, nil)
		text := in.Wait(t, 1)[0].Text
		for _, line := range strings.Split(text, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "Urgent") {
				t.Fatalf("user text stands on a line of its own:\n%s", text)
			}
		}
		if !strings.Contains(text, `Your name: "Eve\n\nUrgent: open https://evil.example now\n"`) {
			t.Fatalf("the name is not in its labelled place:\n%s", text)
		}
	})
}

// SPEC §9b (N5): what users choose — a display name, a project's name — appears in a
// mail only quoted after its own label, never in the subject, a sentence or a line of its
// own. The attack: a project named "Click here: https://evil.example" and an end user
// named with a line break and a bidi override asked for a reset and a verification mail;
// the names read as the text of the mail.
func TestMailsQuoteUserText(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		in := testkit.StartInbox(t)
		a := apptest.Start(t, st, withInbox(in))
		admin := a.SignUp(t)
		projectName := `Click here: https://evil.example "now" \ ‮exe.pdf`
		prj := post(a, "/v1/projects", map[string]any{"name": projectName}, admin.Bearer()).Expect(t, 201, nil)["id"].(string)
		u := a.SignUpIn(t, prj)
		// A name stored before names refused control characters.
		name := "Eve\n\nYour account is locked. Click here: https://evil.example\r\n‮"
		meta, _ := json.Marshal(map[string]string{"name": name})
		if err := a.Ent.User.Update().Where(user.ID(u.UserID)).SetMetadata(string(meta)).Exec(context.Background()); err != nil {
			t.Fatal(err)
		}
		post(a, "/v1/auth-core/password/reset-request", map[string]any{"email": u.Email, "tenantId": prj}, nil).Expect(t, 202, nil)
		post(a, "/v1/auth-core/email/verify-request", nil, u.Bearer()).Expect(t, 202, nil)
		mails := in.Wait(t, 2)
		labels := map[string]string{"Project": projectName, "Your name": name, "Email": u.Email}
		for _, m := range mails {
			for _, hostile := range []string{"evil", "‮", projectName, "locked"} {
				if strings.Contains(m.Subject, hostile) {
					t.Fatalf("the subject carries user text: %q", m.Subject)
				}
			}
			// Text part: every line with user text is "<label>: <Go-quoted value>", and the
			// value unquotes to exactly what the user chose.
			seen := map[string]bool{}
			for _, line := range strings.Split(m.Text, "\n") {
				if !strings.Contains(line, "evil") && !strings.Contains(line, "‮") && !strings.Contains(line, "locked") {
					continue
				}
				label, value, ok := strings.Cut(strings.TrimSpace(line), ": ")
				want, known := labels[label]
				got, err := strconv.Unquote(value)
				if !ok || !known || err != nil || got != want {
					t.Fatalf("user text outside a labelled, quoted place: %q\n%s", line, m.Text)
				}
				seen[label] = true
			}
			if !seen["Project"] || !seen["Your name"] {
				t.Fatalf("the project or the name is missing from its labelled place:\n%s", m.Text)
			}
			// HTML part: user text only in the cell beside its row's label.
			cells := regexp.MustCompile(`<tr><th scope="row" align="left">([^<]+)</th><td>([^<]*)</td></tr>`).FindAllStringSubmatch(m.HTML, -1)
			rest := m.HTML
			for _, c := range cells {
				got, err := strconv.Unquote(html.UnescapeString(c[2]))
				if want, known := labels[c[1]]; !known || err != nil || got != want {
					t.Fatalf("HTML cell %q: %q, %v", c[1], got, err)
				}
				rest = strings.Replace(rest, c[0], "", 1)
			}
			if len(cells) != 3 || strings.Contains(rest, "evil") || strings.Contains(rest, "locked") || strings.Contains(rest, "‮") {
				t.Fatalf("user text outside the labelled cells of the HTML part:\n%s", m.HTML)
			}
		}
	})
}

func deviceCookieOf(t *testing.T, r *apptest.Response) *http.Cookie {
	t.Helper()
	for _, c := range (&http.Response{Header: r.Header}).Cookies() {
		if c.Name == "acDevice" {
			if !c.HttpOnly || c.Path != "/v1/auth-core" || c.SameSite != http.SameSiteStrictMode {
				t.Fatalf("device cookie attributes %+v", c)
			}
			return &http.Cookie{Name: c.Name, Value: c.Value}
		}
	}
	t.Fatalf("no device cookie in %v", r.Header)
	return nil
}

// SPEC §9a, OWASP device cookies: an attacker who empties an account's budget keeps out
// sign-ins from unknown browsers, not the owner's own; a device has a budget of its own.
func TestDeviceCookieKeepsTheOwnerIn(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := apptest.Start(t, st, apptest.WithConfig(func(c *config.Config) { c.RateLimit = 1000 }))
		owner, other := a.SignUp(t), a.SignUp(t)
		in := func(email, password string, cookies ...*http.Cookie) *apptest.Response {
			return a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signin", Cookies: cookies,
				Body: map[string]any{"email": email, "password": password}})
		}
		ok := func(r *apptest.Response) *apptest.Response { r.Expect(t, 200, nil); return r }
		mine := deviceCookieOf(t, ok(in(owner.Email, owner.Password)))
		theirs := deviceCookieOf(t, ok(in(other.Email, other.Password)))

		for range 10 { // the attacker, from anywhere, without the owner's cookie
			in(owner.Email, "wrong password").Expect(t, 401, map[string]any{"code": "invalid_credentials"})
		}
		in(owner.Email, owner.Password).Expect(t, 429, map[string]any{"code": "rate_limited"})
		in(owner.Email, owner.Password, theirs).Expect(t, 429, nil) // a cookie of another account is no help
		in(owner.Email, owner.Password, &http.Cookie{Name: "acDevice", Value: "forged.0000"}).Expect(t, 429, nil)
		mine = deviceCookieOf(t, ok(in(owner.Email, owner.Password, mine))) // the owner's browser is let in

		// The device's own budget: a stolen cookie buys 10 guesses, not more.
		for range 10 {
			in(owner.Email, "wrong password", mine).Expect(t, 401, nil)
		}
		in(owner.Email, owner.Password, mine).Expect(t, 429, map[string]any{"code": "rate_limited"})
	})
}

// SPEC §9a: the budget is spent before the hash, so parallel wrong passwords from many
// addresses stop at 10 (the review saw 60 of 60 reach the hash).
func TestParallelWrongPasswordsStopAtTheBudget(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := apptest.Start(t, st, apptest.WithConfig(func(c *config.Config) { c.RateLimit = 1000 }))
		victim := a.SignUp(t)
		var mu sync.Mutex
		counts := map[int]int{}
		var wg sync.WaitGroup
		for range 40 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/signin",
					Body: map[string]any{"email": victim.Email, "password": "wrong password"}})
				mu.Lock()
				counts[r.Status]++
				mu.Unlock()
			}()
		}
		wg.Wait()
		if counts[401] != 10 || counts[429] != 30 {
			t.Fatalf("answers %v, want 10×401 and 30×429", counts)
		}
	})
}
