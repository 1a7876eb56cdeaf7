package trust

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/schema"
	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/assertion"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/credential"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/oauth"
	"github.com/authcore/authcore/platform/policy"
	"github.com/authcore/authcore/platform/resource"
	"github.com/authcore/authcore/platform/scope"
	"github.com/authcore/authcore/platform/usage"
)

// The jwt-bearer grant (RFC 7523 §2.1, SPEC §22) of assertions by issuers a project
// trusts: a workload's platform token (Kubernetes, SPIFFE, CI) becomes an access token for
// one of the project's resources, with no secret stored anywhere; an enterprise identity
// provider's ID-JAG does the same for one of its people, through the client it names.
const (
	grantJWTBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	// typIDJAG is an Identity Assertion JWT Authorization Grant's typ.
	typIDJAG = "oauth-id-jag+jwt"
	// ProfileIDJAG is the grant profile metadata advertises.
	ProfileIDJAG = "urn:ietf:params:oauth:grant-profile:id-jag"
	// maxAssertion bounds an assertion's life (SPEC §22): its jti is kept that long.
	maxAssertion = 10 * time.Minute
	accessTTL    = 15 * time.Minute
	// usageKind is what grants of trusted issuers are counted under (SPEC §19).
	usageKind = "trusted_issuer"
)

type jwtBearer struct {
	s         *service
	resources resource.Registry
	policies  policy.Source
	signer    oauth.Signer
	replay    assertion.Replay
	users     identity.Users
	linked    identity.Linked
	clock     clock.Clock
	usage     usage.Counter
	issued    prometheus.Counter
}

var (
	_ oauth.Grant              = (*jwtBearer)(nil)
	_ oauth.OptionalClientAuth = (*jwtBearer)(nil)
)

func (*jwtBearer) Type() string     { return grantJWTBearer }
func (*jwtBearer) Metric() string   { return "jwt_bearer" }
func (*jwtBearer) ClientAuth() bool { return false }

// ClientAuthOptional: a workload's token is its own credential; an ID-JAG is presented by
// the client it names, which authenticates.
func (*jwtBearer) ClientAuthOptional() {}

func (*jwtBearer) Repeatable(string) bool { return false }

// Live: tokens it issued name their trusted issuer as grant_id, and are worth what the
// trust is.
func (g *jwtBearer) Live(ctx context.Context, from oauth.Issued) (bool, error) {
	if !strings.HasPrefix(from.GrantID, issuerIDPrefix) {
		return false, nil
	}
	ti, err := g.s.issuerByID(ctx, from.GrantID)
	return ti != nil, err
}

func invalidGrant(why string) error { return oauth.Error(apperr.KindInvalid, "invalid_grant", why) }

