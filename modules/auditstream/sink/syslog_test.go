package sink

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	syslog "github.com/leodido/go-syslog/v4"
	"github.com/leodido/go-syslog/v4/octetcounting"
	"github.com/leodido/go-syslog/v4/rfc5424"
)

// syslogReceiver is a TCP (or TLS) syslog server on loopback whose framing and message
// parsing are go-syslog's: what it accepts is what an RFC 5424/6587 receiver accepts.
type syslogReceiver struct {
	t  testing.TB
	ln net.Listener

	mu       sync.Mutex
	changed  chan struct{} // closed and replaced on every change
	got      []*rfc5424.SyslogMessage
	conns    int
	closed   int     // connections this receiver closed on purpose, or saw end
	errs     []error // parse errors on connections it did not close on purpose
	closeAt  map[int]int
	stalling bool // accept but never read
	discard  bool // count messages, keep none (benchmarks)
	count    int
}

func newSyslogReceiver(t testing.TB, tlsCfg *tls.Config) *syslogReceiver {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &syslogReceiver{t: t, changed: make(chan struct{}), closeAt: map[int]int{}}
	r.serve(ln, tlsCfg)
	return r
}

func (r *syslogReceiver) serve(ln net.Listener, tlsCfg *tls.Config) {
	if tlsCfg != nil {
		ln = tls.NewListener(ln, tlsCfg)
	}
	r.ln = ln
	r.t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			r.mu.Lock()
			idx := r.conns
			r.conns++
			stall := r.stalling
			r.bump()
			r.mu.Unlock()
			r.t.Cleanup(func() { _ = c.Close() })
			if !stall {
				go r.read(idx, c)
			}
		}
	}()
}

// bump wakes waiters; r.mu is held.
func (r *syslogReceiver) bump() {
	close(r.changed)
	r.changed = make(chan struct{})
}

func (r *syslogReceiver) read(idx int, c net.Conn) {
	n := 0
	purposely := false
	p := octetcounting.NewParser(syslog.WithMaxMessageLength(1<<20), syslog.WithListener(func(res *syslog.Result) {
		r.mu.Lock()
		defer r.mu.Unlock()
		defer r.bump()
		if purposely {
			return // what the parser still had buffered never reached the "application"
		}
		if res.Error != nil {
			r.errs = append(r.errs, res.Error)
			return
		}
		r.count++
		if !r.discard {
			r.got = append(r.got, res.Message.(*rfc5424.SyslogMessage))
		}
		n++
		if at, ok := r.closeAt[idx]; ok && n == at {
			purposely = true
			_ = c.Close()
		}
	}))
	p.Parse(c)
	_ = c.Close()
	r.mu.Lock()
	r.closed++
	r.bump()
	r.mu.Unlock()
}

// wait returns once cond holds of the receiver (checked under its lock), failing the
// test if it never does.
func (r *syslogReceiver) wait(what string, cond func() bool) {
	r.t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		r.mu.Lock()
		ok := cond()
		ch := r.changed
		r.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			r.t.Fatalf("syslog receiver: never saw %s", what)
		}
	}
}

func (r *syslogReceiver) ids() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ids []string
	for _, m := range r.got {
		ids = append(ids, (*m.StructuredData)[syslogSDID]["id"])
	}
	return ids
}

func (r *syslogReceiver) parseErrors() []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]error(nil), r.errs...)
}

func testEvents(first int64, n int, bodySize int) []Event {
	at := time.Date(2026, 11, 28, 10, 11, 12, 123456789, time.UTC)
	out := make([]Event, n)
	for i := range out {
		seq := first + int64(i)
		body := map[string]any{"id": fmt.Sprintf("aud_%06d", seq), "action": "user.signin", "metadata": map[string]any{"note": `quote " bracket ] backslash \ ünïcødé`}}
		if bodySize > 0 {
			body["pad"] = strings.Repeat("x", bodySize)
		}
		b, _ := json.Marshal(body)
		out[i] = Event{ID: fmt.Sprintf("aud_%06d", seq), Seq: seq, Hash: fmt.Sprintf("%064x", seq), Time: at.Add(time.Duration(i) * time.Millisecond), Action: "user.signin", Body: b}
	}
	return out
}

func eventIDs(batch []Event) []string {
	ids := make([]string, len(batch))
	for i, e := range batch {
		ids[i] = e.ID
	}
	return ids
}

