package federation

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/ent/federationflow"
	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/jsonbody"
	"github.com/authcore/authcore/platform/ratelimit"
)

type handler struct {
	svc     *service
	guard   *guard.Guard
	cfg     config.Config
	limits  *ratelimit.Limiters
	signins *ratelimit.SignIns
	devices *ratelimit.Devices
	tenants identity.Tenants // nil: only "public"
}

// browserCookie binds a sign-in in flight to the browser that started it: the callback
// must bring it back. It is scoped to the provider routes and holds nothing but a random
// mark (only its digest is stored).
const (
	browserCookie = "acFederation"
	providersPath = "/v1/auth-core/providers"
)

func (h *handler) routes() []httpserver.Route {
	csrf, attempts := h.guard.LoginCSRF(), h.limits.Attempts.Middleware()
	session, dashboard := h.guard.Session(), h.guard.Dashboard()
	admin := h.guard.ProjectRole(identity.RoleAdmin, guard.FromPath, nil)
	r := func(method, path string, hs ...fiber.Handler) httpserver.Route {
		return httpserver.Route{Method: method, Path: path, Handlers: hs}
	}
	base := "/v1/projects/:id/auth"
	return append([]httpserver.Route{
		r(http.MethodGet, providersPath, h.publicList),
		r(http.MethodGet, providersPath+"/discover", attempts, h.discover),
		r(http.MethodGet, providersPath+"/:providerId/start", h.start),
		r(http.MethodGet, providersPath+"/:providerId/callback", h.callback),
		r(http.MethodPost, providersPath+"/:providerId/callback", h.callback), // response_mode=form_post (Apple)
		r(http.MethodGet, "/v1/auth-core/identities", session, h.listIdentities),
		r(http.MethodDelete, "/v1/auth-core/identities/:identityId", session, h.guard.Recently(h.unlink)),
		r(http.MethodPost, "/v1/auth-core/identities/link/:providerId", session, h.guard.Recently(h.link)),
		r(http.MethodPost, "/v1/auth-core/email/signin-request", attempts, h.mailRequest),
		r(http.MethodPost, "/v1/auth-core/email/signin", csrf, attempts, h.mailSignIn),
		r(http.MethodPost, "/v1/auth-core/domains/verify", attempts, h.verifyDomain),
		r(http.MethodGet, base+"/methods", dashboard, admin, h.getMethods),
		r(http.MethodPut, base+"/methods", dashboard, admin, h.guard.Recently(h.putMethods)),
		r(http.MethodGet, base+"/providers", dashboard, admin, h.adminList),
		r(http.MethodPost, base+"/providers", dashboard, admin, h.guard.Recently(h.create)),
		r(http.MethodGet, base+"/providers/:providerId", dashboard, admin, h.adminGet),
		r(http.MethodPatch, base+"/providers/:providerId", dashboard, admin, h.guard.Recently(h.patch)),
		r(http.MethodDelete, base+"/providers/:providerId", dashboard, admin, h.guard.Recently(h.remove)),
		r(http.MethodPost, base+"/providers/:providerId/domains", dashboard, admin, h.guard.Recently(h.claimDomain)),
		r(http.MethodDelete, base+"/providers/:providerId/domains/:domain", dashboard, admin, h.guard.Recently(h.dropDomain)),
	}, append(append(h.samlRoutes(), h.connectionRoutes("/v1/projects/:id/orgs/:orgId/connections", projectOrg, h.guard.Recently, dashboard, admin)...),
		// The org's owners and its setup sessions for sso (SPEC §26): a connection vouches
		// for every account of the org's domains, owners included.
		h.connectionRoutes("/v1/auth-core/orgs/:orgId/connections", projectOrg, h.guard.Recently, h.guard.OrgOwner(guard.IntentSSO))...)...)
}

// tenantParam reads ?tenantId= (the dashboard's when absent) and checks it exists.
func (h *handler) tenantParam(c *fiber.Ctx) (string, error) {
	t := strings.TrimSpace(c.Query("tenantId"))
	if t == "" {
		return identity.PublicTenant, nil
	}
	t = strings.Clone(t)
	return t, h.checkTenant(c.UserContext(), t, "tenantId")
}

func (h *handler) checkTenant(ctx context.Context, t, field string) error {
	if t == identity.PublicTenant {
		return nil
	}
	if h.tenants != nil && len(t) <= 40 {
		ok, err := h.tenants.TenantExists(ctx, t)
		if err != nil || ok {
			return err
		}
	}
	return apperr.Validation(apperr.Issue{Field: field, Reason: "no such tenant"})
}

// publicProvider is what a sign-in page shows of a provider.
type publicProvider struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Type     string `json:"type"`
	Preset   string `json:"preset"`
	StartURL string `json:"startUrl"`
}

