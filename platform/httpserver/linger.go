package httpserver

import (
	"io"
	"net"
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

type lingerListener struct{ net.Listener }

func (l lingerListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if tc, ok := c.(*net.TCPConn); ok {
		return lingerConn{tc}, nil
	}
	return c, nil
}

type lingerConn struct{ *net.TCPConn }

// Close returns at once: the drain runs on its own, so a client that never closes its side
// costs a goroutine for lingerTimeout, never the caller's time (fasthttp closes idle
// connections one after another at shutdown).
func (c lingerConn) Close() error {
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
