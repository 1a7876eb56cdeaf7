package auth

import (
	"errors"

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
	// Whatever kind the token is, its owner answers (SPEC §15): nothing here knows a prefix.
	fields, err := t.kinds.Introspect(c.UserContext(), token, cl.projectID)
	if err != nil {
		return err
	}
	answer := inactive
	if fields != nil {
		answer = fiber.Map(fields)
		answer["active"] = true
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
