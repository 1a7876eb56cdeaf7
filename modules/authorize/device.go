package authorize

import (
	"cmp"
	"context"
	"crypto/rand"
	"math/big"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/time/rate"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/deviceauthorization"
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

// The device authorization grant (RFC 8628, SPEC §25): a CLI, a TV or an agent's CLI asks
// for a device code and shows the person a user code; the person signs in on the console
// (/console/device), sees the app and what it asks, and approves or denies; the device
// polls the token endpoint until then.

const (
	deviceGrantType = "urn:ietf:params:oauth:grant-type:device_code"
	// DevicePath is the console page where the person enters the user code.
	DevicePath       = "/console/device"
	deviceAuthPath   = "/v1/oauth/device_authorization"
	deviceTTL        = 10 * time.Minute
	devicePoll       = 5 // seconds, RFC 8628 §3.2's default
	deviceCodeKind   = "dvc"
	userCodeAlphabet = "BCDFGHJKLMNPQRSTVWXZ" // no vowels: no words; RFC 8628 §6.1
	userCodeLen      = 8
	// wrongCodes is how many wrong user codes one browser (its session) and one address
	// may try in a device code's lifetime: 20^8 codes against 5 guesses per ten minutes.
	wrongCodes = 5
)

// deviceMetadata is what RFC 8628 §4 adds to the metadata document.
func deviceMetadata(issuer string) map[string]any {
	return map[string]any{"device_authorization_endpoint": issuer + deviceAuthPath}
}

// newUserCode is eight letters of userCodeAlphabet, uniform.
func newUserCode() (string, error) {
	var b strings.Builder
	n := big.NewInt(int64(len(userCodeAlphabet)))
	for range userCodeLen {
		i, err := rand.Int(rand.Reader, n)
		if err != nil {
			return "", err
		}
		b.WriteByte(userCodeAlphabet[i.Int64()])
	}
	return b.String(), nil
}

// normalUserCode is a typed user code as stored: upper case, without the dash or spaces
// people type (RFC 8628 §6.1).
func normalUserCode(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '-' || r == ' ':
			return -1
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		}
		return r
	}, s)
}

func shownUserCode(code string) string { return code[:4] + "-" + code[4:] }

// userCodeDigest is what is stored of a user code: typed codes are looked up by it.
func userCodeDigest(code string) []byte { return secret.DigestOf("user_code:" + code).Bytes() }

// deviceAuthorization is POST /v1/oauth/device_authorization (RFC 8628 §3.1).
func (h devices) deviceAuthorization(c *fiber.Ctx) error {
	c.Set(fiber.HeaderCacheControl, "no-store")
	form, err := url.ParseQuery(string(c.Body()))
	if err != nil || !strings.HasPrefix(c.Get(fiber.HeaderContentType), formType) {
		return oauth.InvalidRequest("send the request as application/x-www-form-urlencoded")
	}
	for k, v := range form {
		if len(v) > 1 && k != "resource" {
			return oauth.InvalidRequest(k + " is given more than once")
		}
	}
	if err := h.limits.Attempts.Take(httpserver.ClientIP(c)); err != nil {
		return err
	}
	ctx := identity.WithIssuer(c.UserContext(), h.cfg.SelfURL())
	creds, err := oauth.ClientCredentials(c.Get(fiber.HeaderAuthorization), form)
	if err != nil {
		return err
	}
	var authenticated *oauth.Client
	if creds.Presented() {
		cl, err := h.clientAuth.AuthenticateClient(ctx, creds, deviceAuthPath)
		if err != nil {
			return err
		}
		authenticated = &cl
	}
	cl, err := h.svc.clientOf(ctx, oauth.Request{Form: form, Client: authenticated})
	if err != nil {
		return err
	}
	if !slices.Contains(cl.GrantTypes, deviceGrantType) {
		return oauth.Error(apperr.KindInvalid, "unauthorized_client", "the client did not register the grant type "+deviceGrantType)
	}
	scopes, ok := scope.Parse(form.Get("scope"))
	if !ok || len(form.Get("scope")) > maxScopeParamLen {
		return oauth.Error(apperr.KindInvalid, "invalid_scope", "each scope must match "+scope.Pattern.String()+", separated by spaces")
	}
	if s := cl.refusedScope(scopes); s != "" {
		return oauth.Error(apperr.KindInvalid, "invalid_scope", "the client did not register the scope "+s)
	}
	targets, err := oauth.Targets(form, false)
	if err != nil {
		return err
	}
	project, tenant := "", ""
	if cl.app() {
		project, tenant = cl.ProjectID, cl.ProjectID
	}
	registered := []string{}
	for _, t := range targets {
		r, ok, err := h.resources.Lookup(ctx, t)
		if err != nil {
			return err
		}
		if !ok || (project != "" && r.ProjectID != project) {
			return oauth.Error(apperr.KindInvalid, "invalid_target", "the resource is not registered with this server (or the resources belong to different projects)")
		}
		project = r.ProjectID
		if !slices.Contains(registered, r.URI) {
			registered = append(registered, r.URI)
		}
	}
	if project == "" {
		// A host's own client acts at a project's resource, approved by its admin (SPEC
		// §16); without one there is no project to approve it for.
		return oauth.Error(apperr.KindInvalid, "invalid_target", "name the resource the device will call (its project's admin approves it)")
	}
	device, err := secret.NewToken(deviceCodeKind)
	if err != nil {
		return err
	}
	user, err := newUserCode()
	if err != nil {
		return err
	}
	now := h.clock.Now()
	if err := h.ent.DeviceAuthorization.Create().SetDeviceCodeDigest(secret.DigestOf(device).Bytes()).SetUserCodeDigest(userCodeDigest(user)).
		SetClientID(cl.ID).SetClientName(cmpName(cl)).SetScopes(nonNil(scopes)).SetResources(registered).SetProjectID(project).SetTenantID(tenant).
		SetExpiresAt(now.Add(deviceTTL)).SetInterval(devicePoll).Exec(ctx); err != nil {
		return err
	}
	verify := h.cfg.SelfURL() + DevicePath
	if tenant != "" {
		verify += "?tenant=" + url.QueryEscape(tenant) // the console signs in the app's people
	}
	sep := "?"
	if tenant != "" {
		sep = "&"
	}
	return c.JSON(fiber.Map{"device_code": device, "user_code": shownUserCode(user), "verification_uri": verify,
		"verification_uri_complete": verify + sep + "user_code=" + shownUserCode(user), "expires_in": int(deviceTTL.Seconds()), "interval": devicePoll})
}

