package httpserver

import (
	"context"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/identity"
)

// Origin copies, out of Fiber's recycled buffers, what an audit record keeps of the
// request: the raw x-forwarded-for value (hashed by the recorder) and the user agent.
func Origin(c *fiber.Ctx) audit.Origin {
	var o audit.Origin
	if v := c.Request().Header.Peek("X-Forwarded-For"); v != nil {
		s := string(v)
		o.ForwardedFor = &s
	}
	if v := c.Request().Header.Peek("User-Agent"); v != nil {
		s := string(v)
		o.UserAgent = &s
	}
	return o
}

// ClientIP is the peer address, as a string safe to keep after the handler returns.
// X-Forwarded-For is not trusted for this: any client can write it.
func ClientIP(c *fiber.Ctx) string { return utils.CopyString(c.IP()) }

// BearerToken reads an Authorization header value the way seed 4.2 says: it must begin
// with "Bearer " (case-sensitive), and the rest, trimmed, is the token. "" means none. The
// result aliases header: copy it before it outlives the handler.
func BearerToken(header string) string {
	if !strings.HasPrefix(header, "Bearer ") {
		return ""
	}
	return strings.TrimSpace(header[len("Bearer "):])
}

// Issuer is the issuer of tokens signed for this request: AUTHCORE_PUBLIC_URL when set,
// else the scheme and host the request reached (copied out of Fiber's buffers).
func Issuer(c *fiber.Ctx, cfg config.Config) string {
	if cfg.PublicURL != "" {
		return strings.TrimRight(cfg.PublicURL, "/")
	}
	return utils.CopyString(c.BaseURL())
}

// WithIssuer is the request's context carrying its Issuer, for services that sign tokens.
func WithIssuer(c *fiber.Ctx, cfg config.Config) context.Context {
	return identity.WithIssuer(c.UserContext(), Issuer(c, cfg))
}
