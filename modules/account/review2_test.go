package account_test

import (
	"context"
	"fmt"
	"net"
	"strings"
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
		if !strings.Contains(text, "Urgent: open https://evil.example now") {
			t.Fatalf("the name is not in the greeting at all:\n%s", text)
		}
	})
}
