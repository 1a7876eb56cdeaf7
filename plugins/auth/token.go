package auth

import (
	"context"
	"encoding/base64"
	"errors"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/authcore/authcore/ent/schema"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/credential"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/ratelimit"
	"github.com/authcore/authcore/platform/resource"
)

// tokenTTL is the lifetime of an access token, cut short by the badge's own expiry.
const tokenTTL = time.Hour

// Audience is the aud claim of client-credentials tokens.
const Audience = "authcore"

// tokenEndpoint is the standard OAuth surface: the token endpoint (client credentials and
// token exchange), introspection, revocation and the server metadata.
type tokenEndpoint struct {
	p         *Product
	limits    *ratelimit.Limiters
	agents    identity.AgentTokens
	resources resource.Registry
	denied    *denylist
	kinds     *credential.Registry
	issued    prometheus.Counter // exchanged tokens
	// Answers by result, one vector per endpoint.
	results, exchanges, introspections, revocations *prometheus.CounterVec
}

func (t *tokenEndpoint) routes() []httpserver.Route {
	return []httpserver.Route{
		{Method: http.MethodPost, Path: TokenPath, Handlers: []fiber.Handler{t.token}},
		{Method: http.MethodPost, Path: IntrospectPath, Handlers: []fiber.Handler{t.introspect}},
		{Method: http.MethodPost, Path: RevokePath, Handlers: []fiber.Handler{t.revoke}},
		{Method: http.MethodGet, Path: MetadataPath, Handlers: []fiber.Handler{t.metadata}},
	}
}

func (t *tokenEndpoint) issuerCtx(c *fiber.Ctx) context.Context {
	return httpserver.WithIssuer(c, t.p.cfg)
}

func originOf(c *fiber.Ctx) audit.Origin { return httpserver.Origin(c) }

// oauthError is an RFC 6749 §5.2 error answer.
type oauthError struct {
	status int
	code   string
	desc   string
}

// fail answers an RFC 6749 §5.2 error of the token endpoint.
func (t *tokenEndpoint) fail(c *fiber.Ctx, e oauthError) error { return t.failAt(c, t.results, e) }

// failAt answers an RFC 6749 §5.2 error, counted in counter. invalid_client is always 401
// with a Basic challenge: required when the client used HTTP authentication, allowed
// otherwise; it spends one unit of the caller's failure budget.
func (t *tokenEndpoint) failAt(c *fiber.Ctx, counter *prometheus.CounterVec, e oauthError) error {
	if e.code == "invalid_client" {
		c.Set(fiber.HeaderWWWAuthenticate, `Basic realm="authcore", charset="UTF-8"`)
		t.limits.Failures.Fail(httpserver.ClientIP(c))
	}
	counter.WithLabelValues(e.code).Inc()
	return c.Status(e.status).JSON(fiber.Map{"error": e.code, "error_description": e.desc})
}

func invalidRequest(desc string) oauthError {
	return oauthError{http.StatusBadRequest, "invalid_request", desc}
}

var errInvalidClient = oauthError{http.StatusUnauthorized, "invalid_client", "client authentication failed"}

// token is the client-credentials grant (RFC 6749 §4.4) with client_secret_basic and
// client_secret_post authentication (§2.3.1).
func (t *tokenEndpoint) token(c *fiber.Ctx) error {
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set("Pragma", "no-cache")
	if err := t.limits.Failures.Check(httpserver.ClientIP(c)); err != nil {
		return err
	}
	basicID, basicSecret, basic, basicErr := basicAuth(c.Get(fiber.HeaderAuthorization))
	form, ferr := formOf(c)
	if ferr == nil && form.Get("grant_type") == grantTokenExchange {
		return t.exchange(c, form)
	}
	if basicErr != nil {
		return t.fail(c, errInvalidClient)
	}
	if ferr != nil {
		return t.fail(c, *ferr)
	}
	for k, v := range form {
		if len(v) > 1 && k != "resource" {
			return t.fail(c, invalidRequest("parameter "+k+" is repeated"))
		}
	}
	grant := form.Get("grant_type")
	if grant == "" {
		return t.fail(c, invalidRequest("grant_type is required"))
	}
	cl, oerr, err := t.client(c, form, basicID, basicSecret, basic)
	if err != nil {
		return err
	}
	if oerr != nil {
		return t.fail(c, *oerr)
	}
	if grant != "client_credentials" {
		return t.fail(c, oauthError{http.StatusBadRequest, "unsupported_grant_type", "only client_credentials is supported"})
	}
	targets, terr := targetsOf(url.Values{"resource": form["resource"]})
	if terr != nil {
		return t.fail(c, *terr)
	}
	scope, ok := grantScope(form.Get("scope"), cl.role)
	if !ok {
		return t.fail(c, oauthError{http.StatusBadRequest, "invalid_scope", "scope must name roles up to the badge's role (" + cl.role + ")"})
	}
	// RFC 8707: a token for the project's registered resources only (SPEC §11); without
	// resource, for authcore's own API.
	var aud any = Audience
	if len(targets) > 0 {
		audience, bounds, terr, err := t.registered(c, cl.projectID, targets)
		if err != nil {
			return err
		}
		if terr != nil {
			return t.fail(c, *terr)
		}
		if _, ok := narrow(strings.Fields(scope), strings.Fields(scope), bounds); !ok {
			return t.fail(c, oauthError{http.StatusBadRequest, "invalid_scope", "the resource's scopes do not cover " + scope})
		}
		aud = audience
		if len(audience) == 1 {
			aud = audience[0]
		}
	}

	now := t.p.clock.Now().Truncate(time.Second) // JWT times are whole seconds
	exp := now.Add(tokenTTL)
	if cl.expiresAt != nil && cl.expiresAt.Before(exp) {
		exp = *cl.expiresAt
	}
	exp = exp.Truncate(time.Second)
	tok, err := t.p.signer.SignAccessToken(httpserver.WithIssuer(c, t.p.cfg), map[string]any{
		"sub": cl.id, "client_id": cl.id, "aud": aud, "iat": now.Unix(), "exp": exp.Unix(), "jti": schema.NewID("jti_"),
		"project_id": cl.projectID, "role": highestRole(scope), "scope": scope,
	})
	if errors.Is(err, identity.ErrEngineNotReady) {
		return c.Status(http.StatusServiceUnavailable).JSON(fiber.Map{"error": "temporarily_unavailable", "error_description": "signing keys are not loaded yet"})
	}
	if err != nil {
		return err
	}
	t.results.WithLabelValues("ok").Inc()
	return c.JSON(fiber.Map{
		"access_token": tok, "token_type": "Bearer",
		"expires_in": int(exp.Sub(now).Seconds()), "scope": scope,
	})
}

