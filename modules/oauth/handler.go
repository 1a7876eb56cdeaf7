package oauth

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/assertion"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/credential"
	"github.com/authcore/authcore/platform/dpop"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/oauth"
	"github.com/authcore/authcore/platform/ratelimit"
)

// server is the standard OAuth surface.
type server struct {
	dpop    *dpop.Checker
	auth    *clientAuth
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
		{Method: http.MethodGet, Path: oauth.OpenIDConfigurationPath, Handlers: []fiber.Handler{s.discovery}},
		{Method: http.MethodGet, Path: oauth.OpenIDConfigurationPath + "/:issuerPath", Handlers: []fiber.Handler{s.pathInsertedDiscovery}},
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

// discovery is OpenID Connect Discovery 1.0 (SPEC §21): the same document as RFC 8414's,
// served where every OIDC library looks first — when a contributor (the authorization
// module) serves OpenID Connect; without one there is no OpenID Provider here.
func (s *server) discovery(c *fiber.Ctx) error {
	doc := s.document(c)
	if doc["userinfo_endpoint"] == nil {
		return apperr.NotFound("this server is no OpenID Provider")
	}
	return c.JSON(doc)
}

// pathInsertedDiscovery is discovery at the RFC 8414 path-inserted location of an issuer
// with a path (the path-appended one, <issuer>/.well-known/openid-configuration, reaches
// discovery through the proxy that strips the path).
func (s *server) pathInsertedDiscovery(c *fiber.Ctx) error {
	u, err := url.Parse(s.cfg.PublicURL)
	if err != nil || s.cfg.PublicURL == "" || strings.Trim(u.Path, "/") != c.Params("issuerPath") {
		return apperr.NotFound("no OpenID Provider configuration here")
	}
	return s.discovery(c)
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
		if m, ok := g.(interface{ MetricOf(url.Values) string }); ok {
			endpoint = m.MetricOf(form)
		}
	}
	return s.counted(endpoint, func(c *fiber.Ctx) error {
		ctx, err := s.proven(c, s.issuerCtx(c))
		if err != nil {
			return err
		}
		if err := s.dispatch(c, ctx, g, form, ferr); err != nil {
			oauth.ReleaseDPoP(ctx) // nothing was issued: a refused request's proof fills no memory
			return err
		}
		return nil
	})(c)
}

// dispatch authenticates the client when the grant asks for it and issues.
func (s *server) dispatch(c *fiber.Ctx, ctx context.Context, g oauth.Grant, form url.Values, ferr error) error {
	p, perr := presentedBy(c, form, ferr)
	_, optional := g.(oauth.OptionalClientAuth)
	if g != nil && !g.ClientAuth() && !(optional && (perr != nil || p.Presented())) {
		// The grant carries its own credential (token exchange's subject token), or
		// its client is a public one that presents none.
		if ferr != nil {
			return ferr
		}
		return s.issue(c, ctx, g, form, nil)
	}
	if perr != nil {
		return perr
	}
	if err := repeated(form, g); err != nil {
		return err
	}
	if form.Get("grant_type") == "" {
		return oauth.InvalidRequest("grant_type is required")
	}
	cl, err := s.auth.client(ctx, p, oauth.TokenPath)
	if err != nil {
		return err
	}
	if cl.DPoPBound && oauth.DPoPKeyOf(ctx) == "" { // RFC 9449 §5.2, whatever the grant
		return oauth.InvalidRequest("this client registered dpop_bound_access_tokens: send a DPoP proof")
	}
	if g == nil {
		return oauth.Error(apperr.KindInvalid, "unsupported_grant_type", "supported grant types: "+strings.Join(s.grants.types, ", "))
	}
	return s.issue(c, ctx, g, form, &cl)
}

