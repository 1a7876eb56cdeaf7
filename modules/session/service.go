package session

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/predicate"
	"github.com/authcore/authcore/ent/refreshtoken"
	"github.com/authcore/authcore/ent/schema"
	entsession "github.com/authcore/authcore/ent/session"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/bearer"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/invalidation"
	"github.com/authcore/authcore/platform/metrics"
	"github.com/authcore/authcore/platform/secret"
)

// sessionIPPurpose keys the session ipHash (the peer address). It differs from the audit
// trail's key (which hashes X-Forwarded-For), so an admin cannot test guessed addresses
// against a session's hash by sending audited requests with that header (SPEC §9).
const sessionIPPurpose = "session-peer-ip"

// SessionAudience is the aud of session access tokens (SPEC §9).
const SessionAudience = identity.SessionAudience

// Cache bounds. A verified token costs about 1 KiB with its claims; a session state and
// a profile a few hundred bytes: 100k of each is about 150 MiB at worst.
const (
	cacheSize     = 100_000
	stateTTL      = 30 * time.Second // safety net when a NOTIFY is lost; revokes invalidate at once
	profileTTL    = 30 * time.Second
	topicSessions = "session"
)

func newKeyID() string { return schema.NewID(schema.SigningKeyIDPrefix) }

// Engine is the session engine: it starts sessions, has the issuer sign their access
// tokens, verifies them (signature through the issuer, revocation here), rotates refresh
// tokens and revokes sessions. It imports no HTTP.
type Engine struct {
	ent     *ent.Client
	db      *database.DB
	reads   *database.Reads
	issuer  *Issuer
	ring    *secret.Keyring
	clock   clock.Clock
	cfg     config.Config
	bus     invalidation.Bus
	users   identity.Users
	log     *slog.Logger
	metrics *metrics.Credentials
	audit   *audit.Recorder
	endings []identity.SessionEnding
	orgs    identity.OrgMemberships
	domains identity.OrgDomains

	tokens   *bearer.Cache[secret.Digest, *verified]
	states   *bearer.Cache[string, state]
	profiles *bearer.Cache[string, identity.Profile]
}

// verified is an access token whose signature checked out.
type verified struct {
	principal identity.Principal
	expires   time.Time
}

// state is what the revocation check needs of a session.
type state struct {
	exists  bool
	revoked bool
}

// NewEngine returns an engine; it is ready when its issuer's keys are.
func NewEngine(p Params) *Engine {
	client, c, cfg, bus := p.Ent, p.Clock, p.Config, p.Bus
	e := &Engine{
		ent: client, db: p.DB, reads: p.Reads, issuer: p.Issuer, ring: p.Ring, clock: c, cfg: cfg, bus: bus, users: p.Users, log: p.Log, metrics: p.Metrics,
		audit: p.Audit, endings: p.Endings, orgs: p.Orgs, domains: p.Domains,
		tokens:   bearer.NewCache[secret.Digest, *verified](cacheSize, cfg.AccessTTL),
		states:   bearer.NewCache[string, state](cacheSize, stateTTL),
		profiles: bearer.NewCache[string, identity.Profile](cacheSize, profileTTL),
	}
	bearer.Follow(bus, topicSessions, e.states)
	bearer.Follow(bus, identity.ProfileTopic, e.profiles)
	return e
}

// Ready reports whether the signing keys are loaded.
func (e *Engine) Ready() bool { return e.issuer.Ready() }

// ForgetVerifiedTokens empties the verified-token cache (benchmarks of the cold path).
func (e *Engine) ForgetVerifiedTokens() { e.tokens.Purge() }

