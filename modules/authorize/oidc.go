package authorize

import (
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/dpop"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/oauth"
)

// OpenID Connect on the authorization server (SPEC §21): the same grants, with an
// id_token when the person's grant holds openid, userinfo, and the request parameters
// that say how fresh the person's sign-in must be.

// The scopes of OpenID Connect. They say what the client may learn of the person, not
// what it may do at a resource, so neither a resource's scopes nor the project's policy
// bound them.
const (
	scopeOpenID        = "openid"
	scopeProfile       = "profile"
	scopeEmail         = "email"
	scopeOfflineAccess = "offline_access"
)

// identityScopes are OpenID Connect's scopes, as metadata lists them.
var identityScopes = []string{scopeOpenID, scopeProfile, scopeEmail, scopeOfflineAccess}

func isIdentityScope(s string) bool { return slices.Contains(identityScopes, s) }

// agentScopes are the scopes of s that act at a resource: all but OpenID Connect's.
func agentScopes(s []string) []string {
	return slices.DeleteFunc(slices.Clone(s), isIdentityScope)
}

// Limits of the OpenID Connect request parameters.
const (
	maxNonce  = 512
	maxHint   = 320 // an email address at most
	maxMaxAge = 366 * 24 * 3600
)

// promptValues are OIDC Core §3.1.2.1's (select_account is accepted and means nothing
// here: a browser holds one session).
var promptValues = []string{"none", "login", "consent", "select_account"}

// oidcParams are an authorization request's OpenID Connect parameters.
type oidcParams struct {
	nonce, prompt, loginHint string
	maxAge                   *int
	// mfa is acr_values=urn:authcore:acr:mfa (SPEC §25): a sign-in with a second factor.
	mfa bool
}

// readOIDC reads nonce, prompt, max_age and login_hint: the error to send back, or "".
func readOIDC(q url.Values) (oidcParams, string) {
	p := oidcParams{nonce: q.Get("nonce"), prompt: q.Get("prompt"), loginHint: q.Get("login_hint")}
	p.mfa = readACR(q.Get("acr_values"))
	for _, k := range []string{"nonce", "prompt", "max_age", "login_hint", "acr_values"} {
		if len(q[k]) > 1 {
			return p, k + " is given more than once"
		}
	}
	switch {
	case len(p.nonce) > maxNonce:
		return p, "nonce is longer than 512 characters"
	case len(p.loginHint) > maxHint:
		return p, "login_hint is longer than 320 characters"
	}
	prompts := strings.Fields(p.prompt)
	for _, v := range prompts {
		if !slices.Contains(promptValues, v) {
			return p, "prompt must be none, login, consent or select_account"
		}
	}
	if slices.Contains(prompts, "none") && len(prompts) > 1 {
		return p, "prompt=none cannot be combined with other values"
	}
	p.prompt = strings.Join(prompts, " ")
	if raw := q.Get("max_age"); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 0 || n > maxMaxAge {
			return p, "max_age must be a whole number of seconds"
		}
		p.maxAge = &n
	}
	return p, ""
}

// wants reports whether the request's prompt holds v.
func wants(prompt, v string) bool { return slices.Contains(strings.Fields(prompt), v) }

// stale reports whether a sign-in at authTime is too old for a request that asked for
// prompt and maxAge at created: prompt=login wants one after the request, max_age one
// within that many seconds.
func stale(authTime, created, now time.Time, prompt string, maxAge *int) bool {
	if authTime.IsZero() {
		return wants(prompt, "login") || maxAge != nil
	}
	if wants(prompt, "login") && authTime.Before(created.Truncate(time.Second)) {
		return true
	}
	return maxAge != nil && now.Sub(authTime) > time.Duration(*maxAge)*time.Second
}

// signIn is how the person who approved had signed in.
type signIn struct {
	AuthTime *time.Time
	AMR      []string
	SID      string
	// OrgID is the organisation the person signed in for (SPEC §26), or "".
	OrgID string
	// JKT is the DPoP key a public client's refresh tokens are bound to (RFC 9449 §5),
	// carried from the code to each rotation.
	JKT string
}

// signInOf is p's sign-in, as its session's access token says it.
func signInOf(p identity.Principal) signIn {
	s := signIn{SID: p.SessionHandle}
	if !p.AuthTime.IsZero() {
		t := p.AuthTime
		s.AuthTime = &t
	}
	if amr, ok := p.Claims["amr"].([]any); ok {
		for _, m := range amr {
			if v, ok := m.(string); ok {
				s.AMR = append(s.AMR, v)
			}
		}
	}
	return s
}

