package auth

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/ent/schema"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/identity"
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
	var audience []string
	for _, r := range form["resource"] {
		// RFC 8707: an absolute URI without a fragment.
		u, err := url.Parse(r)
		if err != nil || !u.IsAbs() || u.Host == "" || u.Fragment != "" {
			return t.failAt(c, t.exchanges, oauthError{http.StatusBadRequest, "invalid_target", "resource must be an absolute URI without a fragment"})
		}
		audience = append(audience, r)
	}
	for _, a := range form["audience"] {
		if strings.TrimSpace(a) == "" {
			return t.failAt(c, t.exchanges, oauthError{http.StatusBadRequest, "invalid_target", "audience must not be empty"})
		}
		audience = append(audience, a)
	}
	grant, err := t.agents.Grant(c.UserContext(), subject)
	if errors.Is(err, identity.ErrNotLive) {
		t.limits.Failures.Fail(httpserver.ClientIP(c))
		return t.failAt(c, t.exchanges, oauthError{http.StatusBadRequest, "invalid_grant", "subject_token is not a live AI agent token"})
	}
	if err != nil {
		return err
	}
	scopes, ok := narrow(grant.Scopes, strings.Fields(form.Get("scope")))
	if !ok {
		return t.failAt(c, t.exchanges, oauthError{http.StatusBadRequest, "invalid_scope", "scope must be covered by the agent token's scopes"})
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

// narrow is the scope to grant: every requested scope covered by one the agent token
// holds, or, when none is requested, all of them.
func narrow(held, requested []string) ([]string, bool) {
	if len(requested) == 0 {
		return append([]string{}, held...), true
	}
	for _, r := range requested {
		covered := false
		for _, h := range held {
			covered = covered || covers(h, r)
		}
		if !covered {
			return nil, false
		}
	}
	return requested, true
}

// covers reports whether a held scope grants s: itself, or "x:*" grants every "x:…".
func covers(held, s string) bool {
	if held == s {
		return true
	}
	prefix, ok := strings.CutSuffix(held, "*")
	return ok && strings.HasSuffix(prefix, ":") && strings.HasPrefix(s, prefix) && len(s) > len(prefix)
}
