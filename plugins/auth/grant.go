package auth

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"go.uber.org/fx"

	"github.com/authcore/authcore/ent/schema"
	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/oauth"
	"github.com/authcore/authcore/platform/resource"
	scopes "github.com/authcore/authcore/platform/scope"
	"github.com/authcore/authcore/platform/usage"
)

// tokenTTL is the lifetime of an access token, cut short by the badge's own expiry.
const tokenTTL = time.Hour

// clientIDPrefix begins every auth client id (ent/schema).
const clientIDPrefix = schema.AuthClientIDPrefix

// Audience is the aud claim of client-credentials tokens asked for no resource.
const Audience = "authcore"

// clientCredentials is the client-credentials grant (RFC 6749 §4.4) of auth clients.
type clientCredentials struct {
	p         *Product
	resources resource.Registry
	usage     usage.Counter
}

type grantParams struct {
	fx.In
	Product   *Product
	Resources resource.Registry
	Usage     usage.Counter `optional:"true"`
}

func newClientCredentials(p grantParams) oauth.Grant {
	return &clientCredentials{p: p.Product, resources: p.Resources, usage: cmp.Or[usage.Counter](p.Usage, usage.Discard)}
}

// clientKind is what grants to auth clients are counted under (SPEC §19).
const clientKind = "oauth_client"

func (*clientCredentials) Type() string     { return "client_credentials" }
func (*clientCredentials) Metric() string   { return "token" }
func (*clientCredentials) ClientAuth() bool { return true }
func (*clientCredentials) Repeatable(name string) bool {
	return name == "resource" || name == "audience"
}

// Live: a client-credentials token is worth what its client is. Ids of other grants'
// clients are not looked up at all.
func (g *clientCredentials) Live(ctx context.Context, from oauth.Issued) (bool, error) {
	if from.GrantID != "" || !strings.HasPrefix(from.ClientID, clientIDPrefix) {
		return false, nil
	}
	return g.p.live(ctx, from.ClientID)
}

// Token issues an access token for the client's project and role.
func (g *clientCredentials) Token(ctx context.Context, r oauth.Request) (oauth.Token, error) {
	cl := r.Client
	if !strings.HasPrefix(cl.ID, clientIDPrefix) { // a host's client acts for people, not for a project
		return oauth.Token{}, oauth.Error(apperr.KindInvalid, "unauthorized_client", "only an auth badge's client may use client_credentials")
	}
	targets, err := oauth.Targets(r.Form, true)
	if err != nil {
		return oauth.Token{}, err
	}
	pol, err := g.p.policies.Policy(ctx, cl.ProjectID)
	if err != nil {
		return oauth.Token{}, err
	}
	// Agent scopes granted to the client count while the policy still allows them.
	granted := slices.DeleteFunc(slices.Clone(cl.Scopes), func(s string) bool { return !pol.Allows(s) })
	scope, ok := grantScope(r.Form.Get("scope"), cl.Role, granted)
	if !ok {
		return oauth.Token{}, oauth.Error(apperr.KindInvalid, "invalid_scope", "scope must name roles up to the badge's role ("+cl.Role+") or agent scopes granted to the client")
	}
	// RFC 8707: a token for the project's registered resources only (SPEC §11); without
	// resource, for authcore's own API.
	var aud any = Audience
	if len(targets) > 0 {
		audience, bounds, err := oauth.Registered(ctx, g.resources, cl.ProjectID, targets)
		if err != nil {
			return oauth.Token{}, err
		}
		if r.Form.Get("scope") == "" && len(bounds) > 0 {
			// Asked for nothing in particular (a stock machine client that takes its
			// scope from configuration sends none): what the client holds that the
			// resources allow (SPEC §21), rather than a role they refuse.
			held, _ := oauth.Narrow(append([]string{cl.Role}, granted...), nil, bounds)
			if len(held) == 0 {
				return oauth.Token{}, oauth.Error(apperr.KindInvalid, "invalid_scope", "the client holds no scope the resource allows")
			}
			scope = strings.Join(held, " ")
		}
		if _, ok := oauth.Narrow(strings.Fields(scope), strings.Fields(scope), bounds); !ok {
			return oauth.Token{}, oauth.Error(apperr.KindInvalid, "invalid_scope", "the resource's scopes do not cover "+scope)
		}
		aud = oauth.Audience(audience)
	}
	now := g.p.clock.Now().Truncate(time.Second) // JWT times are whole seconds
	exp := now.Add(tokenTTL)
	if cl.ExpiresAt != nil && cl.ExpiresAt.Before(exp) {
		exp = *cl.ExpiresAt
	}
	exp = exp.Truncate(time.Second)
	tok, err := oauth.Sign(ctx, g.p.signer, oauth.Claims{
		Subject: cl.ID, ClientID: cl.ID, Audience: aud, IssuedAt: now.Unix(), Expires: exp.Unix(), ID: schema.NewID(schema.AssertionIDPrefix),
		ProjectID: cl.ProjectID, Role: highestRole(scope), Scope: scope,
	})
	if err != nil {
		return oauth.Token{}, err
	}
	g.usage.Count(cl.ProjectID, clientKind, cl.ID, usage.OK)
	return oauth.Token{AccessToken: tok, TokenType: "Bearer", ExpiresIn: int(exp.Sub(now).Seconds()), Scope: scope}, nil
}

// grantScope returns the scope to grant: by default the badge's role; otherwise every
// requested scope must be a role no higher than the badge's, or an agent scope covered by
// one granted to the client (SPEC §21).
func grantScope(requested, role string, granted []string) (string, bool) {
	max := identity.RoleRank(role)
	if max == 0 {
		return "", false // a client whose role is not one: grant nothing (found by FuzzClientAuth)
	}
	fields := strings.Fields(requested)
	if len(fields) == 0 {
		return role, true
	}
	for _, f := range fields {
		r := identity.RoleRank(f)
		switch {
		case r > max:
			return "", false
		case r == 0 && !(scopes.Valid(f) && scopes.CoveredBy(granted, f)):
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
