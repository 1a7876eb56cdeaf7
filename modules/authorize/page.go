package authorize

import (
	"html/template"
	"net/http"

	"github.com/gofiber/fiber/v2"
)

// errorPage is what a person sees when an authorization request cannot even be answered
// to its client. html/template escapes the reason, which quotes the request.
var errorPage = template.Must(template.New("error").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Authorization request refused · authcore</title></head>
<body><main><h1>This authorization request cannot be used</h1><p>{{.}}</p>
<p>Nothing was shared. Go back to the application and try again, or tell its developer.</p></main></body></html>`))

// page answers 400 with the error page: no script, no style, no framing.
func (h *handler) page(c *fiber.Ctx, reason string) error {
	c.Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
	c.Set("X-Frame-Options", "DENY")
	c.Set("X-Content-Type-Options", "nosniff")
	c.Set("Referrer-Policy", "no-referrer")
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	c.Status(http.StatusBadRequest)
	return errorPage.Execute(c.Response().BodyWriter(), reason)
}

// signedOutPage is what a person sees after RP-initiated logout with nowhere to go back to.
var signedOutPage = template.Must(template.New("signed-out").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Signed out · authcore</title></head>
<body><main><h1>Signed out</h1><p>If this browser was signed in to authcore for that application, it is signed out now.
Sign-ins of other applications and other browsers are as they were.</p><p><a href="{{.}}">Open the console</a></p></main></body></html>`))

func (h *handler) signedOut(c *fiber.Ctx) error {
	c.Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
	c.Set("X-Frame-Options", "DENY")
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	return signedOutPage.Execute(c.Response().BodyWriter(), h.cfg.SelfURL()+"/console")
}
