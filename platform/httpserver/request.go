package httpserver

import (
	"bytes"
	"context"
	"net/netip"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/identity"
)

// Origin copies, out of Fiber's recycled buffers, what an audit record keeps of the
// request: the client's address as ClientIP resolves it (hashed by the recorder), when
// the request came with X-Forwarded-For, and the user agent. Never the header itself: a
// caller that is no trusted proxy writes it as it likes, and would choose its ipHash.
func Origin(c *fiber.Ctx) audit.Origin {
	var o audit.Origin
	if c.Request().Header.Peek(fiber.HeaderXForwardedFor) != nil {
		s := ClientIP(c)
		o.ClientIP = &s
	}
	if v := c.Request().Header.Peek("User-Agent"); v != nil {
		s := string(v)
		o.UserAgent = &s
	}
	return o
}

// ClientIP is the client's address, as a string safe to keep after the handler returns:
// the peer address, unless the peer is one of AUTHCORE_TRUSTED_PROXIES; then the
// rightmost X-Forwarded-For entry that is not itself a trusted proxy. Hand-written
// because Fiber's IP() takes the leftmost entry, which the client writes itself when the
// proxy appends to the header (nginx's $proxy_add_x_forwarded_for).
func ClientIP(c *fiber.Ctx) string {
	peer := c.Context().RemoteIP().String()
	trusted, _ := c.Locals(trustedKey{}).([]netip.Prefix)
	if trusted == nil {
		return peer
	}
	return clientFromForwarded(peer, c.Request().Header.Peek(fiber.HeaderXForwardedFor), trusted)
}

type trustedKey struct{}

// clientFromForwarded walks the X-Forwarded-For chain from the right, past every trusted
// proxy, and answers the first address that is not one. A peer that is not trusted, a
// malformed entry, or a chain of trusted proxies only, ends the walk where it is.
func clientFromForwarded(peer string, xff []byte, trusted []netip.Prefix) string {
	client, err := netip.ParseAddr(peer)
	if err != nil || !isTrusted(client, trusted) {
		return peer
	}
	rest := string(xff)
	for rest != "" {
		var entry string
		if i := strings.LastIndexByte(rest, ','); i >= 0 {
			entry, rest = rest[i+1:], rest[:i]
		} else {
			entry, rest = rest, ""
		}
		a, err := netip.ParseAddr(strings.TrimSpace(entry))
		if err != nil {
			break
		}
		client = a.Unmap()
		if !isTrusted(client, trusted) {
			break
		}
	}
	return client.String()
}

func isTrusted(a netip.Addr, trusted []netip.Prefix) bool {
	a = a.Unmap()
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

var errAmbiguousFraming = apperr.BadRequest("bad_request", "conflicting Content-Length or Transfer-Encoding headers")

// ambiguousFraming reports a request whose body length two parsers could read two ways:
// two Content-Length headers that differ, or Content-Length beside Transfer-Encoding
// (RFC 9112 §6.3). fasthttp settles both silently (the last length, or chunked), so its
// raw headers are read again; only requests with a body pay for it.
func ambiguousFraming(c *fiber.Ctx) bool {
	h := &c.Request().Header
	if h.ContentLength() == -2 { // no body framing at all
		return false
	}
	var length []byte
	lengths, encodings := 0, 0
	raw := h.RawHeaders()
	for len(raw) > 0 {
		line := raw
		if i := bytes.IndexByte(raw, '\n'); i >= 0 {
			line, raw = raw[:i], raw[i+1:]
		} else {
			raw = nil
		}
		colon := bytes.IndexByte(line, ':')
		if colon < 0 {
			continue
		}
		name, value := line[:colon], bytes.TrimSpace(line[colon+1:])
		switch {
		case bytes.EqualFold(name, []byte(fiber.HeaderContentLength)):
			if lengths > 0 && !bytes.Equal(value, length) {
				return true
			}
			lengths++
			length = value
		case bytes.EqualFold(name, []byte(fiber.HeaderTransferEncoding)):
			encodings++
		}
	}
	return lengths > 0 && encodings > 0
}

// BearerToken reads an Authorization header value the way seed 4.2 says: it must begin
// with "Bearer " (case-sensitive), and the rest, trimmed, is the token. "" means none. The
// result aliases header: copy it before it outlives the handler.
func BearerToken(header string) string {
	if !strings.HasPrefix(header, "Bearer ") {
		return ""
	}
	return strings.TrimSpace(header[len("Bearer "):])
}

// WithIssuer is the request's context carrying the issuer, for services that sign tokens.
// The issuer is the server's own URL (config.SelfURL), never the request's Host.
func WithIssuer(c *fiber.Ctx, cfg config.Config) context.Context {
	return identity.WithIssuer(c.UserContext(), cfg.SelfURL())
}