// Start begins a session: a session row and its first refresh token in one transaction,
// then a signed access token.
func (e *Engine) Start(ctx context.Context, in identity.NewSession) (identity.Tokens, error) {
	if !e.Ready() {
		return identity.Tokens{}, errNotReady
	}
	if err := e.users.Admit(ctx, in.UserID); err != nil {
		return identity.Tokens{}, err
	}
	now := e.clock.Now()
	refresh, err := secret.NewToken(refreshKind)
	if err != nil {
		return identity.Tokens{}, err
	}
	payload := in.Payload
	if payload == nil {
		payload = map[string]any{}
	}
	var ipHash *string
	if in.IP != "" {
		// Keyed per tenant (SPEC §9a): hashes never compare across projects.
		h := e.ring.MAC(sessionIPPurpose+"/"+in.TenantID, []byte(in.IP))
		ipHash = &h
	}
	var ua *string
	if in.UserAgent != "" {
		ua = &in.UserAgent
	}
	org, err := e.firstOrg(ctx, in)
	if err != nil {
		return identity.Tokens{}, err
	}
	lifetime, err := lifetimeOf(ctx, e.users, e.domains, e.cfg.RefreshTTL, in)
	if err != nil {
		return identity.Tokens{}, err
	}
	var s *ent.Session
	err = database.WithTx(ctx, e.ent, func(tx *ent.Tx) error {
		var err error
		s, err = tx.Session.Create().
			SetUserID(in.UserID).SetTenantID(in.TenantID).SetPayload(payload).SetNillableOrgID(org).
			SetNillableUserAgent(ua).SetNillableIPHash(ipHash).
			SetAmr(amrOf(in.AMR)).SetAuthTime(now).
			SetCreatedAt(now).SetLastActiveAt(now).SetExpiresAt(now.Add(lifetime)).
			Save(ctx)
		if err != nil {
			return err
		}
		return tx.RefreshToken.Create().SetDigest(secret.DigestOf(refresh).Bytes()).SetSessionID(s.ID).SetCreatedAt(now).Exec(ctx)
	})
	if err != nil {
		return identity.Tokens{}, err
	}
	// Asked again now that the session is there: a deprovisioning (or a block) that
	// committed after the first answer swept the user's sessions before this one existed.
	// Either this answer sees it, or its sweep came after the insert and ended this one.
	if err := e.users.Admit(ctx, in.UserID); err != nil {
		if _, rerr := e.Revoke(ctx, s.ID); rerr != nil {
			return identity.Tokens{}, errors.Join(err, rerr)
		}
		return identity.Tokens{}, err
	}
	access, exp, err := e.sign(ctx, s, now)
	if err != nil {
		return identity.Tokens{}, err
	}
	e.metrics.Issued.WithLabelValues("session", "").Inc()
	return identity.Tokens{SessionHandle: s.ID, AccessToken: access, RefreshToken: refresh, AccessTokenExpiresAt: exp}, nil
}

// lifetime is how long a new session lives: the refresh lifetime, or less when the user's
// address is in a domain an org verified whose policy sets sessionMaxHours (SPEC §26).
// Every way in starts its sessions here, so each holds to it.
func lifetimeOf(ctx context.Context, users identity.Users, domains identity.OrgDomains, ttl time.Duration, in identity.NewSession) (time.Duration, error) {
	if domains == nil || in.TenantID == identity.PublicTenant {
		return ttl, nil
	}
	p, err := users.Profile(ctx, in.UserID)
	if err != nil || p.Email == nil {
		return ttl, err
	}
	_, domain, ok := strings.Cut(*p.Email, "@")
	if !ok {
		return ttl, nil
	}
	pol, ok, err := domains.DomainOrg(ctx, in.TenantID, strings.ToLower(domain))
	if err != nil || !ok || pol.SessionMaxHours <= 0 {
		return ttl, err
	}
	return min(ttl, time.Duration(pol.SessionMaxHours)*time.Hour), nil
}

// reserved claims a session payload may not override: an org role in a payload would
// pass for the org's word.
var reserved = map[string]bool{"iss": true, "sub": true, "sid": true, "tid": true, "iat": true, "exp": true, "nbf": true, "aud": true, "jti": true,
	"amr": true, "authTime": true, "auth_time": true, claimOrgID: true, claimOrgRole: true, claimOrgPermissions: true,
	"orgId": true, "orgRole": true, "orgPermissions": true}

// The claims of a session's active organisation (SPEC §26), as id_tokens name them.
const (
	claimOrgID          = "org_id"
	claimOrgRole        = "org_role"
	claimOrgPermissions = "org_permissions"
)

