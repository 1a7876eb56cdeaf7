package authorize

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/grantrefreshtoken"
	"github.com/authcore/authcore/ent/oauthcode"
	"github.com/authcore/authcore/ent/schema"
	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/oauth"
	"github.com/authcore/authcore/platform/scope"
	"github.com/authcore/authcore/platform/secret"
	"github.com/authcore/authcore/platform/usage"
)

// Lifetimes of SPEC §16.
const (
	codeTTL          = 60 * time.Second
	accessTTL        = 15 * time.Minute
	refreshIdleTTL   = 30 * 24 * time.Hour
	refreshMaxTTL    = 90 * 24 * time.Hour
	codeKind         = "oc" // authorization codes: ac_oc_…
	maxScopeParamLen = 2048
)

// verifierPattern is RFC 7636 §4.1's code_verifier.
var verifierPattern = regexp.MustCompile(`^[A-Za-z0-9._~-]{43,128}$`)

func invalidGrant(why string) *apperr.Error {
	return oauth.Error(apperr.KindInvalid, "invalid_grant", why)
}

var errNotLiveGrant = invalidGrant("the authorization code or refresh token is not live")

// codeGrant is grant_type=authorization_code for public clients (SPEC §16): the code is
// the credential, bound to the client, the redirect URI, the PKCE challenge and resources.
type codeGrant struct{ s *service }

func (*codeGrant) Type() string                { return grantAuthorizationCode }
func (*codeGrant) Metric() string              { return grantAuthorizationCode }
func (*codeGrant) ClientAuth() bool            { return false }
func (*codeGrant) Repeatable(name string) bool { return name == "resource" }

// Live: access tokens of a person's grant are worth what the grant is.
func (g *codeGrant) Live(ctx context.Context, from oauth.Issued) (bool, error) {
	return g.s.grantLive(ctx, from)
}

func (g *codeGrant) Token(ctx context.Context, r oauth.Request) (oauth.Token, error) {
	f := r.Form
	switch {
	case f.Get("client_id") == "":
		return oauth.Token{}, oauth.InvalidRequest("client_id is required (public clients identify themselves)")
	case f.Get("code") == "":
		return oauth.Token{}, oauth.InvalidRequest("code is required")
	case f.Get("redirect_uri") == "":
		return oauth.Token{}, oauth.InvalidRequest("redirect_uri is required")
	case f.Get("code_verifier") == "":
		return oauth.Token{}, oauth.InvalidRequest("code_verifier is required (PKCE)")
	}
	targets, err := oauth.Targets(f, false)
	if err != nil {
		return oauth.Token{}, err
	}
	s := g.s
	if !secret.CheckToken(codeKind, f.Get("code")) {
		return oauth.Token{}, errNotLiveGrant
	}
	code, err := s.ent.OAuthCode.Query().Where(oauthcode.Digest(secret.DigestOf(f.Get("code")).Bytes())).Only(ctx)
	if ent.IsNotFound(err) {
		return oauth.Token{}, errNotLiveGrant
	}
	if err != nil {
		return oauth.Token{}, err
	}
	if code.UsedAt != nil {
		return oauth.Token{}, s.replayed(ctx, code.GrantID)
	}
	now := s.clock.Now()
	var refused error
	switch {
	case !now.Before(code.ExpiresAt):
		refused = invalidGrant("the authorization code expired")
	case code.ClientID != f.Get("client_id"):
		refused = invalidGrant("the authorization code was issued to another client")
	case code.RedirectURI != f.Get("redirect_uri"):
		refused = invalidGrant("redirect_uri is not the one the code was issued for")
	case !verifierPattern.MatchString(f.Get("code_verifier")) || !secret.Equal([]byte(challengeOf(f.Get("code_verifier"))), []byte(code.CodeChallenge)):
		refused = invalidGrant("code_verifier does not match the code_challenge")
	}
	audience, err := within(targets, code.Resources)
	if refused == nil && err != nil {
		refused = err
	}
	gs, err := s.grants.state(ctx, code.GrantID)
	if err != nil {
		return oauth.Token{}, err
	}
	if refused == nil && !gs.Live {
		refused = errNotLiveGrant
	}
	// The code is spent whatever the outcome (a wrong verifier is a guess), by one
	// conditional update in the transaction that issues: of two concurrent uses, one wins.
	var refresh string
	spent := true
	err = database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		n, err := tx.OAuthCode.Update().Where(oauthcode.ID(code.ID), oauthcode.UsedAtIsNil()).SetUsedAt(now).Save(ctx)
		if err != nil || n == 0 || refused != nil {
			spent = n > 0
			return err
		}
		refresh, err = s.newRefresh(ctx, tx, code.GrantID, code.ClientID, code.Scopes, code.Resources, now.Add(refreshMaxTTL))
		return err
	})
	switch {
	case err != nil:
		return oauth.Token{}, err
	case !spent:
		return oauth.Token{}, s.replayed(ctx, code.GrantID)
	case refused != nil:
		return oauth.Token{}, refused
	}
	return s.issue(ctx, gs.UserID, gs.ProjectID, code.GrantID, code.ClientID, code.Scopes, audience, refresh)
}