func cmpName(cl client) string {
	if cl.Name != "" {
		return cl.Name
	}
	return cl.ID
}

// wrongTries bounds the wrong user codes a browser and an address may try: a bucket of
// wrongCodes refilled over a device code's lifetime, in a bounded LRU as the other
// per-client budgets are (platform/ratelimit), spent only by a wrong code.
type wrongTries struct {
	buckets *lru.Cache[string, *rate.Limiter]
}

func newWrongTries() *wrongTries {
	c, _ := lru.New[string, *rate.Limiter](100_000) // a positive size cannot fail
	return &wrongTries{buckets: c}
}

func (w *wrongTries) bucket(key string) *rate.Limiter {
	b, ok := w.buckets.Get(key)
	if !ok {
		b = rate.NewLimiter(rate.Every(deviceTTL/wrongCodes), wrongCodes)
		w.buckets.Add(key, b)
	}
	return b
}

// spent reports whether any of keys has no wrong try left.
func (w *wrongTries) spent(now time.Time, keys ...string) bool {
	for _, k := range keys {
		if w.bucket(k).TokensAt(now) < 1 {
			return true
		}
	}
	return false
}

func (w *wrongTries) spend(now time.Time, keys ...string) {
	for _, k := range keys {
		w.bucket(k).AllowN(now, 1)
	}
}

var (
	errWrongUserCode = apperr.New(apperr.KindNotFound, "invalid_user_code", "no device is waiting for that code; check the code the device shows")
	errTooManyCodes  = apperr.New(apperr.KindRateLimited, "rate_limited", "too many wrong codes; wait a few minutes and try again")
)

// pendingDevice finds the undecided, unexpired request of a typed user code for p,
// spending p's browser's and address's budget on a wrong code.
func (h devices) pendingDevice(c *fiber.Ctx, typed string) (*ent.DeviceAuthorization, error) {
	p, _ := guard.PrincipalOf(c)
	now := h.clock.Now()
	keys := []string{"session:" + p.SessionHandle, "ip:" + httpserver.ClientIP(c)}
	if h.wrong.spent(time.Now(), keys...) {
		return nil, errTooManyCodes
	}
	code := normalUserCode(typed)
	row, err := h.ent.DeviceAuthorization.Query().Where(deviceauthorization.UserCodeDigest(userCodeDigest(code))).Only(c.UserContext())
	if err != nil && !ent.IsNotFound(err) {
		return nil, err
	}
	if err != nil || row.Status != deviceauthorization.StatusPending || !now.Before(row.ExpiresAt) || len(code) != userCodeLen {
		h.wrong.spend(time.Now(), keys...)
		return nil, errWrongUserCode
	}
	// An app's device is approved by a user of its project's tenant, any other by a
	// dashboard user: someone else is asked to sign in as the right one.
	if want := row.TenantID; (want == "" && p.TenantID != identity.PublicTenant) || (want != "" && p.TenantID != want) {
		return nil, errWrongTenant(cmp.Or(row.TenantID, identity.PublicTenant))
	}
	return row, nil
}

