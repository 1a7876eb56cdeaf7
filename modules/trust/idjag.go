package trust

import (
	"context"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

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
	issuerIDPrefix   = schema.TrustedIssuerIDPrefix
)

type idJAG struct {
	s        *service
	verifier oauth.Verifier
	signer   oauth.Signer
	members  identity.Memberships
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
	// An id_token, not any JWT these keys sign (an access token is at+jwt): typ JWT,
	// issued here to this client (aud and azp), unexpired, naming the project whose
	// consent it came from.
	typ, claims, err := x.verifier.VerifySigned(f.Get("subject_token"))
	exp, _ := claims["exp"].(float64)
	sub, _ := claims["sub"].(string)
	project, _ := claims["project_id"].(string)
	if err != nil || typ != "JWT" || claims["iss"] != identity.IssuerFrom(ctx) || !slices.Contains(oauth.Audiences(claims), r.Client.ID) ||
		claims["azp"] != r.Client.ID || sub == "" || project == "" || float64(x.clock.Now().Unix()) >= exp {
		return oauth.Token{}, invalidGrant("subject_token is not a live id_token this server issued to the client")
	}
	audience := f.Get("audience")
	target, err := x.allowing(ctx, project, audience, sub)
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
	// The address only when the client could read it (the id_token holds it: the email
	// scope) and the person proved it: another server may map people by it.
	if email, ok := claims["email"].(string); ok && email != "" && claims["email_verified"] == true {
		jag["email"], jag["email_verified"] = email, true
	}
	signed, err := x.signer.SignTyped(ctx, jag, "RS256", typIDJAG)
	if err != nil {
		return oauth.Token{}, err
	}
	err = database.WithTx(ctx, x.s.ent, func(tx *ent.Tx) error {
		// The client asks for the person whose id_token it holds: it acts for them.
		client := r.Client.ID
		_, err := x.s.audit.Record(ctx, tx, audit.Event{ActorID: &client, ActorType: audit.ClientActor(client), Act: audit.Delegation(sub, client),
			ProjectID: target.ProjectID, Action: actionIDJAG, Metadata: map[string]any{
				"authorizationServer": audience, "clientId": target.ClientID, "requestedBy": r.Client.ID, "jti": jag["jti"], "scope": jag["scope"]}})
		return err
	})
	if err != nil {
		return oauth.Token{}, err
	}
	return oauth.Token{AccessToken: signed, IssuedTokenType: tokenTypeIDJAG, TokenType: "N_A", ExpiresIn: int(jagTTL.Seconds()),
		Scope: strings.Join(requested, " ")}, nil
}

// allowing is project's permission to issue ID-JAGs for the authorization server issuer,
// while user is still one of its members: an ID-JAG speaks for the project whose consent
// the id_token came from, never for another the person happens to belong to.
func (x *idJAG) allowing(ctx context.Context, project, issuer, user string) (*ent.TrustedAuthorizationServer, error) {
	if _, member, err := x.members.Role(ctx, project, user); err != nil || !member {
		if err != nil {
			return nil, err
		}
		return nil, invalidGrant("the person is no longer a member of the project the id_token was issued for")
	}
	if !utf8.ValidString(issuer) || strings.ContainsFunc(issuer, unicode.IsControl) {
		return nil, oauth.ErrTarget
	}
	row, err := x.s.ent.TrustedAuthorizationServer.Query().
		Where(trustedauthorizationserver.ProjectID(project), trustedauthorizationserver.Issuer(issuer)).First(ctx)
	if ent.IsNotFound(err) {
		return nil, oauth.Error(apperr.KindInvalid, "invalid_target", "the project the person signed in for does not allow this authorization server")
	}
	return row, err
}
