package mail_test

import (
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"go.uber.org/fx/fxtest"

	"github.com/authcore/authcore/internal/testkit"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/mail"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func TestNotConfigured(t *testing.T) {
	m, err := mail.New(fxtest.NewLifecycle(t), config.Config{}, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if m.Configured() || !errors.Is(m.Send(mail.Message{To: "a@example.com"}), mail.ErrNotConfigured) {
		t.Fatal("a mailer without AUTHCORE_SMTP_URL sends")
	}
}

// A message goes out over SMTP as text with an HTML alternative, from the configured sender.
func TestDelivers(t *testing.T) {
	in := testkit.StartInbox(t)
	lc := fxtest.NewLifecycle(t)
	m, err := mail.New(lc, config.Config{SMTPURL: in.URL, MailFrom: "noreply@example.com"}, quiet)
	if err != nil {
		t.Fatal(err)
	}
	lc.RequireStart()
	if err := m.Send(mail.Message{To: "ada@example.com", Subject: "Héllo", Text: "plain body", HTML: "<p>html body</p>", Purpose: "test"}); err != nil {
		t.Fatal(err)
	}
	got := in.Wait(t, 1)[0]
	lc.RequireStop()
	if got.From != "noreply@example.com" || got.To != "ada@example.com" || got.Subject != "Héllo" ||
		!strings.Contains(got.Text, "plain body") || !strings.Contains(got.HTML, "<p>html body</p>") {
		t.Fatalf("%+v", got)
	}
}

// What cannot be delivered is logged without the body.
func TestFailureIsLoggedWithoutTheBody(t *testing.T) {
	var logs strings.Builder
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	lc := fxtest.NewLifecycle(t)
	m, err := mail.New(lc, config.Config{SMTPURL: "smtp://127.0.0.1:1?insecure=true", MailFrom: "a@example.com"}, log)
	if err != nil {
		t.Fatal(err)
	}
	mail.SetRetryWait(m, func(int) time.Duration { return time.Millisecond })
	lc.RequireStart()
	_ = m.Send(mail.Message{To: "ada@example.com", Text: "secret link ac_rst_x", HTML: "secret link ac_rst_x", Purpose: "reset"})
	lc.RequireStop() // waits for the worker, which gives up after its attempts
	out := logs.String()
	if !strings.Contains(out, "mail not sent") || !strings.Contains(out, `"recipient_domain":"example.com"`) || !strings.Contains(out, `"purpose":"reset"`) {
		t.Fatalf("the failure was not logged: %s", out)
	}
	if strings.Contains(out, "ac_rst_x") || strings.Contains(out, "ada@") {
		t.Fatalf("the body or the address was logged: %s", out)
	}
}

func TestBadURLs(t *testing.T) {
	for _, u := range []string{"http://x", "smtp://", "mail.example.com"} {
		c := config.Config{SMTPURL: u, Addr: ":1", MetricsAddr: config.MetricsPublic, DatabaseURL: "sqlite::memory:", AccessTTL: 1, RefreshTTL: 1, ReadMaxLag: 1}
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "AUTHCORE_SMTP_URL") {
			t.Errorf("%q: %v", u, err)
		}
	}
}
