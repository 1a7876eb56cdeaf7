package trust

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/schema"
	"github.com/authcore/authcore/ent/trustedauthorizationserver"
	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/oauth"
	"github.com/authcore/authcore/platform/resource"
	"github.com/authcore/authcore/platform/scope"
)

// authcore as the enterprise identity provider (SPEC §22): a client its people signed in
// to exchanges an id_token authcore issued for an ID-JAG addressed to another
// authorization server that one of their projects allows, which that server accepts as a
// jwt-bearer grant for the person's agent.
const (
	tokenTypeIDJAG   = "urn:ietf:params:oauth:token-type:id-jag"
	tokenTypeIDToken = "urn:ietf:params:oauth:token-type:id_token"
	jagTTL           = 5 * time.Minute
	issuerIDPrefix   = "tis_"
)

type idJAG struct {
	s        *service
	verifier oauth.Verifier
	signer   oauth.Signer
	members  identity.Memberships
	users    identity.Users
	clock    clock.Clock
}

var _ oauth.Exchange = (*idJAG)(nil)

func (*idJAG) RequestedType() string { return tokenTypeIDJAG }
func (*idJAG) Metric() string        { return "id_jag" }

// ClientAuth: the id_token was the client's; the client proves it is the one asking.
func (*idJAG) ClientAuth() bool { return true }

func (*idJAG) Live(context.Context, oauth.Issued) (bool, error) { return false, nil }

func (x *idJAG) Token(ctx context.Context, r oauth.Request) (oauth.Token, error) {
	f := r.Form
	switch {
	case f.Get("subject_token") == "":
		return oauth.Token{}, oauth.InvalidRequest("subject_token is required: an id_token this server issued to the client")
	case f.Get("subject_token_type") != tokenTypeIDToken:
		return oauth.Token{}, oauth.InvalidRequest("subject_token_type must be " + tokenTypeIDToken)
	case len(f["audience"]) != 1 || f.Get("audience") == "":
		return oauth.Token{}, oauth.Error(apperr.KindInvalid, "invalid_target", "name the one authorization server the ID-JAG is for (audience)")
	case len(f["resource"]) > 1:
		return oauth.Token{}, oauth.InvalidRequest("name at most one resource")
	}
	requested, ok := scope.Parse(f.Get("scope"))
	if !ok {
		return oauth.Token{}, oauth.ErrScopeGrammar
	}
	if res := f.Get("resource"); res != "" {
		if _, err := resource.Canonical(res); err != nil {
			return oauth.Token{}, oauth.ErrTarget
		}
	}
	_, claims, err := x.verifier.VerifySigned(f.Get("subject_token"))
	exp, _ := claims["exp"].(float64)
	sub, _ := claims["sub"].(string)
	if err != nil || claims["iss"] != identity.IssuerFrom(ctx) || !slices.Contains(oauth.Audiences(claims), r.Client.ID) ||
		sub == "" || float64(x.clock.Now().Unix()) >= exp {
		return oauth.Token{}, invalidGrant("subject_token is not a live id_token this server issued to the client")
	}
	audience := f.Get("audience")
	target, err := x.allowing(ctx, audience, sub)
	if err != nil {
		return oauth.Token{}, err
	}
	now := x.clock.Now().Truncate(time.Second)
	jag := map[string]any{"sub": sub, "aud": audience, "client_id": target.ClientID, "jti": schema.NewID("jag_"),
		"iat": now.Unix(), "exp": now.Add(jagTTL).Unix()}
	if len(requested) > 0 {
		jag["scope"] = strings.Join(requested, " ")
	}
	if res := f.Get("resource"); res != "" {
		jag["resource"] = res
	}
	if at, ok := claims["auth_time"]; ok {
		jag["auth_time"] = at
	}
	if p, err := x.users.Profile(ctx, sub); err != nil {
		return oauth.Token{}, err
	} else if p.Email != nil {
		jag["email"], jag["email_verified"] = *p.Email, p.EmailVerified
	}
	signed, err := x.signer.SignTyped(ctx, jag, "RS256", typIDJAG)
	if err != nil {
		return oauth.Token{}, err
	}
	err = database.WithTx(ctx, x.s.ent, func(tx *ent.Tx) error {
		_, err := x.s.audit.Record(ctx, tx, audit.Event{ActorID: &sub, ProjectID: target.ProjectID, Action: actionIDJAG, Metadata: map[string]any{
			"authorizationServer": audience, "clientId": target.ClientID, "requestedBy": r.Client.ID, "jti": jag["jti"], "scope": jag["scope"]}})
		return err
	})
	if err != nil {
		return oauth.Token{}, err
	}
	return oauth.Token{AccessToken: signed, IssuedTokenType: tokenTypeIDJAG, TokenType: "N_A", ExpiresIn: int(jagTTL.Seconds()),
		Scope: strings.Join(requested, " ")}, nil
}

// allowing is the one project of the person's that allows the authorization server: an
// ID-JAG speaks for a project's people, so it is issued only where one says so.
func (x *idJAG) allowing(ctx context.Context, issuer, user string) (*ent.TrustedAuthorizationServer, error) {
	rows, err := x.s.ent.TrustedAuthorizationServer.Query().Where(trustedauthorizationserver.Issuer(issuer)).All(ctx)
	if err != nil {
		return nil, err
	}
	var found *ent.TrustedAuthorizationServer
	for _, r := range rows {
		if _, member, err := x.members.Role(ctx, r.ProjectID, user); err != nil {
			return nil, err
		} else if !member {
			continue
		}
		if found != nil {
			return nil, oauth.Error(apperr.KindInvalid, "invalid_target", "more than one of the person's projects allows this authorization server")
		}
		found = r
	}
	if found == nil {
		return nil, oauth.Error(apperr.KindInvalid, "invalid_target", "no project of the person's allows this authorization server")
	}
	return found, nil
}
