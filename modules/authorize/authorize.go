package authorize

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/oauthauthorization"
	"github.com/authcore/authcore/ent/oauthclient"
	"github.com/authcore/authcore/ent/oauthgrant"
	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/jsonbody"
	"github.com/authcore/authcore/platform/oauth"
	"github.com/authcore/authcore/platform/scope"
	"github.com/authcore/authcore/platform/secret"
)

// requestTTL is how long a person has between the host's redirect and their decision.
const requestTTL = 10 * time.Minute

// ConsentPath is the console page that signs the person in and asks them.
const ConsentPath = "/console/authorize"

// challengePattern is an S256 code_challenge: base64url of 32 bytes, unpadded.
var challengePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{43}$`)

const maxState = 1024

// authorize is GET /oauth/authorize (SPEC §16). Until the client and its redirect URI
// are known good, every error is a page here: redirecting to an unchecked URI would make
// this server an open redirector. After that, errors go back to the client with state
// and iss (RFC 9207), and a good request waits for the person on the consent page.
func (h *handler) authorize(c *fiber.Ctx) error {
	q, err := url.ParseQuery(string(c.Request().URI().QueryString()))
	if err != nil {
		return h.page(c, "The authorization request's query string cannot be read.")
	}
	for _, k := range []string{"client_id", "redirect_uri", "state", "response_type", "code_challenge", "code_challenge_method", "scope"} {
		if len(q[k]) > 1 {
			return h.page(c, "The authorization request gives "+k+" more than once.")
		}
	}
	clientID := q.Get("client_id")
	if clientID == "" {
		return h.page(c, "The authorization request names no client (client_id is missing).")
	}
	// Resolving a client may fetch its metadata document from anywhere, and parking a
	// request writes a row, for anyone who asks: both spend the address's sign-in budget
	// first (SPEC §9b). Past it the person sees so; the client is not yet known good, so
	// nothing goes back to it.
	if err := h.limits.Attempts.Take(httpserver.ClientIP(c)); err != nil {
		return h.page(c, "Too many authorization requests came from your address; wait a minute and try again.")
	}
	cl, err := h.clients.resolve(c.UserContext(), clientID)
	if err != nil {
		if e, ok := err.(errClient); ok {
			return h.page(c, "The client cannot be used: "+e.why+".")
		}
		return err
	}
	redirect := q.Get("redirect_uri")
	if redirect == "" && len(cl.RedirectURIs) == 1 {
		redirect = cl.RedirectURIs[0] // RFC 6749 §3.1.2.3: the one registered
	}
	if redirect == "" || !cl.redirectAllowed(redirect) {
		return h.page(c, "The redirect_uri is not one this client registered, so this server will not send you there.")
	}
	back := func(code, why string) error {
		return c.Redirect(h.backTo(redirect, url.Values{"error": {code}, "error_description": {why}, "state": q["state"]}), http.StatusFound)
	}
	switch {
	case q.Get("response_type") != "code":
		return back("unsupported_response_type", "response_type must be code")
	case q.Get("code_challenge") == "":
		return back("invalid_request", "code_challenge is required (PKCE, S256)")
	case q.Get("code_challenge_method") != "S256":
		return back("invalid_request", "code_challenge_method must be S256")
	case !challengePattern.MatchString(q.Get("code_challenge")):
		return back("invalid_request", "code_challenge must be the base64url S256 hash of the verifier")
	case len(q.Get("state")) > maxState:
		return back("invalid_request", "state is longer than 1024 characters")
	}
	scopes, ok := scope.Parse(q.Get("scope"))
	if !ok || len(q.Get("scope")) > maxScopeParamLen {
		return back("invalid_scope", "each scope must match "+scope.Pattern.String()+", separated by spaces")
	}
	if s := cl.refusedScope(scopes); s != "" {
		return back("invalid_scope", "the client did not register the scope "+s)
	}
	oidc, why := readOIDC(q)
	if why != "" {
		return back("invalid_request", why)
	}
	organization, why := readOrganization(q, cl.app())
	if why != "" {
		return back("invalid_request", why)
	}
	targets, err := oauth.Targets(q, false)
	if err != nil {
		return back("invalid_target", "resource must be an absolute https URI (http on loopback) without a fragment")
	}
	// An app's people are its project's tenant users (SPEC §25): its requests are for its
	// project, and a resource of another project is not one it may name.
	project := cl.ProjectID
	registered := make([]string, 0, len(targets)) // as the project spelled them: what aud carries
	for _, t := range targets {
		r, ok, err := h.resources.Lookup(c.UserContext(), t)
		if err != nil {
			return err
		}
		if !ok || (project != "" && r.ProjectID != project) {
			return back("invalid_target", "the resource is not registered with this server (or the resources belong to different projects, or to another project than the app's)")
		}
		project = r.ProjectID
		if !slices.Contains(registered, r.URI) {
			registered = append(registered, r.URI)
		}
		// A resource's scopes bound what its tokens may carry (SPEC §11).
		for _, s := range agentScopes(scopes) {
			if len(r.Scopes) > 0 && !scope.CoveredBy(r.Scopes, s) {
				return back("invalid_scope", "the resource "+r.URI+" does not allow the scope "+s)
			}
		}
	}
	// The host shown large is where the code will go: the redirect URI's (SPEC §9b).
	host := hostOf(redirect)
	name := cl.Name
	if name == "" {
		name = host
	}
	browser, err := h.browserOf(c)
	if err != nil {
		return err
	}
	// The request's prompt column also carries acr_values' second factor: it is a
	// requirement on the sign-in, read where prompt=login is (the column holds words).
	prompt := oidc.prompt
	if oidc.mfa {
		prompt = strings.TrimSpace(prompt + " " + acrMFA)
	}
	row, err := h.ent.OAuthAuthorization.Create().SetClientID(cl.ID).SetClientName(name).SetClientHost(host).
		SetClientURI(cl.URI).SetRedirectURI(redirect).SetState(q.Get("state")).SetCodeChallenge(q.Get("code_challenge")).
		SetScopes(nonNil(scopes)).SetResources(registered).SetProjectID(project).SetBrowser(secret.DigestOf(browser).Bytes()).
		SetNonce(oidc.nonce).SetPrompt(prompt).SetNillableMaxAge(oidc.maxAge).SetOrgID(organization).
		SetExpiresAt(h.clock.Now().Add(requestTTL)).Save(c.UserContext())
	if err != nil {
		return err
	}
	if cl.app() {
		if done, err := (ssoCookies{h}).singleSignOn(c, row, cl, back); done || err != nil {
			return err
		}
	} else if wants(oidc.prompt, "none") {
		return h.silently(c, row, back)
	}
	to := h.cfg.SelfURL() + ConsentPath + "?request=" + row.ID
	if cl.app() { // the console signs the person in to the app's tenant
		to += "&tenant=" + url.QueryEscape(cl.ProjectID)
	}
	if oidc.loginHint != "" {
		to += "&login_hint=" + url.QueryEscape(oidc.loginHint) // the sign-in form's email, if it must show
	}
	return c.Redirect(to, http.StatusFound)
}

// silently answers prompt=none (OIDC Core §3.1.2.1): with a code when the browser's
// session may have one without a question — signed in recently enough, allowed to
// approve, and a remembered grant covering the request — else with the error that says
// which question would have been asked.
func (h *handler) silently(c *fiber.Ctx, row *ent.OAuthAuthorization, back func(code, why string) error) error {
	ctx := c.UserContext()
	p, ok, err := h.guard.BrowserSession(c)
	if err != nil {
		return err
	}
	if !ok || stale(p.AuthTime, openedAt(row), h.clock.Now(), row.Prompt, row.MaxAge) {
		return back("login_required", "the person must sign in")
	}
	if row.ProjectID == "" && !personal(row) {
		return back("interaction_required", "the person must choose a project")
	}
	if !personal(row) {
		if refused, err := h.mayApprove(ctx, row.ProjectID, p.UserID, row.Scopes); err != nil {
			return err
		} else if refused != nil {
			return back("access_denied", refused.Message)
		}
	}
	g, err := h.grants.covering(ctx, approval{ClientID: row.ClientID, UserID: p.UserID, ProjectID: row.ProjectID, Scopes: row.Scopes, Resources: row.Resources})
	if err != nil {
		return err
	}
	if g == nil {
		return back("consent_required", "the person has not approved this application for this much")
	}
	to, err := h.issueCode(c, row, deciderOf(p), row.ProjectID)
	if err != nil {
		return err
	}
	return c.Redirect(to, http.StatusFound)
}

// decider is who decides a request and how they signed in.
type decider struct {
	UserID, TenantID string
	In               signIn
}

func deciderOf(p identity.Principal) decider {
	return decider{UserID: p.UserID, TenantID: p.TenantID, In: signInOf(p)}
}

// singleSignOn answers an app's request without the console when it can (SPEC §25):
// the browser's SSO session of the project is live, fresh enough for prompt and max_age,
// has the second factor acr_values asks for, and no consent is needed (a first-party app,
// or a remembered grant covering the request). Then it redirects with a code. With
// prompt=none it always answers, with the error OIDC Core §3.1.2.6 names for what would
// have been asked. done is false when the console must ask.
func (h ssoCookies) singleSignOn(c *fiber.Ctx, row *ent.OAuthAuthorization, cl client, back func(code, why string) error) (bool, error) {
	none := wants(row.Prompt, "none")
	handle, st, ok, err := h.ssoSession(c, cl.ProjectID)
	if err != nil {
		return true, err
	}
	if !ok || stale(st.AuthTime, openedAt(row), h.clock.Now(), row.Prompt, row.MaxAge) {
		if none {
			return true, back("login_required", "the person must sign in")
		}
		return false, nil
	}
	if wants(row.Prompt, acrMFA) && !hasMFA(st.AMR) {
		if none {
			return true, back("interaction_required", "the application asks for a second factor this sign-in did not use")
		}
		return false, nil
	}
	needs, why, err := h.needsConsent(c.UserContext(), row, cl, st.UserID)
	if err != nil {
		return true, err
	}
	if why != nil {
		if none {
			return true, back("access_denied", why.Message)
		}
		return false, nil
	}
	if needs || wants(row.Prompt, "consent") {
		if none {
			return true, back("consent_required", "the person has not approved this application for this much")
		}
		return false, nil
	}
	// The organisation, unless the person must pick one (SPEC §26): the console asks.
	org, pick, err := h.svc.orgChoice(c.UserContext(), cl.ProjectID, st.UserID, row.OrgID, "", st.OrgID)
	if errors.Is(err, errNotOrgMember) {
		return true, back("access_denied", errNotOrgMember.Message)
	} else if err != nil {
		return true, err
	}
	if pick != nil {
		if none {
			return true, back("interaction_required", "the person belongs to several organizations and must choose one")
		}
		return false, nil
	}
	// Bound to the session as the console would bind it, then decided.
	if _, err := h.ent.OAuthAuthorization.UpdateOneID(row.ID).SetSessionHandle(handle).Save(c.UserContext()); err != nil {
		return true, err
	}
	at := st.AuthTime
	to, err := h.issueCode(c, row, decider{UserID: st.UserID, TenantID: st.TenantID, In: signIn{AuthTime: &at, AMR: st.AMR, SID: handle, OrgID: org}}, cl.ProjectID)
	if err != nil {
		return true, err
	}
	return true, c.Redirect(to, http.StatusFound)
}

// needsConsent says whether an app's request needs the person's consent: never for a
// first-party app, else unless a live grant covers it. why is set when the request may
// not be approved at all (a scope the project's policy refuses).
func (h *handler) needsConsent(ctx context.Context, row *ent.OAuthAuthorization, cl client, userID string) (bool, *apperr.Error, error) {
	if why, err := h.policyRefuses(ctx, row.ProjectID, row.Scopes); err != nil || why != nil {
		return false, why, err
	}
	if cl.FirstParty {
		return false, nil, nil
	}
	g, err := h.grants.covering(ctx, approval{ClientID: row.ClientID, UserID: userID, ProjectID: row.ProjectID, Scopes: row.Scopes, Resources: row.Resources})
	return g == nil, nil, err
}

// policyRefuses is why the project's policy refuses one of scopes (nil when it allows
// them all): a tenant user consents for themselves, within what the project allows.
func (h *handler) policyRefuses(ctx context.Context, project string, scopes []string) (*apperr.Error, error) {
	if len(agentScopes(scopes)) == 0 {
		return nil, nil
	}
	pol, err := h.policies.Policy(ctx, project)
	if err != nil {
		return nil, err
	}
	for _, s := range agentScopes(scopes) {
		if !pol.Allows(s) {
			return apperr.Forbidden("The project's policy does not allow the scope " + s + "."), nil
		}
	}
	return nil, nil
}

// personal reports whether a request that names no project asks only for the person's
// identity (SPEC §25): the person consents for themselves, no project admin needed.
func personal(row *ent.OAuthAuthorization) bool {
	return row.ProjectID == "" && len(row.Resources) == 0 && len(agentScopes(row.Scopes)) == 0
}

// openedAt is when a request was parked, by the server's clock (created_at is the
// store's): it expires requestTTL later.
func openedAt(row *ent.OAuthAuthorization) time.Time { return row.ExpiresAt.Add(-requestTTL) }

// browserCookie marks the browser that opened authorization requests (SPEC §9b): only
// that browser is shown them. Scoped to the consent API's path, HttpOnly, as long as a
// request lives.
const browserCookie = "ac_authz"

// browserOf is the browser's mark: the one it already carries, so that one browser may
// hold several requests at once, or a new one set on this answer.
func (h *handler) browserOf(c *fiber.Ctx) (string, error) {
	v := strings.Clone(c.Cookies(browserCookie))
	if len(v) != browserMarkLen { // only its digest is kept: what it holds does not matter
		var err error
		if v, err = secret.RandomString(browserMarkLen, ""); err != nil {
			return "", err
		}
	}
	c.Cookie(&fiber.Cookie{Name: browserCookie, Value: v, Path: requestsPath, MaxAge: int(requestTTL.Seconds()),
		HTTPOnly: true, SameSite: fiber.CookieSameSiteLaxMode, Secure: !h.cfg.InsecureCookies})
	return v, nil
}

const browserMarkLen = 32 // base62: 190 bits

// requestsPath is where the consent page reads and decides requests.
const requestsPath = "/v1/oauth/authorizations"

// idHostOf is the host of a metadata document client's URL when it is not host, the
// redirect URI's: the consent screen then names both. "" for anything else.
func idHostOf(clientID, host string) string {
	if !strings.HasPrefix(clientID, "https://") {
		return ""
	}
	u, err := url.Parse(clientID)
	if err != nil {
		return ""
	}
	if h := displayHost(u); h != host {
		return h
	}
	return ""
}

// nullable is s, or JSON null when empty.
func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// backTo is redirect with the answer's parameters added to its own query, and iss.
func (h *handler) backTo(redirect string, params url.Values) string {
	u, _ := url.Parse(redirect) // checked against the client's: it parses
	q := u.Query()
	for k, v := range params {
		if len(v) > 0 && v[0] != "" {
			q[k] = v
		}
	}
	q.Set("iss", h.cfg.SelfURL())
	u.RawQuery = q.Encode()
	return u.String()
}

// errRequestGone is an authorization request that expired, was decided, or never was.
var errRequestGone = apperr.New(apperr.KindNotFound, "authorization_not_found",
	"this authorization request expired or was answered already; start again from the application")

// pending reads an undecided, unexpired authorization request for the caller: only the
// browser that opened it, and only the session that first looked at it there, may see or
// decide it (SPEC §9b); to anyone else it does not exist. A request id that leaked (a
// log, a Referer) is no use to another person.
func (h *handler) pending(c *fiber.Ctx, id string) (*ent.OAuthAuthorization, error) {
	ctx := c.UserContext()
	p, _ := guard.PrincipalOf(c)
	row, err := h.ent.OAuthAuthorization.Get(ctx, id)
	if ent.IsNotFound(err) {
		return nil, errRequestGone
	}
	if err != nil {
		return nil, err
	}
	mark := secret.DigestOf(c.Cookies(browserCookie))
	if row.DecidedAt != nil || !h.clock.Now().Before(row.ExpiresAt) || !secret.Equal(mark.Bytes(), row.Browser) {
		return nil, errRequestGone
	}
	// An app's request is its project's tenant users' to decide (SPEC §25), any other
	// request a dashboard user's: a tenant user of one project never decides for another
	// project's app.
	if want := h.tenantOf(ctx, row); p.TenantID != want {
		return nil, errWrongTenant(want)
	}
	// A sign-in older than the request allows is asked to sign in again before the
	// request is bound to it: the fresh session is the one that will hold it.
	if stale(p.AuthTime, openedAt(row), h.clock.Now(), row.Prompt, row.MaxAge) {
		return nil, errSignInAgain
	}
	if wants(row.Prompt, acrMFA) && !hasMFA(signInOf(p).AMR) {
		return nil, errSecondFactor
	}
	if row.SessionHandle == nil {
		// The first session wins; a concurrent second one reads who did.
		if _, err := h.ent.OAuthAuthorization.Update().Where(oauthauthorization.ID(row.ID), oauthauthorization.SessionHandleIsNil()).
			SetSessionHandle(p.SessionHandle).Save(ctx); err != nil {
			return nil, err
		}
		if row, err = h.ent.OAuthAuthorization.Get(ctx, id); err != nil {
			return nil, err
		}
	}
	if row.SessionHandle == nil || *row.SessionHandle != p.SessionHandle {
		return nil, errRequestGone
	}
	return row, nil
}

// tenantOf is the tenant whose session may decide row: the app's project's, else the
// dashboard's.
func (h *handler) tenantOf(ctx context.Context, row *ent.OAuthAuthorization) string {
	if row.ProjectID == "" {
		return identity.PublicTenant
	}
	if cl, err := h.clients.resolve(ctx, row.ClientID); err == nil && cl.app() {
		return cl.ProjectID
	}
	return identity.PublicTenant
}

// errWrongTenant answers a session of another tenant than the request's: the console
// signs the person in to tenant and asks again.
func errWrongTenant(tenant string) error {
	return apperr.New(apperr.KindForbidden, "tenant_session_required",
		"this application signs in the people of another tenant; sign in there to continue").With("tenantId", tenant)
}

// errSecondFactor asks for a sign-in with a second factor (acr_values=urn:authcore:acr:mfa).
var errSecondFactor = apperr.New(apperr.KindForbidden, "mfa_required",
	"the application asks for a sign-in with a second factor; sign in again with one")

// csrf binds a consent decision to the request and the person the consent page showed
// it to. Derived, not stored: nothing to leak from the store.
func (h *handler) csrf(requestID, userID string) string {
	return h.keys.MAC("oauth_consent", []byte(requestID+"\x00"+userID))
}

// consentView is what the consent page shows (GET /v1/oauth/authorizations/{id}).
type consentView struct {
	ID         string   `json:"id"`
	Client     any      `json:"client"`
	Scopes     []string `json:"scopes"`
	Resources  []string `json:"resources"`
	ProjectID  *string  `json:"projectId"`
	Remembered bool     `json:"remembered"`
	Granted    []string `json:"grantedScopes"`
	CanApprove bool     `json:"canApprove"`
	Reason     *string  `json:"reason"`
	CSRF       string   `json:"csrfToken"`
	ExpiresAt  string   `json:"expiresAt"`
	// Personal is a request the person consents to for themselves (SPEC §25): an app's
	// for its tenant user, or identity scopes only with no resource; no project to choose.
	Personal bool `json:"personal"`
	// TenantID is the tenant whose people this request signs in.
	TenantID string `json:"tenantId"`
	// OrgID is the organisation the sign-in is for (SPEC §26) when it is decided: the
	// request's organization=, the person's only one, or their session's active one.
	OrgID *string `json:"orgId"`
	// Orgs are the person's organisations when they must pick one (decide's orgId).
	Orgs []identity.OrgMembership `json:"orgs"`
}

// consent describes a pending request to the signed-in person: who asks, for what, and
// whether they may approve (project admins only) or have approved it already.
func (h *handler) consent(c *fiber.Ctx) error {
	p, _ := guard.PrincipalOf(c)
	row, err := h.pending(c, c.Params("id"))
	if err != nil {
		return err
	}
	v := consentView{ID: row.ID, Scopes: nonNil(row.Scopes), Resources: nonNil(row.Resources), CanApprove: true, Granted: []string{},
		CSRF: h.csrf(row.ID, p.UserID), ExpiresAt: row.ExpiresAt.UTC().Format(time.RFC3339),
		Client: fiber.Map{"id": row.ClientID, "name": row.ClientName, "host": row.ClientHost, "idHost": nullable(idHostOf(row.ClientID, row.ClientHost)),
			"redirectUri": row.RedirectURI, "clientUri": nullable(row.ClientURI)}}
	v.TenantID = h.tenantOf(c.UserContext(), row)
	switch {
	case v.TenantID != identity.PublicTenant || personal(row):
		if err := h.personalView(c.UserContext(), row, p.UserID, &v); err != nil {
			return err
		}
		if v.TenantID != identity.PublicTenant {
			if err := h.svc.orgView(c.UserContext(), row, p, &v); err != nil {
				return err
			}
		}
	case row.ProjectID != "":
		pid := row.ProjectID
		v.ProjectID = &pid
		if refused, err := h.mayApprove(c.UserContext(), row.ProjectID, p.UserID, row.Scopes); err != nil {
			return err
		} else if refused != nil {
			v.CanApprove, v.Reason = false, &refused.Message
		} else {
			a := approval{ClientID: row.ClientID, UserID: p.UserID, ProjectID: row.ProjectID, Scopes: row.Scopes, Resources: row.Resources}
			g, err := h.grants.covering(c.UserContext(), a)
			if err != nil {
				return err
			}
			v.Remembered = g != nil && !wants(row.Prompt, "consent")
			// Scope step-up (SPEC §21): what a live grant holds already, so the page
			// asks only about the rest.
			if held, err := h.grants.held(c.UserContext(), a); err != nil {
				return err
			} else {
				v.Granted = held
			}
		}
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.JSON(v)
}

// personalView fills v for a request the person decides for themselves (SPEC §25): an
// app's (remembered when it is first-party or a grant covers it) or an identity-only one.
func (h *handler) personalView(ctx context.Context, row *ent.OAuthAuthorization, userID string, v *consentView) error {
	v.Personal = true
	if row.ProjectID != "" {
		pid := row.ProjectID
		v.ProjectID = &pid
	}
	if why, err := h.policyRefuses(ctx, row.ProjectID, row.Scopes); err != nil {
		return err
	} else if why != nil {
		v.CanApprove, v.Reason = false, &why.Message
		return nil
	}
	a := approval{ClientID: row.ClientID, UserID: userID, ProjectID: row.ProjectID, Scopes: row.Scopes, Resources: row.Resources}
	g, err := h.grants.covering(ctx, a)
	if err != nil {
		return err
	}
	firstParty := false
	if cl, err := h.clients.resolve(ctx, row.ClientID); err == nil && cl.app() {
		firstParty = cl.FirstParty
	}
	v.Remembered = (firstParty || g != nil) && !wants(row.Prompt, "consent")
	held, err := h.grants.held(ctx, a)
	if err != nil {
		return err
	}
	v.Granted = held
	return nil
}

// mayApprove is why the person may not approve scopes for project (nil when they may):
// the rules of the project's admin routes (SPEC §9b) — an admin, with a second factor
// where the project requires one — and only scopes the project's policy allows.
func (h *handler) mayApprove(ctx context.Context, project, userID string, scopes []string) (*apperr.Error, error) {
	role, ok, err := h.members.Role(ctx, project, userID)
	if err != nil {
		return nil, err
	}
	if !ok {
		return apperr.Forbidden("You are not a member of the project that registered this resource."), nil
	}
	if role != identity.RoleAdmin {
		return apperr.Forbidden("Only a project admin may connect applications; your role on this project is " + role + "."), nil
	}
	var refused *apperr.Error
	if err := h.guard.RequireFactor(ctx, project, userID); errors.As(err, &refused) {
		return refused, nil
	} else if err != nil {
		return nil, err
	}
	pol, err := h.policies.Policy(ctx, project)
	if err != nil {
		return nil, err
	}
	for _, s := range agentScopes(scopes) {
		if !pol.Allows(s) {
			return apperr.Forbidden("The project's policy does not allow the scope " + s + "."), nil
		}
	}
	return nil, nil
}

// errSignInAgain asks the person to sign in again: the application asked for a sign-in
// fresher than theirs (prompt=login, max_age). The console signs them in and asks again.
var errSignInAgain = apperr.New(apperr.KindForbidden, "login_required",
	"the application asks you to sign in again before you decide")

var errCSRF = apperr.New(apperr.KindForbidden, "csrf_rejected", "the consent form's token does not match this request and person")

// decide is the person's answer (POST /v1/oauth/authorizations/{id}): { decision:
// approve|deny, csrfToken, projectId? }. It answers where to send the browser: back to
// the client with a code, or with access_denied.
func (h *handler) decide(c *fiber.Ctx) error {
	p, _ := guard.PrincipalOf(c)
	f := jsonbody.Read(c.Body())
	decision := f.RequiredString("decision")
	if decision != "" && decision != "approve" && decision != "deny" {
		f.Fail("decision", "must be approve or deny")
	}
	token := f.RequiredString("csrfToken")
	chosen, st := f.String("projectId")
	if st == jsonbody.WrongType {
		f.Fail("projectId", "must be a string")
	}
	pickedOrg, st := f.String("orgId")
	if st == jsonbody.WrongType || (st == jsonbody.OK && !orgIDPattern.MatchString(pickedOrg)) {
		f.Fail("orgId", "must be an organization id (org_…) of yours")
	}
	if err := f.Err(); err != nil {
		return err
	}
	ctx := c.UserContext()
	row, err := h.pending(c, c.Params("id"))
	if err != nil {
		return err
	}
	if !secret.Equal([]byte(token), []byte(h.csrf(row.ID, p.UserID))) {
		return errCSRF
	}
	project := row.ProjectID
	// An identity-only request is the person's own unless a dashboard user chooses to
	// connect it to a project (then a project admin's approval, as before SPEC §25).
	self := h.tenantOf(ctx, row) != identity.PublicTenant || (personal(row) && chosen == "")
	if self {
		if chosen != "" && chosen != project {
			return apperr.BadRequest("project_fixed", "the app decides the project: "+project)
		}
		if decision == "approve" {
			if why, err := h.policyRefuses(ctx, project, row.Scopes); err != nil {
				return err
			} else if why != nil {
				return why
			}
		}
	} else if project == "" {
		project = chosen
	} else if chosen != "" && chosen != project {
		return apperr.BadRequest("project_fixed", "the resource decides the project: "+project)
	}
	if decision == "approve" && !self {
		if project == "" {
			return apperr.Validation(apperr.Issue{Field: "projectId", Reason: "required: choose the project to connect the application to"})
		}
		if refused, err := h.mayApprove(ctx, project, p.UserID, row.Scopes); err != nil {
			return err
		} else if refused != nil {
			return refused
		}
		// Approving hands an app credentials: it wants a recent authentication, in the
		// order the project's admin routes check it (SPEC §17, §9b).
		if err := h.guard.CheckRecent(c); err != nil {
			return err
		}
	}
	d := deciderOf(p)
	if self && decision == "approve" && d.TenantID != identity.PublicTenant {
		org, pick, err := h.svc.orgChoice(ctx, project, p.UserID, row.OrgID, pickedOrg, activeOrg(p))
		if err != nil {
			return err
		}
		if pick != nil {
			return errPickOrg
		}
		d.In.OrgID = org
	}
	var to string
	if decision == "deny" {
		n, err := h.ent.OAuthAuthorization.Update().Where(oauthauthorization.ID(row.ID), oauthauthorization.DecidedAtIsNil()).
			SetDecidedAt(h.clock.Now()).Save(ctx)
		if err != nil {
			return err
		}
		if n == 0 {
			return errRequestGone
		}
		to = h.backTo(row.RedirectURI, url.Values{"error": {"access_denied"}, "error_description": {"the person denied the request"}, "state": {row.State}})
	} else if to, err = h.issueCode(c, row, d, project); err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.JSON(fiber.Map{"redirectTo": to})
}

// issueCode decides row for p: the grant approved (or widened) on project, a code for
// it, and where that sends the browser. The request is decided once: of two concurrent
// decisions, one wins.
func (h *handler) issueCode(c *fiber.Ctx, row *ent.OAuthAuthorization, p decider, project string) (string, error) {
	ctx := c.UserContext()
	cl, err := h.clients.resolve(ctx, row.ClientID)
	var unusable errClient
	if errors.As(err, &unusable) {
		return "", errRequestGone // deleted since the request was parked
	} else if err != nil {
		return "", err
	}
	// A tenant user signed in to an app joins the browser's SSO session of its project
	// (SPEC §25); nobody else gets one.
	sso := cl.app() && p.TenantID == cl.ProjectID && project == cl.ProjectID && p.In.SID != ""
	var to string
	err = database.WithTx(ctx, h.ent, func(tx *ent.Tx) error {
		n, err := tx.OAuthAuthorization.Update().Where(oauthauthorization.ID(row.ID), oauthauthorization.DecidedAtIsNil()).
			SetDecidedAt(h.clock.Now()).Save(ctx)
		if err != nil {
			return err
		}
		if n == 0 {
			return errRequestGone
		}
		g, err := h.grants.approve(ctx, tx, approval{ClientID: row.ClientID, ClientName: row.ClientName, ClientHost: row.ClientHost,
			UserID: p.UserID, ProjectID: project, Scopes: row.Scopes, Resources: row.Resources}, httpserver.Origin(c))
		if err != nil {
			return err
		}
		code, err := secret.NewToken(codeKind)
		if err != nil {
			return err
		}
		in := p.In
		if sso && h.appSessions != nil {
			if err := h.appSessions.Joined(ctx, tx, in.SID, cl.ID, p.UserID, cl.ProjectID); err != nil {
				return err
			}
		}
		if err := tx.OAuthCode.Create().SetDigest(secret.DigestOf(code).Bytes()).SetGrantID(g.ID).SetClientID(row.ClientID).
			SetRedirectURI(row.RedirectURI).SetCodeChallenge(row.CodeChallenge).SetScopes(nonNil(row.Scopes)).
			SetResources(nonNil(row.Resources)).SetExpiresAt(h.clock.Now().Add(codeTTL)).
			SetNonce(row.Nonce).SetNillableAuthTime(in.AuthTime).SetAmr(in.AMR).SetSid(in.SID).SetOrgID(in.OrgID).Exec(ctx); err != nil {
			return err
		}
		if strings.HasPrefix(row.ClientID, registeredPrefix) { // in use: not to be pruned
			if err := tx.OAuthClient.Update().Where(oauthclient.ID(row.ClientID)).SetLastUsedAt(h.clock.Now()).Exec(ctx); err != nil {
				return err
			}
		}
		to = h.backTo(row.RedirectURI, url.Values{"code": {code}, "state": {row.State}})
		return nil
	})
	if err == nil && sso {
		(ssoCookies{h}).setSSO(c, cl.ProjectID, p.In.SID)
	}
	return to, err
}

// mine lists the caller's grants, live first by recency.
func (h *handler) mine(c *fiber.Ctx) error {
	p, _ := guard.PrincipalOf(c)
	rows, err := h.ent.OAuthGrant.Query().Where(oauthgrant.UserID(p.UserID), oauthgrant.RevokedAtIsNil()).Order(ent.Desc("id")).Limit(500).All(c.UserContext())
	return h.list(c, rows, err)
}

// project lists the grants people approved for the route's project (admins).
func (h *handler) project(c *fiber.Ctx) error {
	rows, err := h.ent.OAuthGrant.Query().Where(oauthgrant.ProjectID(guard.ProjectOf(c)), oauthgrant.RevokedAtIsNil()).Order(ent.Desc("id")).Limit(500).All(c.UserContext())
	return h.list(c, rows, err)
}

func (h *handler) list(c *fiber.Ctx, rows []*ent.OAuthGrant, err error) error {
	if err != nil {
		return err
	}
	out := make([]grantView, 0, len(rows))
	for _, r := range rows {
		out = append(out, viewOf(r))
	}
	return c.JSON(fiber.Map{"grants": out})
}

var errNoGrant = apperr.NotFound("no such live grant")

// revokeMine revokes one of the caller's grants; revokeProject one of the project's.
func (h *handler) revokeMine(c *fiber.Ctx) error {
	p, _ := guard.PrincipalOf(c)
	return h.revokeWhere(c, func(g *ent.OAuthGrant) bool { return g.UserID == p.UserID })
}

func (h *handler) revokeProject(c *fiber.Ctx) error {
	project := guard.ProjectOf(c)
	return h.revokeWhere(c, func(g *ent.OAuthGrant) bool { return g.ProjectID == project })
}

func (h *handler) revokeWhere(c *fiber.Ctx, owns func(*ent.OAuthGrant) bool) error {
	id := strings.Clone(c.Params("grantId"))
	g, err := h.ent.OAuthGrant.Get(c.UserContext(), id)
	if ent.IsNotFound(err) || (err == nil && (!owns(g) || g.RevokedAt != nil)) {
		return errNoGrant
	}
	if err != nil {
		return err
	}
	ok, err := h.grants.revoke(c.UserContext(), id, ending{Actor: guard.ActorOf(c), Reason: "revoked", Origin: httpserver.Origin(c)})
	if err != nil {
		return err
	}
	if !ok {
		return errNoGrant
	}
	return c.JSON(fiber.Map{"revoked": true, "grantId": id})
}