// replayed ends the grant of a code used twice (RFC 6749 §4.1.2): it was stolen, or its
// first use was, so what it issued is revoked with the grant.
func (s *service) replayed(ctx context.Context, grantID string) error {
	if _, err := s.grants.revoke(ctx, grantID, ending{Reason: "code_replay"}); err != nil {
		return err
	}
	s.reuse.WithLabelValues(grantAuthorizationCode).Inc()
	return invalidGrant("the authorization code was used already; the grant it came from is revoked")
}

// challengeOf is S256 (RFC 7636 §4.2) of a verifier.
func challengeOf(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// within narrows a token request's resources to those granted: each must be one (RFC
// 8707 §2.2); none named is every one granted.
func within(targets, granted []string) ([]string, error) {
	for _, t := range targets {
		if !slices.Contains(granted, t) {
			return nil, oauth.Error(apperr.KindInvalid, "invalid_target", "resource "+t+" was not granted")
		}
	}
	if len(targets) > 0 {
		return targets, nil
	}
	return granted, nil
}

// refreshGrant is grant_type=refresh_token for grant refresh tokens (SPEC §16): rotated
// on every use; a rotated one presented again ends the grant (the session engine's theft
// rule). scope and resource may narrow the access token, never widen it.
type refreshGrant struct{ s *service }

func (*refreshGrant) Type() string                { return grantRefreshToken }
func (*refreshGrant) Metric() string              { return grantRefreshToken }
func (*refreshGrant) ClientAuth() bool            { return false }
func (*refreshGrant) Repeatable(name string) bool { return name == "resource" }

func (g *refreshGrant) Live(ctx context.Context, from oauth.Issued) (bool, error) {
	return g.s.grantLive(ctx, from)
}

func (g *refreshGrant) Token(ctx context.Context, r oauth.Request) (oauth.Token, error) {
	f := r.Form
	switch {
	case f.Get("client_id") == "":
		return oauth.Token{}, oauth.InvalidRequest("client_id is required (public clients identify themselves)")
	case f.Get("refresh_token") == "":
		return oauth.Token{}, oauth.InvalidRequest("refresh_token is required")
	case len(f.Get("scope")) > maxScopeParamLen:
		return oauth.Token{}, oauth.ErrScopeGrammar
	}
	targets, err := oauth.Targets(f, false)
	if err != nil {
		return oauth.Token{}, err
	}
	requested := strings.Fields(f.Get("scope"))
	for _, sc := range requested {
		if !scope.Valid(sc) {
			return oauth.Token{}, oauth.ErrScopeGrammar
		}
	}
	s := g.s
	token := f.Get("refresh_token")
	if !secret.CheckToken(refreshKind, token) {
		return oauth.Token{}, errNotLiveGrant
	}
	row, err := s.ent.GrantRefreshToken.Query().Where(grantrefreshtoken.Digest(secret.DigestOf(token).Bytes())).Only(ctx)
	if ent.IsNotFound(err) {
		return oauth.Token{}, errNotLiveGrant
	}
	if err != nil {
		return oauth.Token{}, err
	}
	if row.ClientID != f.Get("client_id") {
		return oauth.Token{}, invalidGrant("the refresh token was issued to another client")
	}
	now := s.clock.Now()
	if row.RotatedAt != nil {
		return oauth.Token{}, s.reused(ctx, row.GrantID)
	}
	if !now.Before(row.ExpiresAt) {
		return oauth.Token{}, invalidGrant("the refresh token expired")
	}
	for _, sc := range requested {
		if !slices.Contains(row.Scopes, sc) {
			return oauth.Token{}, oauth.Error(apperr.KindInvalid, "invalid_scope", "scope "+sc+" was not granted")
		}
	}
	audience, err := within(targets, row.Resources)
	if err != nil {
		return oauth.Token{}, err
	}
	gs, err := s.grants.state(ctx, row.GrantID)
	if err != nil {
		return oauth.Token{}, err
	}
	if !gs.Live {
		return oauth.Token{}, errNotLiveGrant
	}
	var next string
	won := true
	err = database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		n, err := tx.GrantRefreshToken.Update().Where(grantrefreshtoken.ID(row.ID), grantrefreshtoken.RotatedAtIsNil()).SetRotatedAt(now).Save(ctx)
		if err != nil {
			return err
		}
		if n == 0 { // a concurrent use rotated it first: one of the two is a thief
			won = false
			return nil
		}
		next, err = s.newRefresh(ctx, tx, row.GrantID, row.ClientID, row.Scopes, row.Resources, row.FamilyExpiresAt)
		return err
	})
	if err != nil {
		return oauth.Token{}, err
	}
	if !won {
		return oauth.Token{}, s.reused(ctx, row.GrantID)
	}
	granted := row.Scopes
	if len(requested) > 0 {
		granted = requested
	}
	return s.issue(ctx, gs.UserID, gs.ProjectID, row.GrantID, row.ClientID, granted, audience, next)
}