// publicList is GET /v1/auth-core/providers: a tenant's enabled methods and providers.
func (h *handler) publicList(c *fiber.Ctx) error {
	tenant, err := h.tenantParam(c)
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	m, err := h.svc.store.methods(ctx, tenant)
	if err != nil {
		return err
	}
	ps, err := h.svc.store.list(ctx, tenant)
	if err != nil {
		return err
	}
	out := []publicProvider{}
	for _, p := range enabledOnly(ps) {
		if p.OrgID != "" {
			continue // an org's connection is found by its people's domain, not listed to all
		}
		out = append(out, publicProvider{ID: p.ID, Name: p.Name, Type: p.Type, Preset: p.Preset, StartURL: startURL(h.svc.self, p.ID)})
	}
	return c.JSON(fiber.Map{"tenantId": tenant, "password": m.Password, "emailLink": m.EmailLink && h.svc.mail.Configured(), "providers": out})
}

// discover is GET /v1/auth-core/providers/discover?email=: the connection of the org that
// verified the address's domain (SPEC §26), else the provider whose proven domain holds it.
func (h *handler) discover(c *fiber.Ctx) error {
	tenant, err := h.tenantParam(c)
	if err != nil {
		return err
	}
	addr, ok := identity.NormalizeEmail(c.Query("email"))
	if !ok {
		return apperr.Validation(apperr.Issue{Field: "email", Reason: "not a valid email address"})
	}
	ctx := c.UserContext()
	pol, isOrg, err := h.svc.org.of(ctx, tenant, addr)
	if err != nil {
		return err
	}
	if isOrg {
		p, found, err := h.svc.org.connection(ctx, h.svc.self, tenant, pol.OrgID)
		if err != nil {
			return err
		}
		if found {
			return c.JSON(fiber.Map{"providerId": p.ID, "name": p.Name, "ssoRequired": pol.SSORequired, "orgId": pol.OrgID,
				"startUrl": p.StartURL})
		}
	}
	p, found, err := h.svc.providerFor(ctx, tenant, addr)
	if err != nil {
		return err
	}
	if !found {
		return errNoProviderForEmail
	}
	return c.JSON(fiber.Map{"providerId": p.ID, "name": p.Name, "ssoRequired": p.SSORequired, "startUrl": startURL(h.svc.self, p.ID)})
}

// signInBack is the sign-in page a refused person returns to.
func (h *handler) signInBack(tenant string) string {
	if tenant == "" || tenant == identity.PublicTenant {
		return h.svc.self + "/console"
	}
	return h.svc.self + "/console?tenant=" + url.QueryEscape(tenant)
}

// browserMark is the request's binding cookie, or "" for a new one.
func (h *handler) browserMark(c *fiber.Ctx) string {
	v := c.Cookies(browserCookie)
	if len(v) != 43 { // 32 random bytes, base64url: what it holds does not matter, only its digest is kept
		return ""
	}
	return strings.Clone(v)
}

func (h *handler) setBrowserMark(c *fiber.Ctx, v string) {
	// Lax keeps it off cross-site POSTs: an upstream answering with form_post (Apple) needs
	// None, which browsers take only with Secure.
	same := fiber.CookieSameSiteLaxMode
	if !h.cfg.InsecureCookies {
		same = fiber.CookieSameSiteNoneMode
	}
	c.Cookie(&fiber.Cookie{Name: browserCookie, Value: v, Path: providersPath, MaxAge: int(flowTTL.Seconds()),
		HTTPOnly: true, SameSite: same, Secure: !h.cfg.InsecureCookies})
}

// start is GET /v1/auth-core/providers/{id}/start?redirect=: 302 to the upstream.
func (h *handler) start(c *fiber.Ctx) error {
	id := strings.Clone(c.Params("providerId"))
	ctx := c.UserContext()
	// Starting writes a row and may fetch a discovery document, for anyone who asks: it
	// spends the address's sign-in budget, as the OAuth authorization endpoint does.
	if err := h.limits.Attempts.Take(httpserver.ClientIP(c)); err != nil {
		return h.fail(c, err, h.signInBack(""))
	}
	p, err := h.svc.store.get(ctx, id)
	if err != nil {
		return h.fail(c, err, h.signInBack(""))
	}
	redirect, ok := h.svc.checkRedirect(c.Query("redirect"))
	if !ok {
		return h.fail(c, apperr.Validation(apperr.Issue{Field: "redirect", Reason: "must be a console path or a URL of an allowed origin"}), h.signInBack(p.TenantID))
	}
	st, err := h.svc.begin(ctx, p, redirect, h.browserMark(c), federationflow.PurposeSignin, nil)
	if err != nil {
		return h.fail(c, err, h.signInBack(p.TenantID))
	}
	h.setBrowserMark(c, st.Browser)
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Redirect(st.URL, http.StatusFound)
}

