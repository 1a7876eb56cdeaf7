package testkit

import (
	"bytes"
	"encoding/base64"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
)

// Mail is one message an Inbox received, decoded.
type Mail struct {
	From, To, Subject string
	Text, HTML        string
}

// Inbox is a real SMTP server on loopback (emersion/go-smtp) keeping what it receives.
type Inbox struct {
	URL  string // AUTHCORE_SMTP_URL for it
	mu   sync.Mutex
	got  []Mail
	fail int // how many more deliveries to refuse
}

// StartInbox starts an SMTP server for the test.
func StartInbox(t testing.TB) *Inbox {
	t.Helper()
	in := &Inbox{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return &inboxSession{in: in}, nil }))
	srv.Domain = "localhost"
	srv.AllowInsecureAuth = true
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	in.URL = "smtp://" + ln.Addr().String() + "?insecure=true"
	return in
}

// FailNext makes the next n deliveries fail with a temporary error.
func (in *Inbox) FailNext(n int) { in.mu.Lock(); in.fail = n; in.mu.Unlock() }

// Mails returns what arrived so far.
func (in *Inbox) Mails() []Mail {
	in.mu.Lock()
	defer in.mu.Unlock()
	return append([]Mail(nil), in.got...)
}

// Wait returns the mails once n have arrived, or fails the test after a few seconds.
func (in *Inbox) Wait(t testing.TB, n int) []Mail {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if m := in.Mails(); len(m) >= n {
			return m
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%d mails arrived, want %d", len(in.Mails()), n)
	return nil
}

type inboxSession struct {
	in       *Inbox
	from, to string
}

func (s *inboxSession) Reset()        {}
func (s *inboxSession) Logout() error { return nil }
func (s *inboxSession) Mail(from string, _ *smtp.MailOptions) error {
	s.from = from
	return nil
}
func (s *inboxSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.to = to
	return nil
}

func (s *inboxSession) Data(r io.Reader) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.in.mu.Lock()
	if s.in.fail > 0 {
		s.in.fail--
		s.in.mu.Unlock()
		return &smtp.SMTPError{Code: 451, Message: "try again later"}
	}
	s.in.mu.Unlock()
	m, err := decode(raw)
	if err != nil {
		return err
	}
	m.From, m.To = s.from, s.to
	s.in.mu.Lock()
	s.in.got = append(s.in.got, m)
	s.in.mu.Unlock()
	return nil
}

// decode reads a text + HTML multipart/alternative message, undoing the transfer encoding.
func decode(raw []byte) (Mail, error) {
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return Mail{}, err
	}
	var m Mail
	dec := new(mime.WordDecoder)
	if m.Subject, err = dec.DecodeHeader(msg.Header.Get("Subject")); err != nil {
		return Mail{}, err
	}
	mt, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil {
		return Mail{}, err
	}
	if !strings.HasPrefix(mt, "multipart/") {
		b, err := body(msg.Body, msg.Header.Get("Content-Transfer-Encoding"))
		m.Text = b
		return m, err
	}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return m, nil
		}
		if err != nil {
			return Mail{}, err
		}
		b, err := body(p, p.Header.Get("Content-Transfer-Encoding"))
		if err != nil {
			return Mail{}, err
		}
		if ct := p.Header.Get("Content-Type"); strings.HasPrefix(ct, "text/html") {
			m.HTML = b
		} else {
			m.Text = b
		}
	}
}

func body(r io.Reader, encoding string) (string, error) {
	switch strings.ToLower(encoding) {
	case "quoted-printable":
		r = quotedprintable.NewReader(r)
	case "base64":
		r = base64.NewDecoder(base64.StdEncoding, r) // it skips the line breaks itself
	}
	b, err := io.ReadAll(r)
	return string(b), err
}
