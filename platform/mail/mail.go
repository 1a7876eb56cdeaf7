// Package mail sends the mails authcore's flows need (password reset, email verification)
// through an SMTP server named by AUTHCORE_SMTP_URL, with wneessen/go-mail: off the request
// path, from a bounded queue, with a timeout and a few retries. A failure is logged with
// the message's purpose and recipient domain, never its body (which holds a link with a
// token). It must not know what the mails say: each flow writes its own templates, which
// Templates renders.
package mail

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	gomail "github.com/wneessen/go-mail"
	"go.uber.org/fx"

	"github.com/authcore/authcore/platform/config"
)

// DefaultFrom is the sender when AUTHCORE_MAIL_FROM is empty.
const DefaultFrom = "authcore@localhost"

// ErrNotConfigured is what Send answers without AUTHCORE_SMTP_URL.
var ErrNotConfigured = errors.New("mail is not configured")

// ErrQueueFull is what Send answers when mails are queued faster than they go out.
var ErrQueueFull = errors.New("the mail queue is full")

// Message is one mail: a text body and its HTML alternative.
type Message struct {
	To, Subject, Text, HTML string
	// Purpose names the message in logs ("password_reset"), never its body.
	Purpose string
}

// Sender is what flows use to send mail.
type Sender interface {
	// Configured reports whether mail can be sent at all.
	Configured() bool
	// Send queues m; it returns at once.
	Send(m Message) error
}

// Module provides the Sender.
var Module = fx.Module("mail", fx.Provide(fx.Annotate(New, fx.As(new(Sender)), fx.As(fx.Self()))))

const (
	queueSize   = 256
	sendTimeout = 15 * time.Second
	attempts    = 4
)

// Mailer is the SMTP Sender.
type Mailer struct {
	from    string
	options []gomail.Option
	host    string
	log     *slog.Logger
	queue   chan Message
	wg      sync.WaitGroup
	// mu guards closed: a Send racing the shutdown is refused, never a send on a closed queue.
	mu     sync.RWMutex
	closed bool
	// retryWait is the pause before the n-th retry (n from 1).
	retryWait func(n int) time.Duration
}

// New returns the mailer for AUTHCORE_SMTP_URL (one that is not Configured when unset).
func New(lc fx.Lifecycle, cfg config.Config, log *slog.Logger) (*Mailer, error) {
	from := cfg.MailFrom
	if from == "" {
		from = DefaultFrom
	}
	m := &Mailer{from: from, log: log, retryWait: func(n int) time.Duration { return time.Duration(n) * time.Second }}
	if cfg.SMTPURL == "" {
		return m, nil
	}
	host, opts, err := options(cfg.SMTPURL)
	if err != nil {
		return nil, err
	}
	m.host, m.options, m.queue = host, opts, make(chan Message, queueSize)
	ctx, cancel := context.WithCancel(context.Background())
	lc.Append(fx.Hook{
		OnStart: func(context.Context) error {
			m.wg.Add(1)
			go m.run(ctx)
			return nil
		},
		OnStop: func(stopCtx context.Context) error {
			m.mu.Lock()
			m.closed = true
			close(m.queue) // the worker sends what is queued, then returns
			m.mu.Unlock()
			done := make(chan struct{})
			go func() { m.wg.Wait(); close(done) }()
			select {
			case <-done:
			case <-stopCtx.Done():
			}
			cancel()
			return nil
		},
	})
	return m, nil
}

// options reads AUTHCORE_SMTP_URL: smtp:// with STARTTLS when the server offers it,
// smtps:// with implicit TLS, and ?insecure=true for plain text (local test servers).
func options(raw string) (string, []gomail.Option, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", nil, err
	}
	opts := []gomail.Option{gomail.WithTimeout(sendTimeout)}
	port, _ := strconv.Atoi(u.Port())
	switch {
	case u.Scheme == "smtps":
		opts = append(opts, gomail.WithSSL())
		if port == 0 {
			port = 465
		}
	case u.Query().Get("insecure") == "true":
		opts = append(opts, gomail.WithTLSPolicy(gomail.NoTLS))
	default:
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSOpportunistic))
	}
	if port == 0 {
		port = 587
	}
	opts = append(opts, gomail.WithPort(port))
	if u.User != nil {
		pass, _ := u.User.Password()
		opts = append(opts, gomail.WithSMTPAuth(gomail.SMTPAuthAutoDiscover), gomail.WithUsername(u.User.Username()), gomail.WithPassword(pass))
	}
	return u.Hostname(), opts, nil
}

// Configured reports whether AUTHCORE_SMTP_URL is set.
func (m *Mailer) Configured() bool { return m.queue != nil }

// Send queues msg for the worker.
func (m *Mailer) Send(msg Message) error {
	if !m.Configured() {
		return ErrNotConfigured
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return ErrQueueFull
	}
	select {
	case m.queue <- msg:
		return nil
	default:
		return ErrQueueFull
	}
}

func (m *Mailer) run(ctx context.Context) {
	defer m.wg.Done()
	for msg := range m.queue {
		m.deliver(ctx, msg)
	}
}

// deliver sends one message, retrying a failed attempt a few times.
func (m *Mailer) deliver(ctx context.Context, msg Message) {
	var err error
	for n := range attempts {
		if n > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(m.retryWait(n)):
			}
		}
		if err = m.send(ctx, msg); err == nil {
			return
		}
	}
	_, domain, _ := strings.Cut(msg.To, "@")
	m.log.Error("mail not sent", "purpose", msg.Purpose, "recipient_domain", domain, "attempts", attempts, "error", err)
}

func (m *Mailer) send(ctx context.Context, msg Message) error {
	out := gomail.NewMsg()
	if err := out.From(m.from); err != nil {
		return err
	}
	if err := out.To(msg.To); err != nil {
		return err
	}
	out.Subject(msg.Subject)
	out.SetBodyString(gomail.TypeTextPlain, msg.Text)
	out.AddAlternativeString(gomail.TypeTextHTML, msg.HTML)
	c, err := gomail.NewClient(m.host, m.options...)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, sendTimeout)
	defer cancel()
	return c.DialAndSendWithContext(ctx, out)
}

// Quote is the one form user-chosen text (a name, a project's or a client's name) takes in
// a mail (SPEC §9b, N5): in double quotes, with quotes, backslashes, line breaks and every
// other control or format character (U+202E among them) escaped as Go escapes them, so the
// text can neither end its line, nor close its quotes, nor turn the line around. A mail
// puts it only after a label of its own ("Project: "), never in a sentence or a paragraph.
func Quote(s string) string {
	return strconv.Quote(s)
}