func TestSyslogSendsRFC5424WithOctetCounting(t *testing.T) {
	r := newSyslogReceiver(t, nil)
	s := NewSyslog(SyslogConfig{Address: r.ln.Addr().String(), Hostname: "auth-1.example"})
	defer s.Close()
	batch := testEvents(1, 3, 0)
	batch[2].Action = "service_badge.revoke"
	if err := s.Send(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
	r.wait("3 messages", func() bool { return len(r.got) == 3 })
	for i, m := range r.got {
		e := batch[i]
		if *m.Priority != 110 || *m.Facility != 13 || *m.Severity != 6 || m.Version != 1 {
			t.Errorf("message %d: priority %d facility %d severity %d version %d, want 110 (log audit, informational) version 1", i, *m.Priority, *m.Facility, *m.Severity, m.Version)
		}
		if m.Timestamp == nil || !m.Timestamp.Equal(e.Time.Truncate(time.Microsecond)) {
			t.Errorf("message %d: timestamp %v, want %v", i, m.Timestamp, e.Time)
		}
		if m.Hostname == nil || *m.Hostname != "auth-1.example" || m.Appname == nil || *m.Appname != "authcore" {
			t.Errorf("message %d: hostname %v app %v", i, m.Hostname, m.Appname)
		}
		if m.MsgID == nil || *m.MsgID != e.Action {
			t.Errorf("message %d: MSGID %v, want %s", i, m.MsgID, e.Action)
		}
		sd := (*m.StructuredData)[syslogSDID]
		if sd["id"] != e.ID || sd["seq"] != strconv.FormatInt(e.Seq, 10) || sd["hash"] != e.Hash {
			t.Errorf("message %d: structured data %v", i, sd)
		}
		if m.Message == nil || *m.Message != string(e.Body) {
			t.Errorf("message %d: body %v, want %s", i, m.Message, e.Body)
		}
	}
	// The connection stays open across batches.
	if err := s.Send(context.Background(), testEvents(4, 2, 0)); err != nil {
		t.Fatal(err)
	}
	r.wait("5 messages", func() bool { return len(r.got) == 5 })
	if r.conns != 1 {
		t.Errorf("%d connections for two batches, want one kept open", r.conns)
	}
	if errs := r.parseErrors(); len(errs) > 0 {
		t.Errorf("receiver could not parse: %v", errs)
	}
}

func TestSyslogOverTLS(t *testing.T) {
	cert, pool := selfSigned(t)
	r := newSyslogReceiver(t, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	_, port, _ := net.SplitHostPort(r.ln.Addr().String())

	untrusted := NewSyslog(SyslogConfig{Address: "localhost:" + port, TLS: &tls.Config{MinVersion: tls.VersionTLS12}})
	defer untrusted.Close()
	if err := untrusted.Send(context.Background(), testEvents(1, 1, 0)); err == nil || !strings.Contains(err.Error(), "TLS handshake") {
		t.Fatalf("a receiver whose certificate is not trusted: %v, want a handshake error", err)
	}

	s := NewSyslog(SyslogConfig{Address: "localhost:" + port, TLS: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}})
	defer s.Close()
	batch := testEvents(1, 4, 0)
	if err := s.Send(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
	r.wait("4 messages", func() bool { return len(r.got) == 4 })
	if got := r.ids(); strings.Join(got, ",") != strings.Join(eventIDs(batch), ",") {
		t.Errorf("received %v, want %v", got, eventIDs(batch))
	}
}

func TestSyslogReconnectsAfterTheReceiverClosedAnIdleConnection(t *testing.T) {
	r := newSyslogReceiver(t, nil)
	r.mu.Lock()
	r.closeAt[0] = 2 // the receiver's idle timeout, after the first batch
	r.mu.Unlock()
	s := NewSyslog(SyslogConfig{Address: r.ln.Addr().String()})
	defer s.Close()
	if err := s.Send(context.Background(), testEvents(1, 2, 0)); err != nil {
		t.Fatal(err)
	}
	r.wait("the first connection closed", func() bool { return r.closed == 1 })
	if err := s.Send(context.Background(), testEvents(3, 2, 0)); err != nil {
		t.Fatalf("send after the receiver closed the kept connection: %v", err)
	}
	r.wait("4 messages", func() bool { return len(r.got) == 4 })
	if got := strings.Join(r.ids(), ","); got != "aud_000001,aud_000002,aud_000003,aud_000004" {
		t.Errorf("received %s", got)
	}
	if r.conns != 2 {
		t.Errorf("%d connections, want a second one", r.conns)
	}
}

// A receiver that goes away mid-batch: the batch fails, and sent again it arrives whole;
// the receiver sees some events twice, always with the same id.
func TestSyslogConnectionClosedMidBatchThenResent(t *testing.T) {
	r := newSyslogReceiver(t, nil)
	r.mu.Lock()
	r.closeAt[0] = 10
	r.mu.Unlock()
	s := NewSyslog(SyslogConfig{Address: r.ln.Addr().String()})
	defer s.Close()
	// More than loopback's socket buffers hold, so the close is seen while writing.
	batch := testEvents(1, 4000, 4096)
	err := s.Send(context.Background(), batch)
	if err == nil {
		t.Fatal("a batch cut off by the receiver reported success")
	}
	if err := s.Send(context.Background(), batch); err != nil {
		t.Fatalf("resend: %v", err)
	}
	r.wait("the whole batch after the first 10", func() bool { return len(r.got) == 10+len(batch) })
	checkAtLeastOnce(t, r.ids(), eventIDs(batch))
}

// The same on a connection kept from an earlier batch: Send itself reconnects and resends.
func TestSyslogKeptConnectionClosedMidBatchIsResentAtOnce(t *testing.T) {
	r := newSyslogReceiver(t, nil)
	r.mu.Lock()
	r.closeAt[0] = 1 + 10
	r.mu.Unlock()
	s := NewSyslog(SyslogConfig{Address: r.ln.Addr().String()})
	defer s.Close()
	warm := testEvents(1, 1, 0)
	if err := s.Send(context.Background(), warm); err != nil {
		t.Fatal(err)
	}
	batch := testEvents(2, 4000, 4096)
	if err := s.Send(context.Background(), batch); err != nil {
		t.Fatalf("send on a kept connection closed mid-batch: %v", err)
	}
	r.wait("the batch", func() bool { return len(r.got) == 1+10+len(batch) })
	checkAtLeastOnce(t, r.ids()[1:], eventIDs(batch))
	if r.conns != 2 {
		t.Errorf("%d connections, want 2", r.conns)
	}
}

// checkAtLeastOnce: every id arrived, in order on the last connection, and nothing
// arrived that was not sent.
func checkAtLeastOnce(t *testing.T, got, want []string) {
	t.Helper()
	sent := map[string]bool{}
	for _, id := range want {
		sent[id] = true
	}
	seen := map[string]int{}
	for _, id := range got {
		if !sent[id] {
			t.Fatalf("received %q, never sent", id)
		}
		seen[id]++
	}
	for _, id := range want {
		if seen[id] == 0 {
			t.Fatalf("%s never arrived", id)
		}
	}
	tail := got[len(got)-len(want):]
	for i := range want {
		if tail[i] != want[i] {
			t.Fatalf("resent batch out of order at %d: %s, want %s", i, tail[i], want[i])
		}
	}
}

func TestSyslogReceiverDownThenUp(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	s := NewSyslog(SyslogConfig{Address: addr})
	defer s.Close()
	if err := s.Send(context.Background(), testEvents(1, 1, 0)); err == nil || !strings.Contains(err.Error(), "dial") {
		t.Fatalf("receiver down: %v, want a dial error", err)
	}
	ln, err = net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("the port was taken meanwhile: %v", err)
	}
	r := &syslogReceiver{t: t, changed: make(chan struct{}), closeAt: map[int]int{}}
	r.serve(ln, nil)
	if err := s.Send(context.Background(), testEvents(1, 1, 0)); err != nil {
		t.Fatalf("receiver back: %v", err)
	}
	r.wait("the event", func() bool { return len(r.got) == 1 })
}

func TestSyslogSendEndsWithItsContext(t *testing.T) {
	r := newSyslogReceiver(t, nil)
	r.mu.Lock()
	r.stalling = true
	r.mu.Unlock()
	s := NewSyslog(SyslogConfig{Address: r.ln.Addr().String()})
	defer s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		r.wait("a connection", func() bool { return r.conns == 1 })
		cancel()
	}()
	err := s.Send(ctx, testEvents(1, 4000, 4096))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("send to a receiver that never reads, cancelled: %v", err)
	}
}