// acrOf is the authentication context class of methods: a second factor is the higher
// one. The values are authcore's own (acr_values_supported says them).
func acrOf(amr []string) string {
	for _, m := range amr {
		if m == "otp" || m == "hwk" || m == "swk" || m == "mfa" {
			return acrMFA
		}
	}
	return acrPassword
}

const (
	acrPassword = "urn:authcore:acr:1fa"
	acrMFA      = "urn:authcore:acr:mfa"
)

// idTokenTTL is how long an id_token is valid: it is read once, at sign-in.
const idTokenTTL = 15 * time.Minute

// idToken signs the id_token of an answer whose scopes hold openid (OIDC Core §2,
// §3.1.3.6): the person, the client as audience, the project of the grant, how the person
// signed in, the access token's hash, and the profile and email claims the scopes allow.
func (s *service) idToken(ctx context.Context, userID, projectID, clientID, alg, nonce string, scopes []string, in signIn, accessToken string, org *identity.OrgMembership) (string, error) {
	now := s.clock.Now().Truncate(time.Second)
	claims := map[string]any{
		"sub": userID, "aud": clientID, "azp": clientID,
		"iat": now.Unix(), "exp": now.Add(idTokenTTL).Unix(),
		"acr": acrOf(in.AMR),
		// The project the person approved the sign-in for, as in access tokens: what an
		// ID-JAG made from this id_token may speak for (SPEC §22).
		"project_id": projectID,
	}
	if in.AuthTime != nil {
		claims["auth_time"] = in.AuthTime.Unix()
	}
	if len(in.AMR) > 0 {
		claims["amr"] = in.AMR
	}
	if in.SID != "" {
		claims["sid"] = in.SID
	}
	if nonce != "" {
		claims["nonce"] = nonce
	}
	if org != nil {
		claims["org_id"], claims["org_role"], claims["org_permissions"] = org.OrgID, org.Role, org.Permissions
	}
	if accessToken != "" {
		claims["at_hash"] = halfHash(alg, accessToken)
	}
	if slices.Contains(scopes, scopeProfile) || slices.Contains(scopes, scopeEmail) {
		profile, err := s.users.Profile(ctx, userID)
		if err != nil {
			return "", err
		}
		for k, v := range profileClaims(profile, scopes) {
			claims[k] = v
		}
	}
	if err := s.appClaims(ctx, clientID, userID, claims); err != nil {
		return "", err
	}
	tok, err := s.signer.SignIDToken(ctx, claims, alg)
	if err != nil {
		return "", err
	}
	s.idTokens.Inc()
	return tok, nil
}

// profileClaims are the standard claims (OIDC Core §5.1, §5.4) a person's profile gives
// for scopes: name for profile, email and email_verified for email.
func profileClaims(p identity.Profile, scopes []string) map[string]any {
	out := map[string]any{}
	if slices.Contains(scopes, scopeProfile) && p.Name != nil {
		out["name"] = *p.Name
	}
	if slices.Contains(scopes, scopeEmail) && p.Email != nil {
		out["email"] = *p.Email
		out["email_verified"] = p.EmailVerified
	}
	return out
}

// halfHash is at_hash (OIDC Core §3.1.3.6): the left half of the access token's hash
// under the id_token algorithm's hash, base64url. EdDSA with Ed25519 hashes with SHA-512
// (as the OpenID Foundation's EdDSA errata and every maintained client read it).
func halfHash(alg, token string) string {
	var h hash.Hash = sha256.New()
	if alg == "EdDSA" {
		h = sha512.New()
	}
	h.Write([]byte(token))
	sum := h.Sum(nil)
	return base64.RawURLEncoding.EncodeToString(sum[:len(sum)/2])
}

// idTokenAlg is the algorithm a client's id_tokens are signed with: what it registered,
// else RS256.
func idTokenAlg(registered string) string {
	if slices.Contains(oauth.IDTokenAlgorithms, registered) {
		return registered
	}
	return oauth.IDTokenAlgorithms[0]
}