func (s *server) issue(c *fiber.Ctx, ctx context.Context, g oauth.Grant, form map[string][]string, cl *oauth.Client) error {
	if !g.ClientAuth() {
		if err := repeated(form, g); err != nil {
			return err
		}
	}
	tok, err := g.Token(ctx, oauth.Request{Form: form, Client: cl, Authorization: strings.Clone(c.Get(fiber.HeaderAuthorization))})
	if err != nil {
		return err
	}
	if oauth.BoundByDPoP(ctx) {
		tok.TokenType = "DPoP" // oauth.Sign bound what it issued (cnf.jkt)
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
	p, err := presentedBy(c, form, ferr)
	if err != nil {
		return err
	}
	cl, err := s.auth.client(s.issuerCtx(c), p, oauth.IntrospectPath)
	if err != nil {
		return err
	}
	if cl.ProjectID == "" { // a host's client: it serves no project's resources
		return oauth.ErrInvalidClient
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
	// Anyone holding a credential may revoke it; a client that authenticates anyway must
	// authenticate correctly (metadata lists what it may use).
	p, err := presentedBy(c, form, nil)
	if err != nil {
		return err
	}
	if p.Presented() {
		if _, err := s.auth.client(s.issuerCtx(c), p, oauth.RevokePath); err != nil {
			return err
		}
	}
	_, err = s.kinds.Revoke(c.UserContext(), token, credential.Revocation{Metadata: map[string]any{"via": "self"}, Origin: httpserver.Origin(c)})
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
func (s *server) metadata(c *fiber.Ctx) error { return c.JSON(s.document(c)) }

// document is the metadata document for the issuer c was reached as.
func (s *server) document(c *fiber.Ctx) fiber.Map {
	iss := identity.IssuerFrom(s.issuerCtx(c))
	// Each endpoint lists exactly what it takes (SPEC §21): the token endpoint every
	// contributor's methods, and none when a grant serves public clients; introspection
	// the methods of clients of a project (they alone introspect); revocation anything,
	// since a credential's holder needs no client at all.
	var tokenAuth, introspectAuth []string
	for _, cl := range s.clients {
		methods := []string{oauth.AuthSecretBasic, oauth.AuthSecretPost}
		ofProjects := true
		if m, ok := cl.(oauth.ClientMethods); ok {
			methods, ofProjects = m.AuthMethods()
		}
		tokenAuth = oauth.Union(tokenAuth, methods)
		if ofProjects {
			introspectAuth = oauth.Union(introspectAuth, methods)
		}
	}
	revokeAuth := oauth.Union([]string{oauth.AuthNone}, tokenAuth)
	for _, g := range s.grants.byType {
		if _, optional := g.(oauth.OptionalClientAuth); optional || !g.ClientAuth() {
			tokenAuth = oauth.Union(tokenAuth, []string{oauth.AuthNone})
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
		"token_endpoint_auth_methods_supported": sortedOrEmpty(tokenAuth),
		"introspection_endpoint_auth_methods_supported": sortedOrEmpty(introspectAuth),
		"revocation_endpoint_auth_methods_supported":    sortedOrEmpty(revokeAuth),
		"response_types_supported":                      []string{},
		"scopes_supported":                              []string{identity.RoleViewer, identity.RoleDeveloper, identity.RoleAdmin},
	}
	doc["dpop_signing_alg_values_supported"] = dpop.AlgorithmNames()
	if slices.Contains(tokenAuth, oauth.AuthPrivateKeyJWT) {
		algs := make([]string, len(assertion.Algorithms))
		for i, a := range assertion.Algorithms {
			algs[i] = string(a)
		}
		for _, k := range []string{"token_endpoint", "introspection_endpoint", "revocation_endpoint"} {
			doc[k+"_auth_signing_alg_values_supported"] = algs
		}
	}
	// What contributors add; a list they name too is the union of both (scopes).
	for _, extra := range s.extra {
		for k, v := range extra(iss) {
			mine, a := doc[k].([]string)
			theirs, b := v.([]string)
			if a && b {
				v = oauth.Union(theirs, mine)
			}
			doc[k] = v
		}
	}
	return doc
}

func sortedOrEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	slices.Sort(s)
	return s
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
