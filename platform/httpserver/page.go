package httpserver

import "github.com/gofiber/fiber/v2"

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