// userinfo is OIDC Core §5.3 (GET or POST, RFC 6750 bearer): the claims a live access
// token of a person's grant holding openid may read. What is live is the credential
// registry's answer, the one introspection gives: a revoked token, or one of a grant
// that ended, is invalid_token here too.
func (h *handler) userinfo(c *fiber.Ctx) error {
	c.Set(fiber.HeaderCacheControl, "no-store")
	authz := c.Get(fiber.HeaderAuthorization)
	tok, scheme := httpserver.BearerToken(authz), "Bearer"
	if rest, ok := strings.CutPrefix(authz, "DPoP "); ok {
		tok, scheme = strings.TrimSpace(rest), "DPoP"
	}
	if tok == "" && c.Method() == fiber.MethodPost && strings.HasPrefix(c.Get(fiber.HeaderContentType), formType) {
		if form, err := url.ParseQuery(string(c.Body())); err == nil && len(form["access_token"]) == 1 {
			tok = form.Get("access_token") // RFC 6750 §2.2
		}
	}
	if tok == "" {
		return errNoToken
	}
	typ, claims, err := h.verifier.VerifyJWT(strings.Clone(tok))
	grantID, _ := claims["grant_id"].(string)
	project, _ := claims["project_id"].(string)
	if err != nil || typ != "at+jwt" || grantID == "" {
		return errBadToken
	}
	if err := h.proven(c, tok, scheme, claims); err != nil {
		return err
	}
	fields, err := h.kinds.Introspect(c.UserContext(), tok, project)
	if err != nil {
		return err
	}
	if fields == nil {
		return errBadToken
	}
	scopes := strings.Fields(fmt.Sprint(fields["scope"]))
	if !slices.Contains(scopes, scopeOpenID) {
		return errNotOpenID
	}
	sub, _ := claims["sub"].(string)
	profile, err := h.users.Profile(c.UserContext(), sub)
	if err != nil {
		return err
	}
	out := profileClaims(profile, scopes)
	out["sub"] = sub
	if cid, _ := claims["client_id"].(string); cid != "" {
		if cl, err := h.clients.resolve(c.UserContext(), cid); err == nil && cl.app() {
			customClaims(cl.Claims, profile.Metadata, out)
		}
	}
	return c.JSON(out)
}

// proven holds a token bound to a DPoP key (cnf.jkt) to RFC 9449 §7: the DPoP scheme and
// a proof by that key for this request; a bearer token is not taken under DPoP's scheme.
func (h *handler) proven(c *fiber.Ctx, tok, scheme string, claims map[string]any) error {
	cnf, bound := claims["cnf"].(map[string]any)
	if !bound {
		if scheme == "DPoP" {
			return errBadToken
		}
		return nil
	}
	refuse := func(why string) error {
		c.Set("DPoP-Nonce", h.dpop.Nonce())
		return apperr.OAuth(apperr.KindUnauthenticated, "invalid_token", why).
			WithHeader("WWW-Authenticate", `DPoP error="invalid_token", algs="`+strings.Join(dpop.AlgorithmNames(), " ")+`"`)
	}
	if scheme != "DPoP" {
		return refuse("the access token is bound to a DPoP key: send it as Authorization: DPoP with a proof")
	}
	p, err := h.dpop.Verify(c.Get("DPoP"), dpop.Request{Method: c.Method(), URL: h.cfg.SelfURL() + c.Path(), AccessToken: tok})
	var refused *dpop.Error
	switch {
	case errors.As(err, &refused):
		return refuse(refused.Why)
	case err != nil:
		return err
	case p.JKT != cnf["jkt"]:
		h.dpop.Release(p) // it gets nothing, so its jti takes no room
		return refuse("the DPoP proof is by another key than the token is bound to")
	}
	return nil
}

const formType = "application/x-www-form-urlencoded"

// The answers of RFC 6750 §3.1.
var (
	errNoToken = apperr.OAuth(apperr.KindUnauthenticated, "invalid_request", "send the access token as Authorization: Bearer").
			WithHeader("WWW-Authenticate", `Bearer realm="authcore"`)
	errBadToken = apperr.OAuth(apperr.KindUnauthenticated, "invalid_token", "the access token is not a live token of a person's grant").
			WithHeader("WWW-Authenticate", `Bearer realm="authcore", error="invalid_token"`)
	errNotOpenID = apperr.OAuth(apperr.KindForbidden, "insufficient_scope", "the access token's grant does not hold openid").
			WithHeader("WWW-Authenticate", `Bearer realm="authcore", error="insufficient_scope", scope="openid"`)
)