// firstOrg is the organisation a new session starts in: the one its starter names when
// the person is a member, else the only one they belong to. A person of several orgs
// starts in none and picks (POST /v1/auth-core/session/org).
func (e *Engine) firstOrg(ctx context.Context, in identity.NewSession) (*string, error) {
	if e.orgs == nil || in.TenantID == identity.PublicTenant {
		return nil, nil
	}
	if in.OrgID != "" {
		_, ok, err := e.orgs.Membership(ctx, in.TenantID, in.OrgID, in.UserID)
		if err != nil || !ok {
			return nil, err
		}
		return &in.OrgID, nil
	}
	ms, err := e.orgs.MembershipsOf(ctx, in.TenantID, in.UserID)
	if err != nil || len(ms) != 1 {
		return nil, err
	}
	return &ms[0].OrgID, nil
}

// orgClaims adds the session's active organisation with the person's role there now: a
// membership ended or changed since shows in the next token signed.
func (e *Engine) orgClaims(ctx context.Context, s *ent.Session, claims map[string]any) error {
	if s.OrgID == nil || e.orgs == nil {
		return nil
	}
	m, ok, err := e.orgs.Membership(ctx, s.TenantID, *s.OrgID, s.UserID)
	if err != nil || !ok {
		return err
	}
	claims[claimOrgID], claims[claimOrgRole], claims[claimOrgPermissions] = m.OrgID, m.Role, m.Permissions
	return nil
}

// amrOf is how a session started when its starter did not say: a password.
func amrOf(amr []string) []string {
	if len(amr) == 0 {
		return []string{"pwd"}
	}
	return amr
}

// authTimeOf is when a session's user last authenticated; sessions from before it was
// recorded authenticated when they began.
func authTimeOf(s *ent.Session) time.Time {
	if s.AuthTime != nil {
		return *s.AuthTime
	}
	return s.CreatedAt
}

// sign has the issuer sign an access token of session s.
func (e *Engine) sign(ctx context.Context, s *ent.Session, now time.Time) (string, time.Time, error) {
	exp := now.Add(e.cfg.AccessTTL).Truncate(time.Second)
	claims := make(map[string]any, len(s.Payload)+6)
	for k, v := range s.Payload {
		if !reserved[k] {
			claims[k] = v
		}
	}
	claims["iss"] = identity.IssuerFrom(ctx)
	claims["aud"] = SessionAudience
	claims["sub"] = s.UserID
	claims["sid"] = s.ID
	claims["tid"] = s.TenantID
	claims["iat"] = now.Unix()
	claims["nbf"] = now.Unix() // verifiers with a little clock skew accept a fresh token
	claims["exp"] = exp.Unix()
	// SPEC §17 names the authentication time authTime; auth_time and amr are the names
	// OpenID Connect and RFC 8176 give them, which resource servers' libraries read.
	at := authTimeOf(s).Unix()
	claims["authTime"] = at
	claims["auth_time"] = at
	claims["amr"] = amrOf(s.Amr)
	if err := e.orgClaims(ctx, s, claims); err != nil {
		return "", time.Time{}, err
	}
	tok, err := e.issuer.signSession(claims)
	return tok, exp, err
}

// Authenticate verifies an access token: signature (cached per token), expiry to the
// second, and revocation (every call; cached state that a revoke invalidates at once).
func (e *Engine) Authenticate(ctx context.Context, token string) (identity.Principal, error) {
	if !e.Ready() {
		return identity.Principal{}, identity.ErrEngineNotReady
	}
	p, err := e.authenticate(ctx, token)
	result := "ok"
	if err != nil {
		var ve *identity.VerifyError
		if errors.As(err, &ve) {
			result = ve.Reason
		} else {
			result = "error"
		}
	}
	e.metrics.Verifications.WithLabelValues("session", result).Inc()
	return p, err
}