// callback is where the upstream sends the person back: signed in (cookies, then the
// redirect given at start), on to the second step, or a page saying why not.
func (h *handler) callback(c *fiber.Ctx) error {
	id := strings.Clone(c.Params("providerId"))
	get := func(k string) string {
		if c.Method() == http.MethodPost {
			return strings.Clone(c.FormValue(k))
		}
		return strings.Clone(c.Query(k))
	}
	cb := callback{State: get("state"), Code: get("code"), Error: get("error"), ErrorDescription: get("error_description"), Iss: get("iss"),
		Browser: strings.Clone(c.Cookies(browserCookie)), UserAgent: string(c.Request().Header.UserAgent()), IP: httpserver.ClientIP(c),
		Origin: httpserver.Origin(c)}
	if len(cb.ErrorDescription) > 300 {
		cb.ErrorDescription = cb.ErrorDescription[:300]
	}
	out, flow, err := h.svc.finishUpstream(httpserver.WithIssuer(c, h.cfg), id, cb)
	c.Set(fiber.HeaderCacheControl, "no-store")
	if err != nil {
		back := h.signInBack("")
		if flow != nil {
			back = h.signInBack(flow.TenantID)
			if flow.LinkUserID != nil {
				back = h.svc.self + "/console#/account"
			}
		}
		return h.fail(c, err, back)
	}
	switch {
	case out.Tested != nil:
		// An admin's test of an org's connection: what the IdP said, mapped; no session.
		return c.JSON(fiber.Map{"testId": flow.ID, "providerId": id, "result": out.Tested})
	case out.Linked:
		return c.Redirect(out.Redirect, http.StatusFound)
	case out.MFAToken != "":
		// The second step is the console's (SPEC §17), which posts the token with a factor.
		q := url.Values{"token": {out.MFAToken}, "methods": {strings.Join(out.Methods, ",")}}
		return c.Redirect(h.svc.self+"/console#/mfa?"+q.Encode(), http.StatusFound)
	}
	guard.SetSessionCookies(c, h.cfg, *out.Tokens, h.svc.clock.Now())
	return c.Redirect(out.Redirect, http.StatusFound)
}

// link is POST /v1/auth-core/identities/link/{providerId} (signed in, recent): where to
// send the browser to link that provider to the signed-in account.
func (h *handler) link(c *fiber.Ctx) error {
	pr, _ := guard.PrincipalOf(c)
	ctx := c.UserContext()
	f := jsonbody.Read(orEmpty(c.Body()))
	redirect, st := f.String("redirect")
	if st == jsonbody.WrongType {
		f.Fail("redirect", "must be a string")
	}
	if err := f.Err(); err != nil {
		return err
	}
	if redirect == "" {
		redirect = "/console#/account"
	}
	to, ok := h.svc.checkRedirect(redirect)
	if !ok {
		return apperr.Validation(apperr.Issue{Field: "redirect", Reason: "must be a console path or a URL of an allowed origin"})
	}
	p, err := h.svc.store.getIn(ctx, pr.TenantID, strings.Clone(c.Params("providerId")))
	if err != nil {
		return err
	}
	user := pr.UserID
	started, err := h.svc.begin(ctx, p, to, h.browserMark(c), federationflow.PurposeLink, &user)
	if err != nil {
		return err
	}
	h.setBrowserMark(c, started.Browser)
	return c.JSON(fiber.Map{"redirectTo": started.URL})
}

func orEmpty(b []byte) []byte {
	if len(bytes.TrimSpace(b)) == 0 {
		return []byte("{}")
	}
	return b
}

func (h *handler) listIdentities(c *fiber.Ctx) error {
	pr, _ := guard.PrincipalOf(c)
	ids, err := h.svc.linked.identities(c.UserContext(), pr.UserID)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"identities": ids})
}

func (h *handler) unlink(c *fiber.Ctx) error {
	pr, _ := guard.PrincipalOf(c)
	id := strings.Clone(c.Params("identityId"))
	if err := h.svc.linked.unlink(c.UserContext(), pr.UserID, pr.TenantID, id, httpserver.Origin(c)); err != nil {
		return err
	}
	return c.JSON(fiber.Map{"ok": true, "id": id})
}