func TestSyslogDialUsesTheConfiguredDialer(t *testing.T) {
	r := newSyslogReceiver(t, nil)
	refused := errors.New("outbound rules refuse this address")
	s := NewSyslog(SyslogConfig{Address: r.ln.Addr().String(), Dial: func(context.Context, string, string) (net.Conn, error) { return nil, refused }})
	defer s.Close()
	if err := s.Send(context.Background(), testEvents(1, 1, 0)); !errors.Is(err, refused) {
		t.Fatalf("got %v, want the dialer's refusal", err)
	}
}

func TestSyslogMsgID(t *testing.T) {
	for _, tc := range []struct{ action, want string }{
		{"user.signin", "user.signin"},
		{"oauth.authorization_details_type_update", "oauth.authorization_details_type"},
		{"a b\tc\x00é", "a_b_c___"},
		{"", "-"},
		{"-", "-"},
	} {
		if got := syslogMsgID(tc.action); got != tc.want {
			t.Errorf("syslogMsgID(%q) = %q, want %q", tc.action, got, tc.want)
		}
		if len(syslogMsgID(tc.action)) > 32 {
			t.Errorf("MSGID of %q longer than 32", tc.action)
		}
	}
}

// FuzzSyslogFrame: whatever an event holds, its frame parses with a stock RFC 6587/5424
// parser into exactly one message carrying the same id, chain link, action and body, or
// the sink refuses it (only a structured-data value that is not UTF-8 may be refused).
func FuzzSyslogFrame(f *testing.F) {
	f.Add("aud_1", int64(7), "abc", "user.signin", []byte(`{"a":"b"}`))
	f.Add(`a"b]c\d`, int64(-1), "]]\\\"", "x y", []byte("line\nbreak \xff"))
	f.Add("", int64(0), "", "", []byte(""))
	f.Add("\xef\xbb\xbf", int64(1), "é", strings.Repeat("a", 40), []byte("\xef\xbb\xbf{}"))
	f.Fuzz(func(t *testing.T, id string, seq int64, hash, action string, body []byte) {
		e := Event{ID: id, Seq: seq, Hash: hash, Action: action, Body: body, Time: time.Unix(1764324672, 123456000)}
		frame, err := syslogFrame(&e, "h", "authcore")
		if err != nil {
			if utf8.ValidString(id) && utf8.ValidString(hash) {
				t.Fatalf("refused a representable event: %v", err)
			}
			return
		}
		var got []*syslog.Result
		octetcounting.NewParser(syslog.WithMaxMessageLength(1<<20), syslog.WithListener(func(r *syslog.Result) { got = append(got, r) })).Parse(bytes.NewReader(frame))
		if len(got) != 1 || got[0].Error != nil {
			t.Fatalf("frame %q parsed as %d results (%v)", frame, len(got), got)
		}
		m := got[0].Message.(*rfc5424.SyslogMessage)
		sd := (*m.StructuredData)[syslogSDID]
		if sd["id"] != id || sd["seq"] != strconv.FormatInt(seq, 10) {
			t.Fatalf("structured data %v, want id %q seq %d", sd, id, seq)
		}
		if h, ok := sd["hash"]; (hash != "" && h != hash) || (hash == "" && ok) {
			t.Fatalf("hash %q, want %q", h, hash)
		}
		if want := syslogMsgID(action); (want == "-" && m.MsgID != nil) || (want != "-" && (m.MsgID == nil || *m.MsgID != want)) {
			t.Fatalf("MSGID %v, want %q", m.MsgID, want)
		}
		if gotBody := ""; m.Message != nil {
			gotBody = *m.Message
			if gotBody != string(body) {
				t.Fatalf("body %q, want %q", gotBody, body)
			}
		} else if len(body) > 0 {
			t.Fatalf("body lost: %q", body)
		}
	})
}

func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "localhost"},
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

// BenchmarkSyslogSend: events per second a syslog sink hands to a loopback receiver, in
// batches of 500, until the receiver has parsed them all.
func BenchmarkSyslogSend(b *testing.B) {
	r := newSyslogReceiver(b, nil)
	r.mu.Lock()
	r.discard = true
	r.mu.Unlock()
	s := NewSyslog(SyslogConfig{Address: r.ln.Addr().String(), Hostname: "auth-1"})
	defer s.Close()
	batch := testEvents(1, 500, 256)
	b.ResetTimer()
	for range b.N {
		if err := s.Send(context.Background(), batch); err != nil {
			b.Fatal(err)
		}
	}
	r.wait("every message", func() bool { return r.count == b.N*len(batch) })
	b.ReportMetric(float64(b.N*len(batch))/b.Elapsed().Seconds(), "events/s")
}