// grantKind is what a person's grants are counted under (SPEC §19).
const grantKind = "oauth_grant"

// reused ends the grant whose rotated refresh token came back.
func (s *service) reused(ctx context.Context, grantID string) error {
	if _, err := s.grants.revoke(ctx, grantID, ending{Reason: "refresh_token_reuse"}); err != nil {
		return err
	}
	s.reuse.WithLabelValues(grantRefreshToken).Inc()
	return invalidGrant("the refresh token was used already; its grant is revoked")
}

// newRefresh writes a refresh token of the grant, idle for 30 days at most and never past
// family (its chain's absolute end).
func (s *service) newRefresh(ctx context.Context, tx *ent.Tx, grantID, clientID string, scopes, resources []string, family time.Time) (string, error) {
	token, err := secret.NewToken(refreshKind)
	if err != nil {
		return "", err
	}
	now := s.clock.Now()
	expires := now.Add(refreshIdleTTL)
	if family.Before(expires) {
		expires = family
	}
	return token, tx.GrantRefreshToken.Create().SetDigest(secret.DigestOf(token).Bytes()).SetGrantID(grantID).SetClientID(clientID).
		SetScopes(scopes).SetResources(resources).SetExpiresAt(expires).SetFamilyExpiresAt(family).Exec(ctx)
}

// issue signs an access token of a person's grant: for its resources, else for the issuer.
func (s *service) issue(ctx context.Context, userID, projectID, grantID, clientID string, scopes, audience []string, refresh string) (oauth.Token, error) {
	now := s.clock.Now().Truncate(time.Second)
	var aud any = identity.IssuerFrom(ctx)
	if len(audience) > 0 {
		aud = oauth.Audience(audience)
	}
	sc := joinScopes(scopes)
	at, err := oauth.Sign(ctx, s.signer, oauth.Claims{Subject: userID, ClientID: clientID, Audience: aud, Scope: sc,
		ProjectID: projectID, GrantID: grantID, IssuedAt: now.Unix(), Expires: now.Add(accessTTL).Unix(), ID: schema.NewID("jti_")})
	if err != nil {
		return oauth.Token{}, err
	}
	s.issued.Inc()
	s.usage.Count(projectID, grantKind, grantID, usage.OK)
	return oauth.Token{AccessToken: at, TokenType: "Bearer", ExpiresIn: int(accessTTL.Seconds()), Scope: sc, RefreshToken: refresh}, nil
}

func joinScopes(s []string) string { return strings.Join(s, " ") }

// grantLive answers for access tokens of a person's grant; false for others.
func (s *service) grantLive(ctx context.Context, from oauth.Issued) (bool, error) {
	if from.GrantID == "" {
		return false, nil
	}
	st, err := s.grants.state(ctx, from.GrantID)
	return st.Live, err
}

// reuseCounter counts refresh tokens and codes presented again (theft, or a client bug):
// authcore_oauth_reuse_total, alerted on.
func newReuseCounter() *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "authcore_oauth_reuse_total",
		Help: "Authorization codes and refresh tokens presented after their use, by grant type; each revoked its grant.",
	}, []string{"grant_type"})
	// Both series exist from the start at 0, so the alert's increase() sees the first reuse.
	c.WithLabelValues(grantAuthorizationCode)
	c.WithLabelValues(grantRefreshToken)
	return c
}