func (h devices) deviceCSRF(id, userID string) string {
	return h.keys.MAC("device_consent", []byte(id+"\x00"+userID))
}

// deviceLookup is POST /v1/oauth/device/lookup { userCode }: what the device asks, for
// the console to show.
func (h devices) deviceLookup(c *fiber.Ctx) error {
	f := jsonbody.Read(c.Body())
	typed := f.RequiredString("userCode")
	if err := f.Err(); err != nil {
		return err
	}
	row, err := h.pendingDevice(c, typed)
	if err != nil {
		return err
	}
	p, _ := guard.PrincipalOf(c)
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.JSON(fiber.Map{"client": fiber.Map{"id": row.ClientID, "name": row.ClientName}, "scopes": nonNil(row.Scopes),
		"resources": nonNil(row.Resources), "projectId": row.ProjectID, "app": row.TenantID != "",
		"csrfToken": h.deviceCSRF(row.ID, p.UserID), "expiresAt": row.ExpiresAt.UTC().Format(time.RFC3339)})
}

// deviceDecide is POST /v1/oauth/device/decide { userCode, decision, csrfToken }.
func (h devices) deviceDecide(c *fiber.Ctx) error {
	f := jsonbody.Read(c.Body())
	typed := f.RequiredString("userCode")
	decision := f.RequiredString("decision")
	if decision != "" && decision != "approve" && decision != "deny" {
		f.Fail("decision", "must be approve or deny")
	}
	token := f.RequiredString("csrfToken")
	if err := f.Err(); err != nil {
		return err
	}
	row, err := h.pendingDevice(c, typed)
	if err != nil {
		return err
	}
	p, _ := guard.PrincipalOf(c)
	if !secret.Equal([]byte(token), []byte(h.deviceCSRF(row.ID, p.UserID))) {
		return errCSRF
	}
	ctx := c.UserContext()
	if decision == "deny" {
		n, err := h.ent.DeviceAuthorization.Update().Where(deviceauthorization.ID(row.ID), deviceauthorization.StatusEQ(deviceauthorization.StatusPending)).
			SetStatus(deviceauthorization.StatusDenied).Save(ctx)
		if err != nil {
			return err
		}
		if n == 0 {
			return errWrongUserCode
		}
		return c.JSON(fiber.Map{"decision": "deny"})
	}
	if refused, err := h.mayApproveDevice(ctx, row, p); err != nil {
		return err
	} else if refused != nil {
		return refused
	}
	in := signInOf(p)
	err = database.WithTx(ctx, h.ent, func(tx *ent.Tx) error {
		g, err := h.grants.approve(ctx, tx, approval{ClientID: row.ClientID, ClientName: row.ClientName, ClientHost: "device",
			UserID: p.UserID, ProjectID: row.ProjectID, Scopes: row.Scopes, Resources: row.Resources}, httpserver.Origin(c))
		if err != nil {
			return err
		}
		n, err := tx.DeviceAuthorization.Update().Where(deviceauthorization.ID(row.ID), deviceauthorization.StatusEQ(deviceauthorization.StatusPending)).
			SetStatus(deviceauthorization.StatusApproved).SetGrantID(g.ID).SetUserID(p.UserID).SetSid(in.SID).SetNillableAuthTime(in.AuthTime).SetAmr(in.AMR).Save(ctx)
		if err != nil {
			return err
		}
		if n == 0 {
			return errWrongUserCode
		}
		return nil
	})
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"decision": "approve"})
}

// mayApproveDevice is why p may not approve row (nil when they may): an app's person
// approves for themselves within the project's policy; a host's device is approved by
// the project's admin, as its authorization requests are (SPEC §16).
func (h devices) mayApproveDevice(ctx context.Context, row *ent.DeviceAuthorization, p identity.Principal) (*apperr.Error, error) {
	if row.TenantID == "" {
		role, ok, err := h.members.Role(ctx, row.ProjectID, p.UserID)
		if err != nil {
			return nil, err
		}
		if !ok || role != identity.RoleAdmin {
			return apperr.Forbidden("Only a project admin may connect devices to the project's resources."), nil
		}
	}
	pol, err := h.policies.Policy(ctx, row.ProjectID)
	if err != nil {
		return nil, err
	}
	for _, s := range agentScopes(row.Scopes) {
		if !pol.Allows(s) {
			return apperr.Forbidden("The project's policy does not allow the scope " + s + "."), nil
		}
	}
	return nil, nil
}

// deviceGrant is the token endpoint's urn:ietf:params:oauth:grant-type:device_code.
type deviceGrant struct{ s *service }