func (e *Engine) authenticate(ctx context.Context, token string) (identity.Principal, error) {
	d := secret.DigestOf(token)
	v, ok := e.tokens.Get(d)
	if !ok {
		var err error
		if v, err = e.issuer.verifySession(token); err != nil {
			return identity.Principal{}, err
		}
		e.tokens.Put(d, v)
	}
	if !e.clock.Now().Before(v.expires) {
		return identity.Principal{}, verifyFailed(identity.ReasonTokenExpired)
	}
	sid := v.principal.SessionHandle
	st, err := e.states.Load(ctx, sid, func(ctx context.Context) (state, error) {
		s, err := database.Read(ctx, e.reads, topicSessions, sid, func(ctx context.Context, h database.Handle) (*ent.Session, error) {
			return h.Ent.Session.Query().Where(entsession.ID(sid)).Select(entsession.FieldRevokedAt).Only(ctx)
		})
		if database.IsNoRow(err) {
			return state{}, nil
		}
		if err != nil {
			return state{}, err
		}
		return state{exists: true, revoked: s.RevokedAt != nil}, nil
	})
	if err != nil {
		return identity.Principal{}, err
	}
	if !st.exists {
		return identity.Principal{}, verifyFailed(identity.ReasonInvalidToken)
	}
	if st.revoked {
		return identity.Principal{}, verifyFailed(identity.ReasonSessionRevoked)
	}
	return v.principal, nil
}

// Profile is the user's email and name, cached briefly; lookups never fail the caller.
func (e *Engine) Profile(ctx context.Context, userID string) identity.Profile {
	p, err := e.profiles.Load(ctx, userID, func(ctx context.Context) (identity.Profile, error) {
		return e.users.Profile(ctx, userID)
	})
	if err != nil {
		e.log.DebugContext(ctx, "user lookup failed; answering without profile", "error", err)
		return identity.Profile{}
	}
	return p
}

// Refreshed is the outcome of a refresh.
type Refreshed struct {
	UserID   string
	TenantID string
	Tokens   identity.Tokens
}

// Refresh rotates a refresh token. Presenting a token that was already rotated means two
// parties hold it: the whole session is revoked.
func (e *Engine) Refresh(ctx context.Context, token string) (Refreshed, error) {
	if !e.Ready() {
		return Refreshed{}, errNotReady
	}
	if !secret.CheckToken(refreshKind, token) {
		return Refreshed{}, errRefreshDenied
	}
	now := e.clock.Now()
	rt, err := e.ent.RefreshToken.Query().Where(refreshtoken.Digest(secret.DigestOf(token).Bytes())).Only(ctx)
	if ent.IsNotFound(err) {
		return Refreshed{}, errRefreshDenied
	}
	if err != nil {
		return Refreshed{}, err
	}
	if rt.RotatedAt != nil {
		if err := e.revokeStolen(ctx, rt.SessionID); err != nil {
			return Refreshed{}, err
		}
		return Refreshed{}, errTokenTheft
	}
	next, err := secret.NewToken(refreshKind)
	if err != nil {
		return Refreshed{}, err
	}
	var s *ent.Session
	theft := false
	err = database.WithTx(ctx, e.ent, func(tx *ent.Tx) error {
		var err error
		s, err = tx.Session.Get(ctx, rt.SessionID)
		if err != nil {
			return err
		}
		if s.RevokedAt != nil || !now.Before(s.ExpiresAt) {
			return errRefreshDenied
		}
		// Only one caller can rotate a token; a concurrent second use is a reuse.
		n, err := tx.RefreshToken.Update().Where(refreshtoken.ID(rt.ID), refreshtoken.RotatedAtIsNil()).SetRotatedAt(now).Save(ctx)
		if err != nil {
			return err
		}
		if n != 1 {
			theft = true
			return errTokenTheft
		}
		if err := tx.RefreshToken.Create().SetDigest(secret.DigestOf(next).Bytes()).SetSessionID(s.ID).SetCreatedAt(now).Exec(ctx); err != nil {
			return err
		}
		s, err = tx.Session.UpdateOne(s).SetLastActiveAt(now).SetExpiresAt(now.Add(e.cfg.RefreshTTL)).Save(ctx)
		return err
	})
	if theft {
		if rerr := e.revokeStolen(ctx, rt.SessionID); rerr != nil {
			return Refreshed{}, rerr
		}
	}
	if err != nil {
		if ent.IsNotFound(err) {
			return Refreshed{}, errRefreshDenied
		}
		return Refreshed{}, err
	}
	access, exp, err := e.sign(ctx, s, now)
	if err != nil {
		return Refreshed{}, err
	}
	return Refreshed{UserID: s.UserID, TenantID: s.TenantID, Tokens: identity.Tokens{
		SessionHandle: s.ID, AccessToken: access, RefreshToken: next, AccessTokenExpiresAt: exp,
	}}, nil
}

