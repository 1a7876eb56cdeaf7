package auth

import (
	"errors"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/identity"
)

// Paths of the standard OAuth surface (SPEC §11).
const (
	IntrospectPath = "/v1/oauth/introspect"
	RevokePath     = "/v1/oauth/revoke"
	MetadataPath   = "/.well-known/oauth-authorization-server"
)

var inactive = fiber.Map{"active": false}

// introspect is RFC 7662 for the calling auth client's project: agent tokens, badge
// secrets, OAuth access tokens (client-credentials and exchanged) and session access tokens
// of the project's tenant. Anything else — another project's credential included — is
// {active:false}. Nothing a cached credential answers costs a store query.
func (t *tokenEndpoint) introspect(c *fiber.Ctx) error {
	c.Set(fiber.HeaderCacheControl, "no-store")
	if err := t.limits.Failures.Check(httpserver.ClientIP(c)); err != nil {
		return err
	}
	basicID, basicSecret, basic, basicErr := basicAuth(c.Get(fiber.HeaderAuthorization))
	form, ferr := formOf(c)
	if basicErr != nil {
		return t.failAt(c, t.introspections, errInvalidClient)
	}
	if ferr != nil {
		return t.failAt(c, t.introspections, *ferr)
	}
	cl, oerr, err := t.client(c, form, basicID, basicSecret, basic)
	if err != nil {
		return err
	}
	if oerr != nil {
		return t.failAt(c, t.introspections, *oerr)
	}
	token := form.Get("token")
	if token == "" || len(form["token"]) > 1 {
		return t.failAt(c, t.introspections, invalidRequest("give token once"))
	}
	answer, err := t.inspect(c, cl.projectID, token)
	if err != nil {
		return err
	}
	result := "inactive"
	if answer["active"] == true {
		result = "active"
		answer["iss"] = identity.IssuerFrom(t.issuerCtx(c))
		answer["project_id"] = cl.projectID
	}
	t.introspections.WithLabelValues(result).Inc()
	return c.JSON(answer)
}

// inspect judges token for project: its introspection answer.
func (t *tokenEndpoint) inspect(c *fiber.Ctx, project, token string) (fiber.Map, error) {
	ctx := c.UserContext()
	switch {
	case strings.HasPrefix(token, "ac_ai_"):
		g, err := t.agents.Grant(ctx, token)
		if errors.Is(err, identity.ErrNotLive) || (err == nil && g.ProjectID != project) {
			return inactive, nil
		}
		if err != nil {
			return nil, err
		}
		return fiber.Map{"active": true, "kind": "ai_agent", "sub": g.TokenID, "token_id": g.TokenID, "agent_name": g.AgentName,
			"scope": strings.Join(g.Scopes, " "), "exp": g.ExpiresAt.Unix(), "token_type": "Bearer"}, nil
	case strings.HasPrefix(token, "ac_"):
		g, err := t.badges.Grant(ctx, token)
		if errors.Is(err, identity.ErrNotLive) || (err == nil && g.ProjectID != project) {
			return inactive, nil
		}
		if err != nil {
			return nil, err
		}
		m := fiber.Map{"active": true, "kind": "service_badge", "sub": g.BadgeID, "badge_id": g.BadgeID, "product": g.Product,
			"role": g.Role, "scope": g.Role, "token_type": "Bearer"}
		if g.ExpiresAt != nil {
			m["exp"] = g.ExpiresAt.Unix()
		}
		return m, nil
	case strings.Count(token, ".") == 2:
		return t.inspectJWT(c, project, token)
	}
	return inactive, nil
}

