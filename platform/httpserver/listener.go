package httpserver

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Lingering close. When fasthttp refuses a body over BodyLimit it answers 413 and closes
// the connection while the client may still be sending; closing a socket with unread
// input makes the kernel send a reset, which often reaches the client before the 413 does
// ("connection reset by peer"). So a closing connection first shuts its sending side (the
// client reads the answer, then end of stream), then reads and discards what is still in
// flight, bounded in bytes and time, and only then closes — what Apache and nginx call a
// lingering close. fasthttp has no such option, hence this wrapper.
const (
	lingerMax     = 4 << 20
	lingerTimeout = 2 * time.Second
)

// Silent connections. fasthttp counts a new connection as busy from the moment it is
// accepted, so at shutdown it waits for one that never sends a byte until its read times
// out (15 s), longer than ShutdownTimeout; browsers open such connections ahead of need.
// net/http counts them idle after 5 s. The listener therefore remembers which connections
// have sent anything, and Stop ends those silent for silentGrace: they hold no request.
const silentGrace = time.Second

// listener wraps each accepted TCP connection for lingering close and tracks it until it
// closes.
type listener struct {
	net.Listener
	conns *connections
}

func (l listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c, nil
	}
	lc := &conn{TCPConn: tc, accepted: time.Now(), set: l.conns}
	l.conns.add(lc)
	return lc, nil
}

// connections is the set of open connections.
type connections struct {
	mu   sync.Mutex
	open map[*conn]struct{}
}

func (s *connections) add(c *conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open == nil {
		s.open = map[*conn]struct{}{}
	}
	s.open[c] = struct{}{}
}

func (s *connections) remove(c *conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.open, c)
}

// closeSilent ends every connection that has sent nothing in the grace period since it was
// accepted. Its read deadline passes, so fasthttp's read times out and it answers 408 and
// closes, as it would at its own read timeout.
func (s *connections) closeSilent(grace time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	for c := range s.open {
		if !c.heard.Load() && now.Sub(c.accepted) >= grace {
			_ = c.SetReadDeadline(now)
		}
	}
}

type conn struct {
	*net.TCPConn
	accepted time.Time
	// heard is set by the first byte read.
	heard atomic.Bool
	set   *connections
}

func (c *conn) Read(p []byte) (int, error) {
	n, err := c.TCPConn.Read(p)
	// Load first: after the first byte, reads leave the cache line alone.
	if n > 0 && !c.heard.Load() {
		c.heard.Store(true)
	}
	return n, err
}

// Close returns at once: the drain runs on its own, so a client that never closes its side
// costs a goroutine for lingerTimeout, never the caller's time (fasthttp closes idle
// connections one after another at shutdown).
func (c *conn) Close() error {
	c.set.remove(c)
	if err := c.CloseWrite(); err != nil {
		return c.TCPConn.Close()
	}
	go func() {
		if c.SetReadDeadline(time.Now().Add(lingerTimeout)) == nil {
			_, _ = io.CopyN(io.Discard, c.TCPConn, lingerMax)
		}
		_ = c.TCPConn.Close()
	}()
	return nil
}