// StepUp moves a live session's authentication time to now, adds method to how it was
// authenticated, and signs an access token saying so. Later refreshes carry both.
func (e *Engine) StepUp(ctx context.Context, sid, method string) (identity.Tokens, error) {
	if !e.Ready() {
		return identity.Tokens{}, errNotReady
	}
	now := e.clock.Now()
	var s *ent.Session
	err := database.WithTx(ctx, e.ent, func(tx *ent.Tx) error {
		var err error
		if s, err = tx.Session.Get(ctx, sid); err != nil {
			return err
		}
		if s.RevokedAt != nil || !now.Before(s.ExpiresAt) {
			return verifyFailed(identity.ReasonSessionRevoked)
		}
		amr := amrOf(s.Amr)
		if !slices.Contains(amr, method) {
			amr = append(slices.Clip(amr), method)
		}
		s, err = tx.Session.UpdateOne(s).SetAmr(amr).SetAuthTime(now).Save(ctx)
		return err
	})
	if ent.IsNotFound(err) {
		return identity.Tokens{}, verifyFailed(identity.ReasonInvalidToken)
	}
	if err != nil {
		return identity.Tokens{}, err
	}
	access, exp, err := e.sign(ctx, s, now)
	if err != nil {
		return identity.Tokens{}, err
	}
	return identity.Tokens{SessionHandle: s.ID, AccessToken: access, AccessTokenExpiresAt: exp}, nil
}

// RevokeUser revokes every live session of userID except keep.
func (e *Engine) RevokeUser(ctx context.Context, userID, keep string) (int, error) {
	where := []predicate.Session{entsession.UserID(userID)}
	if keep != "" {
		where = append(where, entsession.IDNEQ(keep))
	}
	return e.revokeWhere(ctx, where, nil)
}

// Revoke ends one session. It reports whether this call revoked it (false when it was
// already revoked or does not exist). This replica refuses the session's tokens once it
// returns, every other one within moments (the invalidation commits with the revoke).
// State reads one session by handle for single sign-on (SPEC §25), from the primary: a
// browser's SSO cookie must not outlive a revoke on a lagging replica.
func (e *Engine) State(ctx context.Context, sid string) (identity.SessionState, bool, error) {
	s, err := e.ent.Session.Get(ctx, sid)
	if ent.IsNotFound(err) {
		return identity.SessionState{}, false, nil
	}
	if err != nil {
		return identity.SessionState{}, false, err
	}
	at := s.CreatedAt
	if s.AuthTime != nil {
		at = *s.AuthTime
	}
	var org string
	if s.OrgID != nil {
		org = *s.OrgID
	}
	return identity.SessionState{UserID: s.UserID, TenantID: s.TenantID, AuthTime: at, AMR: s.Amr, OrgID: org,
		Live: s.RevokedAt == nil && e.clock.Now().Before(s.ExpiresAt)}, true, nil
}

func (e *Engine) Revoke(ctx context.Context, sid string) (bool, error) {
	n, err := e.revokeWhere(ctx, []predicate.Session{entsession.ID(sid)}, nil)
	return n > 0, err
}

// revokeStolen revokes a session whose rotated refresh token was used again. When it is an
// end user's, their project hears of it: audit record (and event) session.theft_detected.
func (e *Engine) revokeStolen(ctx context.Context, sid string) error {
	s, err := e.ent.Session.Get(ctx, sid)
	if err != nil {
		return err
	}
	var event func(int) audit.Event
	if s.TenantID != identity.PublicTenant {
		event = func(int) audit.Event {
			return audit.Event{ProjectID: s.TenantID, Action: "session.theft_detected", Metadata: map[string]any{"sessionHandle": sid, "userId": s.UserID}}
		}
	}
	_, err = e.revokeWhere(ctx, []predicate.Session{entsession.ID(sid)}, event)
	return err
}

// sessionAudience accepts the session audience, and no audience at all from tokens signed
// before sessions carried one (they live at most AUTHCORE_ACCESS_TTL).
func sessionAudience(aud any) bool {
	switch a := aud.(type) {
	case nil:
		return true
	case string:
		return a == SessionAudience
	case []any:
		return len(a) == 1 && a[0] == SessionAudience
	}
	return false
}
