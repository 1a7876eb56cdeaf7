package authorize

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
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
	"github.com/authcore/authcore/platform/resource"
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
func (*codeGrant) ClientAuthOptional()         {}
func (*codeGrant) Repeatable(name string) bool { return name == "resource" }

// Live: access tokens of a person's grant are worth what the grant is.
func (g *codeGrant) Live(ctx context.Context, from oauth.Issued) (bool, error) {
	return g.s.grantLive(ctx, from)
}

func (g *codeGrant) Token(ctx context.Context, r oauth.Request) (oauth.Token, error) {
	f := r.Form
	switch {
	case f.Get("client_id") == "" && r.Client == nil:
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
	cl, err := s.clientOf(ctx, r)
	if err != nil {
		return oauth.Token{}, err
	}
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
	case code.ClientID != cl.ID:
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
	var org *identity.OrgMembership
	if refused == nil {
		if org, err = s.orgOf(ctx, gs.ProjectID, gs.UserID, code.OrgID); apperr.IsKind(err, apperr.KindInvalid) {
			refused, err = err, nil
		}
		if err != nil {
			return oauth.Token{}, err
		}
	}
	// A public client's grant refreshes as it always has; a confidential one's only when
	// it asked for offline_access (SPEC §21, MCP 2026-07-28).
	offline := !cl.confidential() || slices.Contains(code.Scopes, scopeOfflineAccess)
	in := signIn{AuthTime: code.AuthTime, AMR: code.Amr, SID: code.Sid, OrgID: code.OrgID}
	if !cl.confidential() {
		in.JKT = oauth.DPoPKeyOf(ctx) // its refresh tokens bound to the key, if any
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
		if !offline {
			return nil
		}
		refresh, err = s.newRefresh(ctx, tx, code.GrantID, code.ClientID, code.Scopes, code.Resources, now.Add(refreshMaxTTL), in)
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
	scopes, err := s.standing(ctx, cl, code.GrantID, gs, code.Scopes, code.Resources)
	if err != nil {
		return oauth.Token{}, err
	}
	answer, err := s.issue(ctx, gs.UserID, gs.ProjectID, code.GrantID, code.ClientID, scopes, audience, refresh, org)
	if err != nil || !slices.Contains(scopes, scopeOpenID) {
		return answer, err
	}
	answer.IDToken, err = s.idToken(ctx, gs.UserID, gs.ProjectID, code.ClientID, idTokenAlg(cl.IDTokenAlg), code.Nonce, scopes, in, answer.AccessToken, org)
	return answer, err
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

// within narrows a token request's resources to those granted: each must be one, in
// any spelling of its URI (RFC 8707 §2.2); none named is every one granted. What comes
// back is as the grant holds it: the URI as its project registered it, which aud carries.
func within(targets, granted []string) ([]string, error) {
	if len(targets) == 0 {
		return granted, nil
	}
	out := make([]string, 0, len(targets))
	for _, t := range targets {
		i := slices.IndexFunc(granted, func(g string) bool { c, err := resource.Canonical(g); return err == nil && c == t })
		if i < 0 {
			return nil, oauth.Error(apperr.KindInvalid, "invalid_target", "resource "+t+" was not granted")
		}
		if !slices.Contains(out, granted[i]) {
			out = append(out, granted[i])
		}
	}
	return out, nil
}

// refreshGrant is grant_type=refresh_token for grant refresh tokens (SPEC §16): rotated
// on every use; a rotated one presented again ends the grant (the session engine's theft
// rule). scope and resource may narrow the access token, never widen it.
type refreshGrant struct{ s *service }

func (*refreshGrant) Type() string                { return grantRefreshToken }
func (*refreshGrant) Metric() string              { return grantRefreshToken }
func (*refreshGrant) ClientAuth() bool            { return false }
func (*refreshGrant) ClientAuthOptional()         {}
func (*refreshGrant) Repeatable(name string) bool { return name == "resource" }

func (g *refreshGrant) Live(ctx context.Context, from oauth.Issued) (bool, error) {
	return g.s.grantLive(ctx, from)
}

func (g *refreshGrant) Token(ctx context.Context, r oauth.Request) (oauth.Token, error) {
	f := r.Form
	switch {
	case f.Get("client_id") == "" && r.Client == nil:
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
	cl, err := s.clientOf(ctx, r)
	if err != nil {
		return oauth.Token{}, err
	}
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
	if row.ClientID != cl.ID {
		return oauth.Token{}, invalidGrant("the refresh token was issued to another client")
	}
	in := signIn{AuthTime: row.AuthTime, AMR: row.Amr, SID: row.Sid, JKT: row.Jkt, OrgID: row.OrgID}
	// A public client's refresh token issued under a DPoP key works only with it (RFC 9449 §5).
	if row.Jkt != "" && oauth.DPoPKeyOf(ctx) != row.Jkt {
		return oauth.Token{}, invalidGrant("the refresh token is bound to a DPoP key: send a proof by that key")
	}
	now := s.clock.Now()
	if row.RotatedAt != nil {
		return s.again(ctx, row)
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
	org, err := s.orgOf(ctx, gs.ProjectID, gs.UserID, row.OrgID)
	if err != nil {
		return oauth.Token{}, err
	}
	granted := row.Scopes
	if len(requested) > 0 {
		granted = requested
	}
	if granted, err = s.standing(ctx, cl, row.GrantID, gs, granted, row.Resources); err != nil {
		return oauth.Token{}, err
	}
	// The answer is signed before the rotation commits, so that the rotation can keep it
	// sealed for a racing twin (again); a rotation lost to a concurrent use discards it.
	answer, err := s.sign(ctx, gs.UserID, gs.ProjectID, row.GrantID, row.ClientID, granted, audience, org)
	if err != nil {
		return oauth.Token{}, err
	}
	if slices.Contains(granted, scopeOpenID) { // OIDC Core §12.2: no nonce on refresh
		if answer.IDToken, err = s.idToken(ctx, gs.UserID, gs.ProjectID, row.ClientID, idTokenAlg(cl.IDTokenAlg), "", granted, in, answer.AccessToken, org); err != nil {
			return oauth.Token{}, err
		}
	}
	next, err := secret.NewToken(refreshKind)
	if err != nil {
		return oauth.Token{}, err
	}
	answer.RefreshToken = next
	sealed, err := s.seal(row.ID, answer)
	if err != nil {
		return oauth.Token{}, err
	}
	var twin *oauth.Token
	won := false
	err = database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		n, err := tx.GrantRefreshToken.Update().Where(grantrefreshtoken.ID(row.ID), grantrefreshtoken.RotatedAtIsNil()).
			SetRotatedAt(now).SetSuccessor(sealed).Save(ctx)
		if err != nil {
			return err
		}
		if n == 0 {
			// A concurrent use rotated it first: its twin, or a thief. Read it in this
			// transaction, which sees that rotation (SQLite's group commit holds both in
			// one transaction; PostgreSQL's update waited for its commit), and commit
			// nothing, so a twin's answer goes out only once what it repeats is durable.
			fresh, err := tx.GrantRefreshToken.Get(ctx, row.ID)
			if err != nil {
				return err
			}
			twin, err = s.graceAnswer(ctx, tx.Client(), fresh)
			return err
		}
		won = true
		return s.insertRefresh(ctx, tx, next, row.GrantID, row.ClientID, row.Scopes, row.Resources, row.FamilyExpiresAt, in)
	})
	switch {
	case err != nil:
		return oauth.Token{}, err
	case won:
		s.issued.Inc()
		s.usage.Count(gs.ProjectID, grantKind, row.GrantID, usage.OK)
		return answer, nil
	case twin != nil:
		return *twin, nil
	}
	return oauth.Token{}, s.reused(ctx, row.GrantID)
}

// clientOf is the client of a token request: the one that authenticated, or the public
// one client_id names. A confidential client must authenticate, with the method it
// registered (a key is not a secret, nor the other way round).
func (s *service) clientOf(ctx context.Context, r oauth.Request) (client, error) {
	id := r.Form.Get("client_id")
	if r.Client != nil {
		if id != "" && id != r.Client.ID {
			return client{}, oauth.InvalidRequest("client_id does not match the client that authenticated")
		}
		id = r.Client.ID
	}
	cl, err := s.clients.resolve(ctx, id)
	var unusable errClient
	if errors.As(err, &unusable) {
		return client{}, oauth.Error(apperr.KindUnauthenticated, "invalid_client", unusable.why)
	}
	if err != nil {
		return client{}, err
	}
	switch {
	case cl.confidential() && r.Client == nil:
		return client{}, oauth.Error(apperr.KindUnauthenticated, "invalid_client", "this client is confidential: authenticate it with "+cl.AuthMethod)
	case cl.confidential() && cl.AuthMethod != r.Client.Method:
		return client{}, oauth.Error(apperr.KindUnauthenticated, "invalid_client", "authenticate with the method this client registered: "+cl.AuthMethod)
	case !cl.confidential() && r.Client != nil:
		return client{}, oauth.Error(apperr.KindUnauthenticated, "invalid_client", "this client is public: it has no credentials to present")
	case cl.DPoPBound && oauth.DPoPKeyOf(ctx) == "":
		return client{}, oauth.InvalidRequest("this client registered dpop_bound_access_tokens: send a DPoP proof")
	}
	return cl, nil
}

// refreshGrace is how long after a rotation the same client may present the rotated
// token again and get the same answer (SPEC §9b): an honest client's parallel refreshes
// (two tabs, a retry after a lost response) race with one token.
const refreshGrace = 2 * time.Second

// again answers a refresh token presented after its rotation: the answer that rotation
// gave while its grace lasts, otherwise theft (the session engine's rule): the grant ends.
func (s *service) again(ctx context.Context, row *ent.GrantRefreshToken) (oauth.Token, error) {
	twin, err := s.graceAnswer(ctx, s.ent, row)
	if err != nil {
		return oauth.Token{}, err
	}
	if twin != nil {
		return *twin, nil
	}
	return oauth.Token{}, s.reused(ctx, row.GrantID)
}

// graceAnswer is the answer row's rotation gave, for its twin, when that rotation was
// less than refreshGrace ago and the token it rotated to is still the grant's newest;
// nil otherwise. c reads the store: the pool, or the transaction that saw the rotation.
func (s *service) graceAnswer(ctx context.Context, c *ent.Client, row *ent.GrantRefreshToken) (*oauth.Token, error) {
	if row.RotatedAt == nil || row.Successor == nil || s.clock.Now().Sub(*row.RotatedAt) >= refreshGrace {
		return nil, nil
	}
	var answer oauth.Token
	plain, err := s.keys.Open(*row.Successor, []byte(row.ID))
	if err != nil || json.Unmarshal(plain, &answer) != nil {
		return nil, nil // sealed under a key since dropped: no twin to answer
	}
	next, err := c.GrantRefreshToken.Query().Where(grantrefreshtoken.Digest(secret.DigestOf(answer.RefreshToken).Bytes())).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, nil
	}
	if err != nil || next.RotatedAt != nil {
		return nil, err
	}
	answer.ExpiresIn -= int(s.clock.Now().Sub(*row.RotatedAt).Seconds())
	return &answer, nil
}

// seal keeps a rotation's answer for again, bound to the rotated token's row.
func (s *service) seal(rowID string, answer oauth.Token) (string, error) {
	plain, err := json.Marshal(answer)
	if err != nil {
		return "", err
	}
	return sealedGraceAnswer.Seal(s.keys, plain, rowID)
}

// standing re-checks what a grant was approved on (SPEC §9b) each time it issues: its
// user still an admin of its project, and each of its resources still registered there.
// A grant that lost either ends here — the change that lost it ends it too, in its own
// transaction; this is the rule, that the mechanism. The scopes come back narrowed to
// what the project's policy allows now: a narrower policy narrows, it does not fail.
//
// Two grants stand on the person alone (SPEC §25): an app's, approved by its tenant user
// for themselves, and a personal one (no project: identity scopes only). Neither needs a
// project admin; a personal grant issues nothing but identity scopes.
func (s *service) standing(ctx context.Context, cl client, grantID string, gs grantState, scopes, resources []string) ([]string, error) {
	if gs.ProjectID == "" {
		return slices.DeleteFunc(slices.Clone(scopes), func(sc string) bool { return !isIdentityScope(sc) }), nil
	}
	reason := ""
	if !cl.app() || cl.ProjectID != gs.ProjectID {
		role, ok, err := s.members.Role(ctx, gs.ProjectID, gs.UserID)
		if err != nil {
			return nil, err
		}
		if !ok || role != identity.RoleAdmin {
			reason = "member_removed"
		}
	}
	for _, uri := range resources {
		if reason != "" {
			break
		}
		canonical, err := resource.Canonical(uri)
		if err != nil {
			reason = "resource_deleted"
			break
		}
		r, ok, err := s.resources.Lookup(ctx, canonical)
		if err != nil {
			return nil, err
		}
		if !ok || r.ProjectID != gs.ProjectID {
			reason = "resource_deleted"
		}
	}
	if reason != "" {
		if _, err := s.grants.revoke(ctx, grantID, ending{Reason: reason}); err != nil {
			return nil, err
		}
		return nil, errNotLiveGrant
	}
	pol, err := s.policies.Policy(ctx, gs.ProjectID)
	if err != nil {
		return nil, err
	}
	allowed := make([]string, 0, len(scopes))
	for _, sc := range scopes {
		if isIdentityScope(sc) || pol.Allows(sc) {
			allowed = append(allowed, sc)
		}
	}
	return allowed, nil
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
func (s *service) newRefresh(ctx context.Context, tx *ent.Tx, grantID, clientID string, scopes, resources []string, family time.Time, in signIn) (string, error) {
	token, err := secret.NewToken(refreshKind)
	if err != nil {
		return "", err
	}
	return token, s.insertRefresh(ctx, tx, token, grantID, clientID, scopes, resources, family, in)
}

// insertRefresh writes refresh token token of the grant (newRefresh's store half).
func (s *service) insertRefresh(ctx context.Context, tx *ent.Tx, token, grantID, clientID string, scopes, resources []string, family time.Time, in signIn) error {
	now := s.clock.Now()
	expires := now.Add(refreshIdleTTL)
	if family.Before(expires) {
		expires = family
	}
	return tx.GrantRefreshToken.Create().SetDigest(secret.DigestOf(token).Bytes()).SetGrantID(grantID).SetClientID(clientID).
		SetScopes(scopes).SetResources(resources).SetExpiresAt(expires).SetFamilyExpiresAt(family).
		SetNillableAuthTime(in.AuthTime).SetAmr(in.AMR).SetSid(in.SID).SetJkt(in.JKT).SetOrgID(in.OrgID).Exec(ctx)
}

// issue signs an access token of a person's grant, with refresh, and counts it.
func (s *service) issue(ctx context.Context, userID, projectID, grantID, clientID string, scopes, audience []string, refresh string, org *identity.OrgMembership) (oauth.Token, error) {
	t, err := s.sign(ctx, userID, projectID, grantID, clientID, scopes, audience, org)
	if err != nil {
		return oauth.Token{}, err
	}
	t.RefreshToken = refresh
	s.issued.Inc()
	s.usage.Count(projectID, grantKind, grantID, usage.OK)
	return t, nil
}

// sign signs an access token of a person's grant: for its resources, else for the issuer;
// with the organisation they signed in for, if any.
func (s *service) sign(ctx context.Context, userID, projectID, grantID, clientID string, scopes, audience []string, org *identity.OrgMembership) (oauth.Token, error) {
	now := s.clock.Now().Truncate(time.Second)
	var aud any = identity.IssuerFrom(ctx)
	if len(audience) > 0 {
		aud = oauth.Audience(audience)
	}
	sc := joinScopes(scopes)
	at, err := oauth.Sign(ctx, s.signer, withOrg(oauth.Claims{Subject: userID, ClientID: clientID, Audience: aud, Scope: sc,
		ProjectID: projectID, GrantID: grantID, IssuedAt: now.Unix(), Expires: now.Add(accessTTL).Unix(), ID: schema.NewID(schema.AssertionIDPrefix)}, org))
	if err != nil {
		return oauth.Token{}, err
	}
	return oauth.Token{AccessToken: at, TokenType: "Bearer", ExpiresIn: int(accessTTL.Seconds()), Scope: sc}, nil
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
