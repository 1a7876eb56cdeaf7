package authorize

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/oauthauthorization"
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
	targets, err := oauth.Targets(q, false)
	if err != nil {
		return back("invalid_target", "resource must be an absolute https URI (http on loopback) without a fragment")
	}
	project := ""
	for _, t := range targets {
		r, ok, err := h.resources.Lookup(c.UserContext(), t)
		if err != nil {
			return err
		}
		if !ok || (project != "" && r.ProjectID != project) {
			return back("invalid_target", "the resource is not registered with this server (or the resources belong to different projects)")
		}
		project = r.ProjectID
		// A resource's scopes bound what its tokens may carry (SPEC §11).
		for _, s := range scopes {
			if len(r.Scopes) > 0 && !scope.CoveredBy(r.Scopes, s) {
				return back("invalid_scope", "the resource "+r.URI+" does not allow the scope "+s)
			}
		}
	}
	name := cl.Name
	if name == "" {
		name = cl.Host
	}
	// Parking a request writes a row for anyone who asks: it spends the address's sign-in
	// budget, and rows expire in ten minutes. Past it the client hears so (RFC 6749 §4.1.2.1).
	if err := h.limits.Attempts.Take(httpserver.ClientIP(c)); err != nil {
		return back("temporarily_unavailable", "too many authorization requests from this address; retry later")
	}
	row, err := h.ent.OAuthAuthorization.Create().SetClientID(cl.ID).SetClientName(name).SetClientHost(cl.Host).
		SetRedirectURI(redirect).SetState(q.Get("state")).SetCodeChallenge(q.Get("code_challenge")).
		SetScopes(nonNil(scopes)).SetResources(nonNil(targets)).SetProjectID(project).
		SetExpiresAt(h.clock.Now().Add(requestTTL)).Save(c.UserContext())
	if err != nil {
		return err
	}
	return c.Redirect(h.cfg.SelfURL()+ConsentPath+"?request="+row.ID, http.StatusFound)
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

// pending reads an undecided, unexpired authorization request.
func (h *handler) pending(ctx context.Context, id string) (*ent.OAuthAuthorization, error) {
	row, err := h.ent.OAuthAuthorization.Get(ctx, id)
	if ent.IsNotFound(err) {
		return nil, errRequestGone
	}
	if err != nil {
		return nil, err
	}
	if row.DecidedAt != nil || !h.clock.Now().Before(row.ExpiresAt) {
		return nil, errRequestGone
	}
	return row, nil
}

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
	CanApprove bool     `json:"canApprove"`
	Reason     *string  `json:"reason"`
	CSRF       string   `json:"csrfToken"`
	ExpiresAt  string   `json:"expiresAt"`
}

// consent describes a pending request to the signed-in person: who asks, for what, and
// whether they may approve (project admins only) or have approved it already.
func (h *handler) consent(c *fiber.Ctx) error {
	p, _ := guard.PrincipalOf(c)
	row, err := h.pending(c.UserContext(), c.Params("id"))
	if err != nil {
		return err
	}
	v := consentView{ID: row.ID, Scopes: nonNil(row.Scopes), Resources: nonNil(row.Resources), CanApprove: true,
		CSRF: h.csrf(row.ID, p.UserID), ExpiresAt: row.ExpiresAt.UTC().Format(time.RFC3339),
		Client: fiber.Map{"id": row.ClientID, "name": row.ClientName, "host": row.ClientHost, "redirectUri": row.RedirectURI}}
	if row.ProjectID != "" {
		pid := row.ProjectID
		v.ProjectID = &pid
		if why, err := h.mayApprove(c.UserContext(), row.ProjectID, p.UserID, row.Scopes); err != nil {
			return err
		} else if why != "" {
			v.CanApprove, v.Reason = false, &why
		} else {
			g, err := h.grants.covering(c.UserContext(), approval{ClientID: row.ClientID, UserID: p.UserID, ProjectID: row.ProjectID, Scopes: row.Scopes, Resources: row.Resources})
			if err != nil {
				return err
			}
			v.Remembered = g != nil
		}
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.JSON(v)
}

// mayApprove says why the person may not approve scopes for project ("" when they may):
// only a project admin approves, and only scopes the project's policy allows.
func (h *handler) mayApprove(ctx context.Context, project, userID string, scopes []string) (string, error) {
	role, ok, err := h.members.Role(ctx, project, userID)
	if err != nil {
		return "", err
	}
	if !ok {
		return "You are not a member of the project that registered this resource.", nil
	}
	if role != identity.RoleAdmin {
		return "Only a project admin may connect applications; your role on this project is " + role + ".", nil
	}
	pol, err := h.policies.Policy(ctx, project)
	if err != nil {
		return "", err
	}
	for _, s := range scopes {
		if !pol.Allows(s) {
			return "The project's policy does not allow the scope " + s + ".", nil
		}
	}
	return "", nil
}

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
	if err := f.Err(); err != nil {
		return err
	}
	ctx := c.UserContext()
	row, err := h.pending(ctx, c.Params("id"))
	if err != nil {
		return err
	}
	if !secret.Equal([]byte(token), []byte(h.csrf(row.ID, p.UserID))) {
		return errCSRF
	}
	project := row.ProjectID
	if project == "" {
		project = chosen
	} else if chosen != "" && chosen != project {
		return apperr.BadRequest("project_fixed", "the resource decides the project: "+project)
	}
	if decision == "approve" {
		// Approving hands an app credentials: it wants a recent authentication (SPEC §17).
		if err := h.guard.CheckRecent(c); err != nil {
			return err
		}
		if project == "" {
			return apperr.Validation(apperr.Issue{Field: "projectId", Reason: "required: choose the project to connect the application to"})
		}
		if why, err := h.mayApprove(ctx, project, p.UserID, row.Scopes); err != nil {
			return err
		} else if why != "" {
			return apperr.Forbidden(why)
		}
	}
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
		if decision == "deny" {
			to = h.backTo(row.RedirectURI, url.Values{"error": {"access_denied"}, "error_description": {"the person denied the request"}, "state": {row.State}})
			return nil
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
		if err := tx.OAuthCode.Create().SetDigest(secret.DigestOf(code).Bytes()).SetGrantID(g.ID).SetClientID(row.ClientID).
			SetRedirectURI(row.RedirectURI).SetCodeChallenge(row.CodeChallenge).SetScopes(nonNil(row.Scopes)).
			SetResources(nonNil(row.Resources)).SetExpiresAt(h.clock.Now().Add(codeTTL)).Exec(ctx); err != nil {
			return err
		}
		to = h.backTo(row.RedirectURI, url.Values{"code": {code}, "state": {row.State}})
		return nil
	})
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.JSON(fiber.Map{"redirectTo": to})
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
