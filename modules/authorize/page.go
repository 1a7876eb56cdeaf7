package authorize

import (
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/platform/httpserver"
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
	httpserver.SecurePage(c, httpserver.PagePolicy)
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	c.Status(http.StatusBadRequest)
	return errorPage.Execute(c.Response().BodyWriter(), reason)
}

// signedOutPage is what a person sees after RP-initiated logout when the browser is not
// sent back to the application: what was signed out, and why it was not sent back.
var signedOutPage = template.Must(template.New("signed-out").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Signed out · authcore</title>{{with .Next}}<meta http-equiv="refresh" content="3;url={{.}}">{{end}}</head>
<body><main><h1>Signed out</h1>{{if .Hinted}}<p>If this browser was signed in to authcore for that application, it is signed out now.
Sign-ins of other applications and other browsers are as they were.</p>{{else}}<p>Nothing was signed out: the application did not
say which sign-in to end (id_token_hint). Sign-ins of every application and every browser are as they were.</p>{{end}}
{{with .Note}}<p>{{.}}</p>{{end}}{{range .Fronts}}<iframe src="{{.}}" title="Signing out of an application" width="0" height="0" hidden></iframe>{{end}}
{{with .Next}}<p><a href="{{.}}">Continue to the application</a></p>{{else}}<p><a href="{{.Console}}">Open the console</a></p>{{end}}</main></body></html>`))

// signedOut answers 200 with the signed-out page; hinted says whether an id_token_hint
// named a sign-in to end, note why the browser stays here ("" when it had nowhere to go).
//
// fronts are the front-channel logout URLs of the apps the ended session signed in to
// (OIDC Front-Channel Logout 1.0 §4), loaded in iframes: the page's policy allows framing
// exactly their origins. next, when set, is where the browser goes once they loaded.
func (h *handler) signedOut(c *fiber.Ctx, hinted bool, note string, fronts []string, next string) error {
	policy := httpserver.PagePolicy
	if origins := originsOf(fronts); len(origins) > 0 {
		policy += "; frame-src " + strings.Join(origins, " ")
	}
	httpserver.SecurePage(c, policy)
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	return signedOutPage.Execute(c.Response().BodyWriter(), struct {
		Hinted              bool
		Note, Console, Next string
		Fronts              []string
	}{hinted, note, h.cfg.SelfURL() + "/console", next, fronts})
}

// originsOf are the distinct origins of urls, for frame-src.
func originsOf(urls []string) []string {
	var out []string
	for _, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil || u.Scheme == "" || u.Host == "" {
			continue
		}
		o := u.Scheme + "://" + u.Host
		if !slices.Contains(out, o) {
			out = append(out, o)
		}
	}
	return out
}
