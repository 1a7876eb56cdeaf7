package agenttoken

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/authcore/authcore/ent/schema"
	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/credential"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/metrics"
	"github.com/authcore/authcore/platform/oauth"
	"github.com/authcore/authcore/platform/resource"
	"github.com/authcore/authcore/platform/scope"
)

// Token exchange (RFC 8693) of an AI agent token for a short-lived, audience-bound access
// token (SPEC §11): the agent keeps its long-lived secret to itself and hands resource
// servers a JWT they can verify offline.
const exchangedTTL = 15 * time.Minute

// exchange is the exchange to access tokens agent tokens contribute to the OAuth server's
// token-exchange grant. No client authentication: the subject token is the credential.
type exchange struct {
	svc       *Service
	signer    oauth.Signer
	resources resource.Registry
	clock     clock.Clock
	issued    prometheus.Counter
}

func newExchange(s *Service, signer oauth.Signer, resources resource.Registry, c clock.Clock, m *metrics.Credentials) oauth.Exchange {
	return &exchange{svc: s, signer: signer, resources: resources, clock: c, issued: m.Issued.WithLabelValues("exchanged", "")}
}

func (*exchange) RequestedType() string { return oauth.TokenTypeAccess }
func (*exchange) Metric() string        { return "token_exchange" }
func (*exchange) ClientAuth() bool      { return false }

// Live: an exchanged token is worth what its agent token is.
func (e *exchange) Live(ctx context.Context, from oauth.Issued) (bool, error) {
	if from.GrantID != "" || !strings.HasPrefix(from.ClientID, idPrefix) {
		return false, nil
	}
	return e.svc.Live(ctx, from.ClientID)
}

// Token answers a token-exchange grant. Errors follow RFC 8693 §2.2.2 and RFC 6749 §5.2.
func (e *exchange) Token(ctx context.Context, r oauth.Request) (oauth.Token, error) {
	form := r.Form
	subject, err := oauth.SubjectAccessToken(form)
	if err != nil {
		return oauth.Token{}, err
	}
	targets, err := oauth.Targets(form, true)
	if err != nil {
		return oauth.Token{}, err
	}
	requested, ok := scope.Parse(form.Get("scope"))
	if !ok {
		return oauth.Token{}, oauth.ErrScopeGrammar
	}
	grant, err := e.svc.Grant(ctx, subject)
	if errors.Is(err, credential.ErrNotLive) {
		return oauth.Token{}, errNotLiveSubject
	}
	if err != nil {
		return oauth.Token{}, err
	}
	// A bound agent token is exchanged only by its key's holder (SPEC §22); the token it
	// gets is bound to the same key, since the request's proof was by it.
	if grant.JKT != "" && grant.JKT != oauth.DPoPKeyOf(ctx) {
		return oauth.Token{}, oauth.Error(apperr.KindInvalid, "invalid_grant", "the agent token is bound to a DPoP key: send a DPoP proof by that key")
	}
	audience, bounds, err := oauth.Registered(ctx, e.resources, grant.ProjectID, targets)
	if err != nil {
		return oauth.Token{}, err
	}
	scopes, ok := oauth.Narrow(grant.Scopes, requested, bounds)
	if !ok {
		return oauth.Token{}, oauth.Error(apperr.KindInvalid, "invalid_scope", "scope must be covered by the agent token's scopes and by the resource's")
	}
	now := e.clock.Now().Truncate(time.Second)
	exp := now.Add(exchangedTTL)
	if grant.ExpiresAt.Before(exp) {
		exp = grant.ExpiresAt.Truncate(time.Second)
	}
	if !exp.After(now) {
		return oauth.Token{}, oauth.Error(apperr.KindInvalid, "invalid_grant", "subject_token expires too soon")
	}
	if len(audience) == 0 {
		audience = []string{identity.IssuerFrom(ctx)}
	}
	granted := strings.Join(scopes, " ")
	tok, err := oauth.Sign(ctx, e.signer, oauth.Claims{
		Subject: grant.TokenID, ClientID: grant.TokenID, Audience: oauth.Audience(audience), Scope: granted,
		ProjectID: grant.ProjectID, AgentName: grant.AgentName, OrgID: grant.OrgID,
		IssuedAt: now.Unix(), Expires: exp.Unix(), ID: schema.NewID(schema.AssertionIDPrefix),
	})
	if err != nil {
		return oauth.Token{}, err
	}
	e.issued.Inc()
	return oauth.Token{AccessToken: tok, IssuedTokenType: oauth.TokenTypeAccess, TokenType: "Bearer",
		ExpiresIn: int(exp.Sub(now).Seconds()), Scope: granted}, nil
}

var errNotLiveSubject = oauth.Error(apperr.KindInvalid, "invalid_grant", "subject_token is not a live AI agent token")