func (g *jwtBearer) Token(ctx context.Context, r oauth.Request) (oauth.Token, error) {
	f := r.Form
	raw := f.Get("assertion")
	if raw == "" {
		return oauth.Token{}, oauth.InvalidRequest("assertion is required")
	}
	targets, err := oauth.Targets(f, false)
	if err != nil {
		return oauth.Token{}, err
	}
	if len(targets) != 1 {
		return oauth.Token{}, oauth.Error(apperr.KindInvalid, "invalid_target", "name the one resource the token is for (resource)")
	}
	requested, ok := scope.Parse(f.Get("scope"))
	if !ok {
		return oauth.Token{}, oauth.ErrScopeGrammar
	}
	res, ok, err := g.resources.Lookup(ctx, targets[0])
	if err != nil {
		return oauth.Token{}, err
	}
	if !ok {
		return oauth.Token{}, oauth.ErrUnregistered
	}
	project := res.ProjectID
	iss, _, ok := assertion.Unverified(raw)
	if !ok {
		return oauth.Token{}, invalidGrant("the assertion is not a signed JWT")
	}
	ti, err := g.s.issuerOf(ctx, project, iss)
	if err != nil {
		return oauth.Token{}, err
	}
	if ti == nil {
		return oauth.Token{}, invalidGrant("the project that registered the resource does not trust the assertion's issuer")
	}
	typ, _ := credential.JWTType(raw)
	jag := strings.EqualFold(strings.TrimPrefix(strings.ToLower(typ), "application/"), typIDJAG)
	if jag != (ti.Kind == kindEnterprise) {
		return oauth.Token{}, invalidGrant(fmt.Sprintf("the issuer is trusted for %s tokens, not this one (typ %q)", ti.Kind, typ))
	}
	expect := assertion.Expect{Issuer: iss, MaxLifetime: maxAssertion, Audiences: []string{ti.Audience}}
	if jag {
		expect.Audiences, expect.Typ = []string{identity.IssuerFrom(ctx)}, typIDJAG
	}
	claims, err := assertion.Verify(ctx, raw, g.s.keys(ti), expect, g.clock.Now(), g.replay)
	var refused *assertion.Error
	if errors.As(err, &refused) {
		return oauth.Token{}, invalidGrant(refused.Why)
	}
	if err != nil {
		return oauth.Token{}, err
	}
	if len(ti.Resources) > 0 && !slices.Contains(ti.Resources, res.URI) {
		return oauth.Token{}, oauth.Error(apperr.KindInvalid, "invalid_target", "the issuer may not be given tokens for this resource")
	}
	allowed := ti.Scopes
	var sub, clientID string
	if jag {
		if sub, clientID, allowed, err = g.enterprise(ctx, r, ti, res, claims); err != nil {
			return oauth.Token{}, err
		}
	} else {
		subject, _ := claims.All[ti.SubjectClaim].(string)
		if subject == "" || !matches(ti.SubjectPattern, subject) {
			return oauth.Token{}, invalidGrant("the assertion's " + ti.SubjectClaim + " is not one the project trusts this issuer for")
		}
		sub, clientID = "wif:"+iss+"#"+subject, ti.ID
	}
	granted, err := g.scopes(ctx, project, requested, allowed, res.Scopes)
	if err != nil {
		return oauth.Token{}, err
	}
	return g.issue(ctx, ti, res.URI, sub, clientID, granted, claims)
}

// enterprise judges an ID-JAG (SPEC §22): presented by the client it names, for this
// resource if it names one, its subject a user of the project by the trust's rule. It
// returns the user, the client, and the scopes the trust and the ID-JAG both allow.
func (g *jwtBearer) enterprise(ctx context.Context, r oauth.Request, ti *ent.TrustedIssuer, res resource.Resource, c assertion.Claims) (string, string, []string, error) {
	if r.Client == nil {
		return "", "", nil, oauth.Error(apperr.KindUnauthenticated, "invalid_client", "an ID-JAG is presented by the client it names: authenticate it")
	}
	if named, _ := c.All["client_id"].(string); named != r.Client.ID {
		return "", "", nil, invalidGrant("the ID-JAG was issued for another client")
	}
	if named, ok := c.All["resource"]; ok && !namesResource(named, res.URI) {
		return "", "", nil, oauth.Error(apperr.KindInvalid, "invalid_target", "the ID-JAG is for another resource")
	}
	user, err := g.person(ctx, ti, c)
	if err != nil {
		return "", "", nil, err
	}
	jagScopes, _ := c.All["scope"].(string)
	return user, r.Client.ID, intersect(strings.Fields(jagScopes), ti.Scopes), nil
}

