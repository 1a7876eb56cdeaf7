package sink

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/leodido/go-syslog/v4/rfc5424"
)

// SyslogConfig names a syslog receiver (SPEC §28: RFC 5424 over TCP with RFC 6587 octet
// counting, or over TLS as RFC 5425 has it).
type SyslogConfig struct {
	// Address is the receiver's host:port.
	Address string
	// TLS, when set, wraps the connection (RFC 5425); nil sends plain TCP. An empty
	// ServerName is taken from Address.
	TLS *tls.Config
	// Dial opens the TCP connection; nil uses a net.Dialer. The stream's worker passes its
	// outbound rules here.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Hostname and AppName fill the header's HOSTNAME and APP-NAME; "" sends the nil
	// value "-" for Hostname and "authcore" for AppName.
	Hostname, AppName string
}

// The header values every message carries. Facility 13 is RFC 5424's "log audit";
// severity 6 "informational": an audit event reports what happened, it raises no alarm.
const (
	syslogPriority = 13*8 + 6
	// syslogSDID names the structured-data element carrying the event's id and chain
	// link. A name that is not registered with IANA must be name@<private enterprise
	// number>; authcore has none, so it uses 32473, the number RFC 5612 reserves for
	// documentation and examples. Receivers match the whole SD-ID.
	syslogSDID = "authcore@32473"
	// RFC 5424 §6.2.7: MSGID is at most 32 printable US-ASCII characters.
	syslogMsgIDMax = 32
)

// Syslog sends each event as one RFC 5424 message over one long-lived TCP or TLS
// connection, opened on first use and opened again after an error.
type Syslog struct {
	cfg SyslogConfig

	mu   sync.Mutex // one batch at a time owns conn
	conn net.Conn
	w    *bufio.Writer
}

var _ Sink = (*Syslog)(nil)

// NewSyslog returns a syslog sink; it connects on the first Send, not here.
func NewSyslog(c SyslogConfig) Sink {
	if c.AppName == "" {
		c.AppName = "authcore"
	}
	return &Syslog{cfg: c}
}

// Send writes every event of batch and flushes them. A connection kept from an earlier
// batch may have been closed by the receiver meanwhile, which TCP reports only on a
// later write: a batch that fails on such a connection is sent once more, whole, on a
// new one, so a receiver's idle timeout costs no backoff.
//
// TCP syslog has no acknowledgement (RFC 6587): nil means every octet was handed to the
// kernel, not that the receiver read it. Receivers deduplicate on the event id in the
// structured data, since a resent batch repeats events.
func (s *Syslog) Send(ctx context.Context, batch []Event) error {
	frames := make([][]byte, len(batch))
	for i := range batch {
		f, err := syslogFrame(&batch[i], s.cfg.Hostname, s.cfg.AppName)
		if err != nil {
			return err
		}
		frames[i] = f
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	reused := s.conn != nil && s.alive()
	if s.conn != nil && !reused {
		s.drop()
	}
	err := s.write(ctx, frames)
	if err != nil && reused && ctx.Err() == nil {
		err = s.write(ctx, frames)
	}
	return err
}

// alive tells whether the receiver still holds the kept connection open. A syslog
// receiver never writes, so a read that does not time out at once means it closed. The
// deadline lies a little ahead: one already past fails the read before it looks.
func (s *Syslog) alive() bool {
	if err := s.conn.SetReadDeadline(time.Now().Add(time.Millisecond)); err != nil {
		return false
	}
	var b [1]byte
	_, err := s.conn.Read(b[:])
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return s.conn.SetReadDeadline(time.Time{}) == nil
	}
	return false
}

// write sends frames on the kept connection, dialling one first if there is none. Any
// failure drops the connection: what part of the batch the receiver got is unknown.
func (s *Syslog) write(ctx context.Context, frames [][]byte) error {
	if s.conn == nil {
		if err := s.dial(ctx); err != nil {
			return err
		}
	}
	// A write blocked on a receiver that stopped reading ends when ctx does.
	if d, ok := ctx.Deadline(); ok {
		_ = s.conn.SetWriteDeadline(d)
	} else {
		_ = s.conn.SetWriteDeadline(time.Time{})
	}
	conn := s.conn
	stop := context.AfterFunc(ctx, func() { _ = conn.SetWriteDeadline(time.Unix(1, 0)) })
	defer stop()
	for _, f := range frames {
		if _, err := s.w.Write(f); err != nil {
			s.drop()
			return fmt.Errorf("syslog %s: write: %w", s.cfg.Address, cmpCtx(ctx, err))
		}
	}
	if err := s.w.Flush(); err != nil {
		s.drop()
		return fmt.Errorf("syslog %s: write: %w", s.cfg.Address, cmpCtx(ctx, err))
	}
	return nil
}

// cmpCtx names the context's end rather than the deadline it set off.
func cmpCtx(ctx context.Context, err error) error {
	if ctx.Err() != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		return ctx.Err()
	}
	return err
}

