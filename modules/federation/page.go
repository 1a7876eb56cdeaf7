package federation

import (
	"html/template"

	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/httpserver"
)

// errorPage is what a person sees when a sign-in with a provider cannot finish: the
// reason and the way back. html/template escapes both.
var errorPage = template.Must(template.New("error").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign-in did not finish · authcore</title></head>
<body><main><h1>Sign-in did not finish</h1><p role="alert">{{.Message}}</p>
<p><small>({{.Code}})</small></p>
<p><a href="{{.Back}}">Back to sign in</a></p></main></body></html>`))

// wantsPage: a browser navigating here (the start and the callback are where the
// upstream sends people) gets a page; an API client, JSON.
func wantsPage(c *fiber.Ctx) bool {
	return c.Accepts(fiber.MIMEApplicationJSON, fiber.MIMETextHTML) == fiber.MIMETextHTML
}

// fail answers err: a page for a person, the JSON error for anything else. Only errors
// the contract names get a page; anything else is the renderer's (logged, 500). The
// renderer logs what it must of both.
func (h *handler) fail(c *fiber.Ctx, err error, back string) error {
	if _, ok := apperr.As(err); !ok || !wantsPage(c) {
		return err
	}
	return httpserver.Page(err, func(c *fiber.Ctx, e *apperr.Error) error {
		return errorPage.Execute(c.Response().BodyWriter(), map[string]string{"Message": e.Message, "Code": e.Code, "Back": back})
	})
}
