package httpserver

import (
	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/platform/apperr"
)

// PagePolicy is the content security policy of a page that needs neither script nor
// style nor a form: everything refused, framing included.
const PagePolicy = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

// SecurePage sets the security headers every server-rendered page carries; it is the one
// place they are written, so the pages cannot drift apart. policy is the page's content
// security policy and must keep frame-ancestors 'none' (X-Frame-Options says the same to
// older browsers). no-referrer keeps a token in a page's address out of any Referer.
func SecurePage(c *fiber.Ctx, policy string) {
	c.Set(fiber.HeaderContentSecurityPolicy, policy)
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Set(fiber.HeaderXFrameOptions, "DENY")
	c.Set(fiber.HeaderReferrerPolicy, "no-referrer")
}

// Page asks the error renderer to answer err with a page for a person rather than the JSON
// body: the renderer classifies and logs err as it does every error (a handler does not
// log), sets the page's headers and status, and render writes the page of e.
func Page(err error, render func(c *fiber.Ctx, e *apperr.Error) error) error {
	return &pageError{err: err, render: render}
}

type pageError struct {
	err    error
	render func(*fiber.Ctx, *apperr.Error) error
}

func (p *pageError) Error() string { return p.err.Error() }
func (p *pageError) Unwrap() error { return p.err }