func (s *Syslog) dial(ctx context.Context) error {
	dial := s.cfg.Dial
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	conn, err := dial(ctx, "tcp", s.cfg.Address)
	if err != nil {
		return fmt.Errorf("syslog %s: dial: %w", s.cfg.Address, err)
	}
	if s.cfg.TLS != nil {
		cfg := s.cfg.TLS.Clone()
		if cfg.ServerName == "" {
			host, _, err := net.SplitHostPort(s.cfg.Address)
			if err != nil {
				_ = conn.Close()
				return fmt.Errorf("syslog %s: %w", s.cfg.Address, err)
			}
			cfg.ServerName = host
		}
		tc := tls.Client(conn, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			_ = conn.Close()
			return fmt.Errorf("syslog %s: TLS handshake: %w", s.cfg.Address, err)
		}
		conn = tc
	}
	s.conn = conn
	s.w = bufio.NewWriterSize(conn, 64<<10)
	return nil
}

func (s *Syslog) drop() {
	if s.conn != nil {
		_ = s.conn.Close()
	}
	s.conn, s.w = nil, nil
}

// Close closes the kept connection, if any.
func (s *Syslog) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.drop()
	return nil
}

// syslogFrame renders e as one RFC 5424 message with its RFC 6587 octet count. The
// message itself is built by go-syslog's builder (header, escaping of structured-data
// values); the octet-counting frame is one length prefix that no Go library offers on its
// own, so it is written here.
func syslogFrame(e *Event, hostname, appName string) ([]byte, error) {
	m := &rfc5424.SyslogMessage{}
	m.SetPriority(syslogPriority)
	m.SetVersion(1)
	if !e.Time.IsZero() {
		// TIME-SECFRAC allows six digits at most (RFC 5424 §6.2.3).
		m.SetTimestamp(e.Time.UTC().Format("2006-01-02T15:04:05.000000Z07:00"))
	}
	if hostname != "" {
		m.SetHostname(hostname)
	}
	m.SetAppname(appName)
	msgID := syslogMsgID(e.Action)
	m.SetMsgID(msgID)
	seq := strconv.FormatInt(e.Seq, 10)
	params := [][2]string{{"id", e.ID}, {"seq", seq}}
	if e.Hash != "" {
		params = append(params, [2]string{"hash", e.Hash})
	}
	for _, p := range params {
		// The builder takes a value as it appears on the wire, escapes included, and
		// unescapes it; String escapes it again. Escape first so any value survives.
		m.SetParameter(syslogSDID, p[0], sdEscape(p[1]))
	}
	m.SetMessage(string(e.Body))
	// The builder drops a value its grammar refuses instead of failing; a message
	// missing its id or its body would be worse than no message, so check they stayed.
	if err := syslogKept(m, e, hostname, appName, msgID, params); err != nil {
		return nil, err
	}
	msg, err := m.String()
	if err != nil {
		return nil, fmt.Errorf("syslog: event %s: %w", e.ID, err)
	}
	frame := make([]byte, 0, len(msg)+8)
	frame = strconv.AppendInt(frame, int64(len(msg)), 10)
	frame = append(frame, ' ')
	return append(frame, msg...), nil
}

func syslogKept(m *rfc5424.SyslogMessage, e *Event, hostname, appName, msgID string, params [][2]string) error {
	bad := func(what string) error {
		return fmt.Errorf("syslog: event %s: %s not representable in RFC 5424", e.ID, what)
	}
	if !e.Time.IsZero() && m.Timestamp == nil {
		return bad("timestamp")
	}
	if hostname != "" && (m.Hostname == nil || *m.Hostname != hostname) {
		return bad("hostname")
	}
	if m.Appname == nil || *m.Appname != appName {
		return bad("app name")
	}
	if msgID != "-" && (m.MsgID == nil || *m.MsgID != msgID) {
		return bad("MSGID")
	}
	if m.StructuredData == nil {
		return bad("structured data")
	}
	sd := (*m.StructuredData)[syslogSDID]
	for _, p := range params {
		if v, ok := sd[p[0]]; !ok || v != p[1] {
			return bad("structured data " + p[0])
		}
	}
	if len(e.Body) > 0 && (m.Message == nil || *m.Message != string(e.Body)) {
		return bad("message")
	}
	return nil
}

// syslogMsgID keeps what RFC 5424 allows in MSGID: printable US-ASCII, 1 to 32
// characters. Actions are such already; anything else is replaced, not dropped, so the
// field still says roughly what happened.
func syslogMsgID(action string) string {
	b := make([]byte, 0, syslogMsgIDMax)
	for i := 0; i < len(action) && len(b) < syslogMsgIDMax; i++ {
		c := action[i]
		if c < 33 || c > 126 {
			c = '_'
		}
		b = append(b, c)
	}
	if len(b) == 0 || string(b) == "-" {
		return "-" // the nil value
	}
	return string(b)
}

// sdEscape escapes '"', '\' and ']' as RFC 5424 §6.3.3 asks of PARAM-VALUE.
func sdEscape(v string) string {
	var b []byte
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '"', '\\', ']':
			if b == nil {
				b = append(make([]byte, 0, len(v)+4), v[:i]...)
			}
			b = append(b, '\\')
		}
		if b != nil {
			b = append(b, v[i])
		}
	}
	if b == nil {
		return v
	}
	return string(b)
}