func (*deviceGrant) Type() string                { return deviceGrantType }
func (*deviceGrant) Metric() string              { return "device_code" }
func (*deviceGrant) ClientAuth() bool            { return false }
func (*deviceGrant) ClientAuthOptional()         {}
func (*deviceGrant) Repeatable(name string) bool { return false }

func (g *deviceGrant) Live(ctx context.Context, from oauth.Issued) (bool, error) {
	return g.s.grantLive(ctx, from)
}

// The device flow's answers while the person has not approved (RFC 8628 §3.5).
var (
	errPending  = oauth.Error(apperr.KindInvalid, "authorization_pending", "the person has not answered yet")
	errSlowDown = oauth.Error(apperr.KindInvalid, "slow_down", "polling too fast: wait 5 seconds more between requests")
	errDenied   = oauth.Error(apperr.KindInvalid, "access_denied", "the person denied the request")
	errExpired  = oauth.Error(apperr.KindInvalid, "expired_token", "the device code expired; start again")
)

func (g *deviceGrant) Token(ctx context.Context, r oauth.Request) (oauth.Token, error) {
	s := g.s
	if r.Form.Get("device_code") == "" {
		return oauth.Token{}, oauth.InvalidRequest("device_code is required")
	}
	cl, err := s.clientOf(ctx, r)
	if err != nil {
		return oauth.Token{}, err
	}
	device := r.Form.Get("device_code")
	if !secret.CheckToken(deviceCodeKind, device) {
		return oauth.Token{}, invalidGrant("the device code is not one this server issued")
	}
	row, err := s.ent.DeviceAuthorization.Query().Where(deviceauthorization.DeviceCodeDigest(secret.DigestOf(device).Bytes())).Only(ctx)
	if ent.IsNotFound(err) {
		return oauth.Token{}, invalidGrant("the device code is not one this server issued")
	}
	if err != nil {
		return oauth.Token{}, err
	}
	now := s.clock.Now()
	switch {
	case row.ClientID != cl.ID:
		return oauth.Token{}, invalidGrant("the device code was issued to another client")
	case row.Status == deviceauthorization.StatusIssued:
		return oauth.Token{}, invalidGrant("the device code was used already")
	case !now.Before(row.ExpiresAt):
		return oauth.Token{}, errExpired
	case row.Status == deviceauthorization.StatusDenied:
		return oauth.Token{}, errDenied
	case row.Status == deviceauthorization.StatusPending:
		// Polling faster than the interval slows the device down (RFC 8628 §3.5): its
		// interval grows by 5 s for the rest of the request.
		u := s.ent.DeviceAuthorization.UpdateOneID(row.ID).SetLastPolledAt(now)
		answer := errPending
		if row.LastPolledAt != nil && now.Sub(*row.LastPolledAt) < time.Duration(row.Interval)*time.Second {
			u, answer = u.AddInterval(5), errSlowDown
		}
		if err := u.Exec(ctx); err != nil {
			return oauth.Token{}, err
		}
		return oauth.Token{}, answer
	}
	gs, err := s.grants.state(ctx, *row.GrantID)
	if err != nil {
		return oauth.Token{}, err
	}
	if !gs.Live {
		return oauth.Token{}, errNotLiveGrant
	}
	offline := !cl.confidential() || slices.Contains(row.Scopes, scopeOfflineAccess)
	in := signIn{AuthTime: row.AuthTime, AMR: row.Amr, SID: row.Sid}
	var refresh string
	err = database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		// Issued once: of two concurrent polls after the approval, one wins.
		n, err := tx.DeviceAuthorization.Update().Where(deviceauthorization.ID(row.ID), deviceauthorization.StatusEQ(deviceauthorization.StatusApproved)).
			SetStatus(deviceauthorization.StatusIssued).Save(ctx)
		if err != nil {
			return err
		}
		if n == 0 {
			return invalidGrant("the device code was used already")
		}
		if offline {
			refresh, err = s.newRefresh(ctx, tx, *row.GrantID, row.ClientID, row.Scopes, row.Resources, now.Add(refreshMaxTTL), in)
		}
		return err
	})
	if err != nil {
		return oauth.Token{}, err
	}
	scopes, err := s.standing(ctx, cl, *row.GrantID, gs, row.Scopes, row.Resources)
	if err != nil {
		return oauth.Token{}, err
	}
	answer, err := s.issue(ctx, gs.UserID, gs.ProjectID, *row.GrantID, row.ClientID, scopes, row.Resources, refresh, nil)
	if err != nil || !slices.Contains(scopes, scopeOpenID) {
		return answer, err
	}
	answer.IDToken, err = s.idToken(ctx, gs.UserID, gs.ProjectID, row.ClientID, idTokenAlg(cl.IDTokenAlg), "", scopes, in, answer.AccessToken, nil)
	return answer, err
}