// client authenticates the calling client by client_secret_basic or client_secret_post
// (RFC 6749 §2.3.1), never both.
func (t *tokenEndpoint) client(c *fiber.Ctx, form url.Values, basicID, basicSecret string, basic bool) (client, *oauthError, error) {
	id, sec := form.Get("client_id"), form.Get("client_secret")
	switch {
	case basic && sec != "":
		e := invalidRequest("use one client authentication method, not two")
		return client{}, &e, nil
	case basic:
		if id != "" && id != basicID {
			e := invalidRequest("client_id does not match the Authorization header")
			return client{}, &e, nil
		}
		id, sec = basicID, basicSecret
	case id == "" || sec == "":
		return client{}, &errInvalidClient, nil
	}
	cl, ok, err := t.p.authenticate(c.UserContext(), id, sec)
	if err != nil || !ok {
		if err == nil {
			return client{}, &errInvalidClient, nil
		}
		return client{}, nil, err
	}
	return cl, nil, nil
}

// formOf reads an application/x-www-form-urlencoded body.
func formOf(c *fiber.Ctx) (url.Values, *oauthError) {
	if mt, _, _ := mime.ParseMediaType(c.Get(fiber.HeaderContentType)); mt != "application/x-www-form-urlencoded" {
		e := invalidRequest("the body must be application/x-www-form-urlencoded")
		return nil, &e
	}
	form, err := url.ParseQuery(string(c.Body()))
	if err != nil {
		e := invalidRequest("the body is not valid form encoding")
		return nil, &e
	}
	return form, nil
}

// basicAuth reads client_secret_basic: both parts are form-urlencoded before base64
// (RFC 6749 §2.3.1). present is false when there is no Basic header.
func basicAuth(h string) (id, sec string, present bool, err error) {
	const prefix = "Basic "
	if len(h) < len(prefix) || !strings.EqualFold(h[:len(prefix)], prefix) {
		return "", "", false, nil
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(h[len(prefix):]))
	if err != nil {
		return "", "", true, err
	}
	u, p, ok := strings.Cut(string(raw), ":")
	if !ok {
		return "", "", true, errors.New("no colon")
	}
	if id, err = url.QueryUnescape(u); err != nil {
		return "", "", true, err
	}
	if sec, err = url.QueryUnescape(p); err != nil {
		return "", "", true, err
	}
	return id, sec, true, nil
}

// grantScope returns the scope to grant: by default the badge's role; otherwise every
// requested scope must be a role no higher than the badge's.
func grantScope(requested, role string) (string, bool) {
	max := identity.RoleRank(role)
	if max == 0 {
		return "", false // a client whose role is not one: grant nothing (found by FuzzClientAuth)
	}
	fields := strings.Fields(requested)
	if len(fields) == 0 {
		return role, true
	}
	for _, f := range fields {
		if r := identity.RoleRank(f); r == 0 || r > max {
			return "", false
		}
	}
	return strings.Join(fields, " "), true
}

// highestRole is the role a granted scope amounts to: its highest role, never above what
// was granted (SPEC §9).
func highestRole(scope string) string {
	best := ""
	for _, f := range strings.Fields(scope) {
		if identity.RoleRank(f) > identity.RoleRank(best) {
			best = f
		}
	}
	return best
}
