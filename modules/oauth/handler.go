package oauth

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/credential"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/oauth"
	"github.com/authcore/authcore/platform/ratelimit"
)

// server is the standard OAuth surface.
type server struct {
	cfg     config.Config
	limits  *ratelimit.Limiters
	kinds   *credential.Registry
	keys    oauth.Signer
	grants  *grants
	clients []oauth.Clients
	extra   []oauth.Metadata
	results *results
}

// grants are the contributed grant types.
type grants struct {
	byType map[string]oauth.Grant
	types  []string // sorted
}

func (s *server) routes() []httpserver.Route {
	one := func(endpoint string, h fiber.Handler) []fiber.Handler { return []fiber.Handler{s.counted(endpoint, h)} }
	return []httpserver.Route{
		{Method: http.MethodPost, Path: oauth.TokenPath, Handlers: []fiber.Handler{s.token}},
		{Method: http.MethodPost, Path: oauth.IntrospectPath, Handlers: one("introspect", s.introspect)},
		{Method: http.MethodPost, Path: oauth.RevokePath, Handlers: one("revoke", s.revoke)},
		{Method: http.MethodGet, Path: oauth.MetadataPath, Handlers: []fiber.Handler{s.metadata}},
		{Method: http.MethodGet, Path: oauth.MetadataPath + "/:issuerPath", Handlers: []fiber.Handler{s.pathInserted}},
		{Method: http.MethodGet, Path: oauth.JWKSPath, Handlers: []fiber.Handler{s.jwks}},
	}
}

// pathInserted is RFC 8414 §3.1: an issuer with a path (AUTHCORE_PUBLIC_URL
// https://example.com/auth) has its metadata at the path-inserted location, which a proxy
// in front forwards as it is. One path segment: the route cannot tell more apart.
func (s *server) pathInserted(c *fiber.Ctx) error {
	u, err := url.Parse(s.cfg.PublicURL)
	if err != nil || s.cfg.PublicURL == "" || strings.Trim(u.Path, "/") != c.Params("issuerPath") {
		return apperr.NotFound("no authorization server metadata here")
	}
	return s.metadata(c)
}

// counted counts an endpoint's answers by result: the error code of a failure, else
// whatever the handler stored under resultKey. A client that failed to authenticate, or
// presented a grant that is not live, spends one unit of its failure budget.
func (s *server) counted(endpoint string, h fiber.Handler) fiber.Handler {
	return func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderCacheControl, "no-store")
		c.Set("Pragma", "no-cache")
		if err := s.limits.Failures.Check(httpserver.ClientIP(c)); err != nil {
			return err
		}
		err := h(c)
		result, _ := c.Locals(resultKey{}).(string)
		if e, ok := apperr.As(err); ok && e.Style == apperr.StyleOAuth {
			result = e.Code
			if e.Code == "invalid_client" || e.Code == "invalid_grant" {
				s.limits.Failures.Fail(httpserver.ClientIP(c))
			}
		}
		if result != "" {
			s.results.WithLabelValues(endpoint, result).Inc()
		}
		return err
	}
}

type resultKey struct{}

// token dispatches to the grant named by grant_type, after client authentication when the
// grant asks for it.
func (s *server) token(c *fiber.Ctx) error {
	endpoint := "token"
	form, ferr := formOf(c)
	g := s.grants.byType[form.Get("grant_type")]
	if ferr == nil && g != nil {
		endpoint = g.Metric()
	}
	return s.counted(endpoint, func(c *fiber.Ctx) error {
		if g != nil && !g.ClientAuth() {
			// The grant carries its own credential (token exchange's subject token).
			if ferr != nil {
				return ferr
			}
			return s.issue(c, g, form, nil)
		}
		p, err := presentedBy(c, ferr)
		if err != nil {
			return err
		}
		if err := repeated(form, g); err != nil {
			return err
		}
		if form.Get("grant_type") == "" {
			return oauth.InvalidRequest("grant_type is required")
		}
		cl, err := s.client(c, form, p)
		if err != nil {
			return err
		}
		if g == nil {
			return oauth.Error(apperr.KindInvalid, "unsupported_grant_type", "supported grant types: "+strings.Join(s.grants.types, ", "))
		}
		return s.issue(c, g, form, &cl)
	})(c)
}

func (s *server) issue(c *fiber.Ctx, g oauth.Grant, form map[string][]string, cl *oauth.Client) error {
	if !g.ClientAuth() {
		if err := repeated(form, g); err != nil {
			return err
		}
	}
	tok, err := g.Token(s.issuerCtx(c), oauth.Request{Form: form, Client: cl})
	if err != nil {
		return err
	}
	body, err := appendToken(make([]byte, 0, 1024), tok)
	if err != nil {
		return err
	}
	c.Locals(resultKey{}, "ok")
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Send(body)
}