// logout is RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0): with an
// id_token_hint this server signed, whose session is this browser's, the session ends.
// The browser goes back to a post_logout_redirect_uri only when a live id_token_hint
// names the client and the client registered that URI (SPEC §29): a client_id proves
// nothing (anyone can write one), and an expired hint may be anyone's old token, so
// either would make this server an open redirector with a trusted name. Without a hint
// nothing is signed out (anyone could link a person here); the person sees a page.
func (h *handler) logout(c *fiber.Ctx) error {
	q, err := url.ParseQuery(string(c.Request().URI().QueryString()))
	if err != nil {
		return h.page(c, "The logout request's query string cannot be read.")
	}
	if c.Method() == fiber.MethodPost {
		if q, err = url.ParseQuery(string(c.Body())); err != nil {
			return h.page(c, "The logout request's form cannot be read.")
		}
	}
	for k, v := range q {
		if len(v) > 1 {
			return h.page(c, "The logout request gives "+k+" more than once.")
		}
	}
	hint, clientID, back := q.Get("id_token_hint"), q.Get("client_id"), q.Get("post_logout_redirect_uri")
	sid, live := "", false
	if hint != "" {
		// An id_token (typ JWT, one audience: its client), not an access token or an
		// ID-JAG these keys also sign.
		typ, claims, err := h.verifier.VerifySigned(hint)
		aud := oauth.Audiences(claims)
		if err != nil || typ != "JWT" || claims["iss"] != h.cfg.SelfURL() || len(aud) != 1 || claims["azp"] != aud[0] {
			return h.page(c, "The id_token_hint is not an id_token this server issued.")
		}
		if clientID != "" && clientID != aud[0] {
			return h.page(c, "The id_token_hint was issued to another client than client_id.")
		}
		clientID = aud[0]
		sid, _ = claims["sid"].(string)
		exp, _ := claims["exp"].(float64)
		live = float64(h.clock.Now().Unix()) < exp
	}
	if back != "" && hint != "" {
		cl, err := h.clients.resolve(c.UserContext(), clientID)
		var unusable errClient
		if errors.As(err, &unusable) || (err == nil && !slices.Contains(cl.PostLogoutRedirectURIs, back)) {
			return h.page(c, "The post_logout_redirect_uri is not one the client registered, so this server will not send you there.")
		}
		if err != nil {
			return err
		}
	}
	var fronts []string
	if sid != "" && hint != "" {
		// An app's id_token (SPEC §25): its sid is the browser's SSO session of the app's
		// project, which ends for every app it signed in to. Only this browser's: a
		// hint alone (an old token of anyone's) signs out nobody else.
		if cl, err := h.clients.resolve(c.UserContext(), clientID); err == nil && cl.app() {
			var err error
			if fronts, err = (ssoCookies{h}).endSSO(c, cl.ProjectID, sid); err != nil {
				return err
			}
			sid = "" // ended, or not this browser's
		}
	}
	if sid != "" {
		p, ok, err := h.guard.BrowserSession(c)
		if err != nil {
			return err
		}
		if ok && p.SessionHandle == sid {
			if _, err := h.sessions.Revoke(c.UserContext(), sid); err != nil {
				return err
			}
			guard.ClearSessionCookies(c, h.cfg)
		}
	}
	switch {
	case back != "" && hint == "":
		return h.signedOut(c, false, "The application asked to send you back without an id_token_hint, so this server will not send you there.", fronts, "")
	case back != "" && !live:
		return h.signedOut(c, true, "The application's id_token_hint has expired, so this server will not send you back to it.", fronts, "")
	case back != "":
		u, _ := url.Parse(back) // registered: it parses
		if st := q.Get("state"); st != "" {
			v := u.Query()
			v.Set("state", st)
			u.RawQuery = v.Encode()
		}
		if len(fronts) > 0 { // the apps' front-channel pages load first, then the browser goes back
			return h.signedOut(c, true, "", fronts, u.String())
		}
		return c.Redirect(u.String(), http.StatusFound)
	}
	return h.signedOut(c, hint != "", "", fronts, "")
}

// endSSO ends the SSO session sid of project when it is this browser's (its SSO cookie
// names it): the session is revoked (so every app it signed in to hears by back-channel),
// the cookie cleared, and the console's cookies too when they are that session. It
// answers the front-channel logout URLs of the apps it had signed in to, read before the
// session ends.
func (h ssoCookies) endSSO(c *fiber.Ctx, project, sid string) ([]string, error) {
	if h.ssoHandle(c, project) != sid {
		return nil, nil
	}
	var fronts []string
	if h.appSessions != nil {
		var err error
		if fronts, err = h.appSessions.FrontChannel(c.UserContext(), sid); err != nil {
			return nil, err
		}
	}
	p, console, err := h.guard.OptionalSession(c)
	if err != nil {
		return nil, err
	}
	if _, err := h.sessions.Revoke(c.UserContext(), sid); err != nil {
		return nil, err
	}
	h.clearSSO(c, project)
	if console && p.SessionHandle == sid {
		guard.ClearSessionCookies(c, h.cfg)
	}
	return fronts, nil
}