// inspectJWT judges a JWT signed with our keys: an OAuth access token is active while the
// agent token or client it was issued to is live; a session access token while its
// session is, and only for the project's own tenant.
func (t *tokenEndpoint) inspectJWT(c *fiber.Ctx, project, token string) (fiber.Map, error) {
	ctx := c.UserContext()
	typ, claims, err := t.jwts.VerifyJWT(token)
	if err != nil {
		return inactive, nil
	}
	sub, _ := claims["sub"].(string)
	base := fiber.Map{"active": true, "sub": sub, "exp": claims["exp"], "iat": claims["iat"]}
	switch typ {
	case "at+jwt":
		clientID, _ := claims["client_id"].(string)
		if p, _ := claims["project_id"].(string); p != project || clientID == "" {
			return inactive, nil
		}
		var live bool
		if strings.HasPrefix(clientID, "tok_") {
			live, err = t.agents.Live(ctx, clientID)
		} else {
			live, err = t.p.live(ctx, clientID)
		}
		if err != nil || !live {
			return inactive, err
		}
		// Revoked by its jti (RFC 7009) before its exp.
		if jti, _ := claims["jti"].(string); jti != "" {
			if gone, err := t.denied.revoked(ctx, jti); err != nil || gone {
				return inactive, err
			}
		}
		base["kind"], base["client_id"], base["aud"], base["scope"], base["token_type"] = "oauth_access_token", clientID, claims["aud"], claims["scope"], "Bearer"
		if name, ok := claims["agent_name"]; ok {
			base["agent_name"] = name
		}
		return base, nil
	default:
		if claims["aud"] != identity.SessionAudience && claims["aud"] != nil {
			return inactive, nil
		}
		p, err := t.sessions.Authenticate(ctx, token)
		var ve *identity.VerifyError
		if errors.As(err, &ve) || (err == nil && p.TenantID != project) {
			return inactive, nil
		}
		if err != nil {
			return nil, err
		}
		base["kind"], base["user_id"], base["session_handle"] = "session", p.UserID, p.SessionHandle
		return base, nil
	}
}

// revoke is RFC 7009 self-revocation: whoever holds an agent token or a badge secret can
// revoke it with nothing else (a leaked key's owner, a secret scanner). The answer is 200
// {} whether or not the token was one (§2.2): it tells nothing.
func (t *tokenEndpoint) revoke(c *fiber.Ctx) error {
	c.Set(fiber.HeaderCacheControl, "no-store")
	// Guessing costs a store lookup per well-formed token: misses spend the failure budget
	// (a 429 says nothing about any one token).
	if err := t.limits.Failures.Check(httpserver.ClientIP(c)); err != nil {
		return err
	}
	form, ferr := formOf(c)
	if ferr != nil {
		return t.failAt(c, t.revocations, *ferr)
	}
	token := form.Get("token")
	if token == "" || len(form["token"]) > 1 {
		return t.failAt(c, t.revocations, invalidRequest("give token once"))
	}
	// Every kind of secret, whoever owns it (SPEC §9a): the registry knows them all.
	_, err := t.kinds.Revoke(c.UserContext(), token, selfRevoke(c))
	result := "revoked"
	switch {
	case errors.Is(err, identity.ErrNotLive):
		result = "not_live"
		t.limits.Failures.Fail(httpserver.ClientIP(c))
	case err != nil:
		return err
	}
	t.revocations.WithLabelValues(result).Inc()
	return c.JSON(fiber.Map{})
}

// metadata is RFC 8414 authorization server metadata, its URLs under the issuer.
func (t *tokenEndpoint) metadata(c *fiber.Ctx) error {
	iss := identity.IssuerFrom(t.issuerCtx(c))
	auth := []string{"client_secret_basic", "client_secret_post"}
	// Shared caches may keep it only when its URLs come from the configured public URL
	// (SPEC §9a); the localhost default is a development answer, not one to spread.
	if t.p.cfg.PublicURL != "" {
		c.Set(fiber.HeaderCacheControl, "public, max-age=300")
	}
	return c.JSON(fiber.Map{
		"issuer":                                iss,
		"token_endpoint":                        iss + TokenPath,
		"jwks_uri":                              iss + "/.well-known/jwks.json",
		"introspection_endpoint":                iss + IntrospectPath,
		"revocation_endpoint":                   iss + RevokePath,
		"grant_types_supported":                 []string{"client_credentials", grantTokenExchange},
		"token_endpoint_auth_methods_supported": append(auth, "none"),
		"introspection_endpoint_auth_methods_supported": auth,
		"revocation_endpoint_auth_methods_supported":    []string{"none"},
		"response_types_supported":                      []string{},
		"scopes_supported":                              []string{"viewer", "developer", "admin"},
	})
}

// selfRevoke is how a revoke through /v1/oauth/revoke is audited.
func selfRevoke(c *fiber.Ctx) identity.Revocation {
	return identity.Revocation{Metadata: map[string]any{"via": "self"}, Origin: originOf(c)}
}