// repeated refuses a parameter given more than once that g (nil: no grant known) does not
// allow to repeat.
func repeated(form map[string][]string, g oauth.Grant) error {
	for k, v := range form {
		if len(v) > 1 && (g == nil || !g.Repeatable(k)) {
			return oauth.InvalidRequest("parameter " + k + " is repeated")
		}
	}
	return nil
}

func (s *server) issuerCtx(c *fiber.Ctx) context.Context { return httpserver.WithIssuer(c, s.cfg) }

var inactive = []byte(`{"active":false}`)

// introspect is RFC 7662 for the calling client's project: whatever kind the token is,
// its owner answers (SPEC §15). Anything else — another project's credential included —
// is {active:false}.
func (s *server) introspect(c *fiber.Ctx) error {
	form, ferr := formOf(c)
	p, err := presentedBy(c, ferr)
	if err != nil {
		return err
	}
	cl, err := s.client(c, form, p)
	if err != nil {
		return err
	}
	token := form.Get("token")
	if token == "" || len(form["token"]) > 1 {
		return oauth.InvalidRequest("give token once")
	}
	fields, err := s.kinds.Introspect(c.UserContext(), token, cl.ProjectID)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	if fields == nil {
		c.Locals(resultKey{}, "inactive")
		return c.Send(inactive)
	}
	fields["active"] = true
	fields["iss"] = identity.IssuerFrom(s.issuerCtx(c))
	fields["project_id"] = cl.ProjectID
	body, err := appendAnswer(make([]byte, 0, 512), fields)
	if err != nil {
		return err
	}
	c.Locals(resultKey{}, "active")
	return c.Send(body)
}

// revoke is RFC 7009 self-revocation: whoever holds a credential of a revocable kind can
// revoke it with nothing else (a leaked key's owner, a secret scanner). The answer is 200
// {} whether or not the token was one (§2.2): it tells nothing. Guessing costs a store
// lookup per well-formed token, so misses spend the failure budget.
func (s *server) revoke(c *fiber.Ctx) error {
	form, ferr := formOf(c)
	if ferr != nil {
		return ferr
	}
	token := form.Get("token")
	if token == "" || len(form["token"]) > 1 {
		return oauth.InvalidRequest("give token once")
	}
	_, err := s.kinds.Revoke(c.UserContext(), token, credential.Revocation{Metadata: map[string]any{"via": "self"}, Origin: httpserver.Origin(c)})
	result := "revoked"
	switch {
	case errors.Is(err, credential.ErrNotLive):
		result = "not_live"
		s.limits.Failures.Fail(httpserver.ClientIP(c))
	case err != nil:
		return err
	}
	c.Locals(resultKey{}, result)
	return c.JSON(fiber.Map{})
}

// metadata is RFC 8414 authorization server metadata, its URLs under the issuer, its
// grant types and client authentication methods those contributed.
func (s *server) metadata(c *fiber.Ctx) error {
	iss := identity.IssuerFrom(s.issuerCtx(c))
	auth := []string{}
	if len(s.clients) > 0 {
		auth = []string{"client_secret_basic", "client_secret_post"}
	}
	tokenAuth := append([]string(nil), auth...)
	for _, g := range s.grants.byType {
		if !g.ClientAuth() {
			tokenAuth = append(tokenAuth, "none")
			break
		}
	}
	// Shared caches may keep it only when its URLs come from the configured public URL
	// (SPEC §9a); the localhost default is a development answer, not one to spread.
	if s.cfg.PublicURL != "" {
		c.Set(fiber.HeaderCacheControl, "public, max-age=300")
	}
	doc := fiber.Map{
		"issuer":                                iss,
		"token_endpoint":                        iss + oauth.TokenPath,
		"jwks_uri":                              iss + oauth.JWKSPath,
		"introspection_endpoint":                iss + oauth.IntrospectPath,
		"revocation_endpoint":                   iss + oauth.RevokePath,
		"grant_types_supported":                 s.grants.types,
		"token_endpoint_auth_methods_supported": tokenAuth,
		"introspection_endpoint_auth_methods_supported": auth,
		"revocation_endpoint_auth_methods_supported":    []string{"none"},
		"response_types_supported":                      []string{},
		"scopes_supported":                              []string{identity.RoleViewer, identity.RoleDeveloper, identity.RoleAdmin},
	}
	for _, extra := range s.extra {
		for k, v := range extra(iss) {
			doc[k] = v
		}
	}
	return c.JSON(doc)
}

// jwks serves the public keys every token the server signs verifies with.
func (s *server) jwks(c *fiber.Ctx) error {
	set, err := s.keys.JWKS()
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "public, max-age=300")
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Send(set)
}

// results counts the OAuth endpoints' answers by endpoint and result ("ok", "active",
// "revoked", … or the RFC 6749 error code): authcore_oauth_requests_total.
type results struct{ *prometheus.CounterVec }

func newResults() *results {
	return &results{prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "authcore_oauth_requests_total",
		Help: "OAuth token, introspection and revocation requests, by endpoint and result.",
	}, []string{"endpoint", "result"})}
}