// person is the project's user an ID-JAG names (SPEC §22): the one whose linked identity
// (§20) at that issuer is its subject, else, when the trust vouches for the issuer's
// addresses, the one with its email.
func (g *jwtBearer) person(ctx context.Context, ti *ent.TrustedIssuer, c assertion.Claims) (string, error) {
	if g.linked != nil && c.Subject != "" {
		user, ok, err := g.linked.LinkedUser(ctx, ti.ProjectID, ti.Issuer, c.Subject)
		if err != nil || ok {
			return user, err
		}
	}
	email, _ := c.All["email"].(string)
	if !ti.TrustEmail || email == "" {
		return "", invalidGrant("no user of the project has linked the ID-JAG's subject, and the trust does not map users by email")
	}
	// An address the IdP has not seen proven is anyone's claim (one signs up with it).
	if c.All["email_verified"] != true {
		return "", invalidGrant("the ID-JAG's email is not verified (email_verified)")
	}
	user, ok, err := g.users.FindUser(ctx, ti.ProjectID, email)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", invalidGrant("no user of the project has the ID-JAG's email")
	}
	return user, nil
}

// namesResource reports whether an ID-JAG's resource claim (a string or a list) holds uri.
func namesResource(v any, uri string) bool {
	want, _ := resource.Canonical(uri)
	check := func(s string) bool { c, err := resource.Canonical(s); return err == nil && c == want }
	switch r := v.(type) {
	case string:
		return check(r)
	case []any:
		for _, x := range r {
			if s, ok := x.(string); ok && check(s) {
				return true
			}
		}
	}
	return false
}

// scopes is what the token carries: the requested scopes (all that is allowed, when none
// is requested) that the trust allows, the resource's scopes bound and the project's
// policy permits — the intersection, never a widening (SPEC §29). A scope asked for
// beyond them is left out, and the answer's scope says what was issued (RFC 6749 §5.1);
// invalid_scope only when nothing asked for is left.
func (g *jwtBearer) scopes(ctx context.Context, project string, requested, allowed, bounds []string) ([]string, error) {
	base := requested
	if len(base) == 0 {
		base = allowed
	}
	pol, err := g.policies.Policy(ctx, project)
	if err != nil {
		return nil, err
	}
	out := []string{}
	for _, s := range intersect(base, allowed) {
		if (len(bounds) == 0 || scope.CoveredBy(bounds, s)) && pol.Allows(s) {
			out = append(out, s)
		}
	}
	if len(requested) > 0 && len(out) == 0 {
		return nil, oauth.Error(apperr.KindInvalid, "invalid_scope", "the issuer, the resource or the project's policy allows none of the scopes asked for")
	}
	return out, nil
}

// issue signs the access token, audited and counted under the trusted issuer.
func (g *jwtBearer) issue(ctx context.Context, ti *ent.TrustedIssuer, aud, sub, clientID string, scopes []string, c assertion.Claims) (oauth.Token, error) {
	now := g.clock.Now().Truncate(time.Second)
	exp := now.Add(accessTTL)
	sc := strings.Join(scopes, " ")
	tok, err := oauth.Sign(ctx, g.signer, oauth.Claims{Subject: sub, ClientID: clientID, Audience: aud, Scope: sc, ProjectID: ti.ProjectID,
		GrantID: ti.ID, IssuedAt: now.Unix(), Expires: exp.Unix(), ID: schema.NewID(schema.AssertionIDPrefix)})
	if err != nil {
		return oauth.Token{}, err
	}
	err = database.WithTx(ctx, g.s.ent, func(tx *ent.Tx) error {
		var actor *string
		if clientID != "" {
			actor = &clientID
		}
		_, err := g.s.audit.Record(ctx, tx, audit.Event{ActorID: actor, ActorType: audit.ClientActor(clientID), ProjectID: ti.ProjectID, Action: actionJWTBearer, Metadata: map[string]any{
			"issuerId": ti.ID, "issuer": ti.Issuer, "sub": sub, "clientId": clientID, "resource": aud, "scopes": scopes, "assertionJti": c.ID}})
		return err
	})
	if err != nil {
		return oauth.Token{}, err
	}
	g.issued.Inc()
	g.usage.Count(ti.ProjectID, usageKind, ti.ID, usage.OK)
	return oauth.Token{AccessToken: tok, TokenType: "Bearer", ExpiresIn: int(accessTTL.Seconds()), Scope: sc}, nil
}
