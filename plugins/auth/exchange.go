package auth

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/ent/schema"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/resource"
	"github.com/authcore/authcore/platform/scope"
)

// Token exchange (RFC 8693) of an AI agent token for a short-lived, audience-bound access
// token (SPEC §11): the agent keeps its long-lived secret to itself and hands resource
// servers a JWT they can verify offline.
const (
	grantTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
	tokenTypeAccess    = "urn:ietf:params:oauth:token-type:access_token"
	exchangedTTL       = 15 * time.Minute
)

// exchange answers a token-exchange grant. No client authentication: the subject token is
// the credential. Errors follow RFC 8693 §2.2.2 and RFC 6749 §5.2.
func (t *tokenEndpoint) exchange(c *fiber.Ctx, form url.Values) error {
	for k, v := range form {
		if len(v) > 1 && k != "resource" && k != "audience" {
			return t.failAt(c, t.exchanges, invalidRequest("parameter "+k+" is repeated"))
		}
	}
	subject := form.Get("subject_token")
	switch {
	case subject == "":
		return t.failAt(c, t.exchanges, invalidRequest("subject_token is required"))
	case form.Get("subject_token_type") != tokenTypeAccess:
		return t.failAt(c, t.exchanges, invalidRequest("subject_token_type must be "+tokenTypeAccess))
	case form.Get("requested_token_type") != "" && form.Get("requested_token_type") != tokenTypeAccess:
		return t.failAt(c, t.exchanges, invalidRequest("only "+tokenTypeAccess+" can be issued"))
	case form.Get("actor_token") != "":
		return t.failAt(c, t.exchanges, invalidRequest("delegation (actor_token) is not supported"))
	}
	targets, terr := targetsOf(form)
	if terr != nil {
		return t.failAt(c, t.exchanges, *terr)
	}
	requested, ok := scope.Parse(form.Get("scope"))
	if !ok {
		return t.failAt(c, t.exchanges, errScopeGrammar)
	}
	grant, err := t.agents.Grant(c.UserContext(), subject)
	if errors.Is(err, identity.ErrNotLive) {
		t.limits.Failures.Fail(httpserver.ClientIP(c))
		return t.failAt(c, t.exchanges, oauthError{http.StatusBadRequest, "invalid_grant", "subject_token is not a live AI agent token"})
	}
	if err != nil {
		return err
	}
	audience, bounds, terr, err := t.registered(c, grant.ProjectID, targets)
	if err != nil {
		return err
	}
	if terr != nil {
		return t.failAt(c, t.exchanges, *terr)
	}
	scopes, ok := narrow(grant.Scopes, requested, bounds)
	if !ok {
		return t.failAt(c, t.exchanges, oauthError{http.StatusBadRequest, "invalid_scope", "scope must be covered by the agent token's scopes and by the resource's"})
	}
	now := t.p.clock.Now().Truncate(time.Second)
	exp := now.Add(exchangedTTL)
	if grant.ExpiresAt.Before(exp) {
		exp = grant.ExpiresAt.Truncate(time.Second)
	}
	if !exp.After(now) {
		return t.failAt(c, t.exchanges, oauthError{http.StatusBadRequest, "invalid_grant", "subject_token expires too soon"})
	}
	ctx := httpserver.WithIssuer(c, t.p.cfg)
	if len(audience) == 0 {
		audience = []string{identity.IssuerFrom(ctx)}
	}
	var aud any = audience
	if len(audience) == 1 {
		aud = audience[0]
	}
	scope := strings.Join(scopes, " ")
	tok, err := t.p.signer.SignAccessToken(ctx, map[string]any{
		"sub": grant.TokenID, "client_id": grant.TokenID, "aud": aud, "scope": scope,
		"project_id": grant.ProjectID, "agent_name": grant.AgentName,
		"iat": now.Unix(), "exp": exp.Unix(), "jti": schema.NewID("jti_"),
	})
	if errors.Is(err, identity.ErrEngineNotReady) {
		return c.Status(http.StatusServiceUnavailable).JSON(fiber.Map{"error": "temporarily_unavailable", "error_description": "signing keys are not loaded yet"})
	}
	if err != nil {
		return err
	}
	t.issued.Inc()
	t.exchanges.WithLabelValues("ok").Inc()
	return c.JSON(fiber.Map{
		"access_token": tok, "issued_token_type": tokenTypeAccess, "token_type": "Bearer",
		"expires_in": int(exp.Sub(now).Seconds()), "scope": scope,
	})
}

// targetsOf reads resource (RFC 8707: absolute URIs, repeatable) and audience: each must
// be a well-formed resource URI before anything else is looked at.
func targetsOf(form url.Values) ([]string, *oauthError) {
	var targets []string
	for _, r := range append(append([]string(nil), form["resource"]...), form["audience"]...) {
		canonical, err := resource.Canonical(r)
		if err != nil {
			return nil, &oauthError{http.StatusBadRequest, "invalid_target", "resource and audience must be absolute https URIs without a fragment"}
		}
		targets = append(targets, canonical)
	}
	return targets, nil
}

var errUnregistered = oauthError{http.StatusBadRequest, "invalid_target", "the resource is not registered by this project"}

// registered checks that every target is a resource the project registered (SPEC §11):
// it returns the audience to issue for and the scope bounds of the resources that set
// them. Tokens are never issued for another project's resource, nor for an unregistered one.
func (t *tokenEndpoint) registered(c *fiber.Ctx, projectID string, targets []string) (audience []string, bounds [][]string, oerr *oauthError, err error) {
	for _, target := range targets {
		r, ok, err := t.resources.Lookup(c.UserContext(), target)
		if err != nil {
			return nil, nil, nil, err
		}
		if !ok || r.ProjectID != projectID {
			return nil, nil, &errUnregistered, nil
		}
		if !slices.Contains(audience, r.URI) {
			audience = append(audience, r.URI)
		}
		if len(r.Scopes) > 0 {
			bounds = append(bounds, r.Scopes)
		}
	}
	return audience, bounds, nil, nil
}

var errScopeGrammar = oauthError{http.StatusBadRequest, "invalid_scope", "each scope must match " + scope.Pattern.String() + ", separated by spaces"}

// narrow is the scope to grant. Requested scopes must each be covered by one the agent
// token holds and by every bound (a resource's scopes); with none requested, the grant is
// every scope, held or bounding, that the token and every bound both cover.
func narrow(held, requested []string, bounds [][]string) ([]string, bool) {
	allowed := func(s string) bool {
		if !scope.CoveredBy(held, s) {
			return false
		}
		for _, b := range bounds {
			if !scope.CoveredBy(b, s) {
				return false
			}
		}
		return true
	}
	if len(requested) > 0 {
		for _, r := range requested {
			if !allowed(r) {
				return nil, false
			}
		}
		return requested, true
	}
	candidates := append([]string{}, held...)
	for _, b := range bounds {
		candidates = append(candidates, b...)
	}
	out := []string{}
	for _, s := range candidates {
		if allowed(s) && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out, true
}