// readEmailTenant reads { email, tenantId? }.
func (h *handler) readEmailTenant(ctx context.Context, f *jsonbody.Fields) (string, string) {
	addr := ""
	if s, st := f.String("email"); st != jsonbody.OK {
		f.Fail("email", "required string")
	} else if a, ok := identity.NormalizeEmail(s); !ok {
		f.Fail("email", "not a valid email address")
	} else {
		addr = a
	}
	tenant := identity.PublicTenant
	switch s, st := f.String("tenantId"); st {
	case jsonbody.OK:
		if tenant = strings.TrimSpace(s); tenant == "" {
			f.Fail("tenantId", "must be a non-empty string")
		}
	case jsonbody.WrongType:
		f.Fail("tenantId", "must be a non-empty string")
	}
	return addr, tenant
}

var accepted = fiber.Map{"ok": true}

// mailRequest is POST /v1/auth-core/email/signin-request: 202 whoever the address is.
func (h *handler) mailRequest(c *fiber.Ctx) error {
	ctx := c.UserContext()
	f := jsonbody.Read(c.Body())
	addr, tenant := h.readEmailTenant(ctx, f)
	if err := f.Err(); err != nil {
		return err
	}
	if err := h.checkTenant(ctx, tenant, "tenantId"); err != nil {
		return err
	}
	if err := h.svc.requestMail(ctx, tenant, addr); err != nil {
		return err
	}
	return c.Status(http.StatusAccepted).JSON(accepted)
}

// mailSignIn is POST /v1/auth-core/email/signin { token } or { email, code, tenantId? }:
// the sign-in answer. A wrong code spends the account's budget of wrong mailed codes, or
// its device's when the browser holds the account's device cookie.
func (h *handler) mailSignIn(c *fiber.Ctx) error {
	ctx := httpserver.WithIssuer(c, h.cfg)
	f := jsonbody.Read(c.Body())
	proof := mailProof{UserAgent: string(c.Request().Header.UserAgent()), IP: httpserver.ClientIP(c), Origin: httpserver.Origin(c)}
	token, tokenSt := f.String("token")
	switch tokenSt {
	case jsonbody.OK:
		if _, st := f.String("code"); st != jsonbody.Absent {
			f.Fail("body", "give either token, or email and code")
		}
		proof.Token = token
	case jsonbody.WrongType:
		f.Fail("token", "must be a string")
	default:
		proof.Email, proof.Tenant = h.readEmailTenant(ctx, f)
		code, st := f.String("code")
		if st != jsonbody.OK || len(code) != 6 || strings.Trim(code, "0123456789") != "" {
			f.Fail("code", "must be a string of 6 digits")
		}
		proof.Code = code
	}
	if err := f.Err(); err != nil {
		return err
	}
	var out outcome
	var err error
	if proof.Token != "" {
		out, err = h.svc.finishMail(ctx, proof)
	} else {
		// Wrong codes spend a budget of their own, not the password's (issue 46), and a
		// browser holding the account's device cookie spends its device's (SPEC §9a).
		budget := ratelimit.MailedCodes(h.devices.Budget(c, ratelimit.Account(proof.Tenant, proof.Email)))
		refund, spendErr := h.signins.Spend(ctx, budget)
		if spendErr != nil {
			return spendErr
		}
		out, err = h.svc.finishMail(ctx, proof)
		if !errors.Is(err, errInvalidCode) {
			refund(ctx)
		}
	}
	if err != nil {
		return err
	}
	if out.Tokens != nil {
		// A completed sign-in: this browser is the owner's (SPEC §9a device cookie).
		if err := h.devices.Issue(c, ratelimit.Account(out.User.TenantID, out.User.Email), h.svc.clock.Now()); err != nil {
			return err
		}
	}
	return h.answer(c, out)
}

// answer is the sign-in answer of SPEC §2 and §17: { user, session } with cookies, or
// { mfaRequired, mfaToken, methods }.
func (h *handler) answer(c *fiber.Ctx, out outcome) error {
	if out.MFAToken != "" {
		return c.JSON(fiber.Map{"mfaRequired": true, "mfaToken": out.MFAToken, "methods": out.Methods})
	}
	t := *out.Tokens
	guard.SetSessionCookies(c, h.cfg, t, h.svc.clock.Now())
	return c.JSON(fiber.Map{"user": out.User, "session": fiber.Map{"sessionHandle": t.SessionHandle, "accessToken": t.AccessToken,
		"refreshToken": t.RefreshToken, "accessTokenExpiresAt": t.AccessTokenExpiresAt.UTC().Format(time.RFC3339Nano)}})
}

func (h *handler) verifyDomain(c *fiber.Ctx) error {
	f := jsonbody.Read(c.Body())
	token := f.RequiredString("token")
	if err := f.Err(); err != nil {
		return err
	}
	d, providerID, err := h.svc.proveDomain(c.UserContext(), token)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"domain": d.Domain, "verified": d.Verified, "verifiedAt": d.VerifiedAt, "proof": d.Proof, "providerId": providerID})
}
