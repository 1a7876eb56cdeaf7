package federation

import (
	"encoding/xml"
	"net/http"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/ent/federationflow"
	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
)

// samlCookie binds a SAML sign-in in flight to its browser, as browserCookie does an
// upstream one; scoped to the SAML routes.
const (
	acsBodyLimit = 512 << 10
	samlCookie   = "acSAML"
	samlPath     = "/saml"
)

// samlRoutes are SPEC §27's routes outside /v1: the SP metadata, SP-initiated sign-in and
// the ACS of each connection.
type samlRoutes struct{ h *handler }

func (h *handler) samlRoutes() []httpserver.Route {
	s := samlRoutes{h: h}
	return []httpserver.Route{
		{Method: http.MethodGet, Path: samlPath + "/:connectionId/metadata", Handlers: []fiber.Handler{s.metadata}},
		{Method: http.MethodGet, Path: samlPath + "/:connectionId/login", Handlers: []fiber.Handler{s.login}},
		// A Response may be 256 KiB of XML (SPEC §27), base64 and form-encoded: more than the
		// server's 64 KiB. The server grants it only to requests with a cookie (the
		// browser's flow binding does), so an IdP-initiated post without one keeps 64 KiB.
		{Method: http.MethodPost, Path: samlPath + "/:connectionId/acs", Handlers: []fiber.Handler{s.acs}, BodyLimit: acsBodyLimit},
	}
}

// metadata is GET /saml/{id}/metadata: the SP's EntityDescriptor (its signing and
// encryption certificate, the ACS by HTTP-POST) that the org's IdP is configured with.
func (s samlRoutes) metadata(c *fiber.Ctx) error {
	conn, err := s.h.svc.saml.admin.get(c.UserContext(), "", strings.Clone(c.Params("connectionId")))
	if err != nil {
		return err
	}
	sp, err := s.h.svc.saml.sps.of(conn)
	if err != nil {
		return err
	}
	b, err := xml.MarshalIndent(sp.Metadata(), "", "  ")
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, "application/samlmetadata+xml")
	return c.Send(append([]byte(xml.Header), b...))
}

func (s samlRoutes) setMark(c *fiber.Ctx, v string) {
	// The IdP posts the Response to the ACS from its own site: only SameSite=None (with
	// Secure) goes along on a cross-site POST. Over plain http (development, tests) Lax,
	// which serves an IdP of the same site.
	same := fiber.CookieSameSiteLaxMode
	if !s.h.cfg.InsecureCookies {
		same = fiber.CookieSameSiteNoneMode
	}
	c.Cookie(&fiber.Cookie{Name: samlCookie, Value: v, Path: samlPath, MaxAge: int(flowTTL.Seconds()),
		HTTPOnly: true, SameSite: same, Secure: !s.h.cfg.InsecureCookies})
}

// login is GET /saml/{id}/login?redirect=: 302 to the IdP with a signed AuthnRequest
// (HTTP-Redirect binding), the RelayState bound to this browser.
func (s samlRoutes) login(c *fiber.Ctx) error {
	h := s.h
	ctx := c.UserContext()
	// Starting writes a row for anyone who asks: it spends the address's sign-in budget,
	// as an upstream provider's start does.
	if err := h.limits.Attempts.Take(httpserver.ClientIP(c)); err != nil {
		return h.fail(c, err, h.signInBack(""))
	}
	conn, err := h.svc.saml.admin.get(ctx, "", strings.Clone(c.Params("connectionId")))
	if err != nil {
		return h.fail(c, err, h.signInBack(""))
	}
	redirect, ok := h.svc.checkRedirect(c.Query("redirect"))
	if !ok {
		return h.fail(c, apperr.Validation(apperr.Issue{Field: "redirect", Reason: "must be a console path or a URL of an allowed origin"}), h.signInBack(conn.TenantID))
	}
	mark := c.Cookies(samlCookie)
	if len(mark) != 43 {
		mark = ""
	}
	st, err := h.svc.saml.login(ctx, conn, redirect, strings.Clone(mark), federationflow.PurposeSignin)
	if err != nil {
		return h.fail(c, err, h.signInBack(conn.TenantID))
	}
	s.setMark(c, st.Browser)
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Redirect(st.URL, http.StatusFound)
}

// acs is POST /saml/{id}/acs (HTTP-POST binding): signed in (cookies, then the redirect
// the sign-in started with), on to the second step, a test's result, or a page (JSON for
// an API client) naming the rule the Response broke.
func (s samlRoutes) acs(c *fiber.Ctx) error {
	h := s.h
	in := acsPost{SAMLResponse: strings.Clone(c.FormValue("SAMLResponse")), RelayState: strings.Clone(c.FormValue("RelayState")),
		Browser: strings.Clone(c.Cookies(samlCookie)), UserAgent: string(c.Request().Header.UserAgent()), IP: httpserver.ClientIP(c)}
	out, flow, conn, err := h.svc.saml.acs(httpserver.WithIssuer(c, h.cfg), strings.Clone(c.Params("connectionId")), in, httpserver.Origin(c))
	c.Set(fiber.HeaderCacheControl, "no-store")
	if err != nil {
		back := h.signInBack(conn.TenantID)
		if flow != nil {
			back = h.signInBack(flow.TenantID)
		}
		return h.fail(c, err, back)
	}
	switch {
	case out.Tested != nil:
		return c.JSON(fiber.Map{"testId": flow.ID, "providerId": conn.ID, "result": out.Tested})
	case out.MFAToken != "":
		q := url.Values{"token": {out.MFAToken}, "methods": {strings.Join(out.Methods, ",")}}
		return c.Redirect(h.svc.self+"/console#/mfa?"+q.Encode(), http.StatusFound)
	}
	guard.SetSessionCookies(c, h.cfg, *out.Tokens, h.svc.clock.Now())
	return c.Redirect(out.Redirect, http.StatusFound)
}
