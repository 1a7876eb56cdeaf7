// Package identity is where users, sessions and project members meet: the account,
// session and project modules and the guard, without importing one another. Each interface
// here is declared for its consumer and supplied, through fx, by the module that owns the
// data; what other seams need lives with them (credential kinds and revocation in
// platform/credential, token signing in platform/oauth, project policies in
// platform/policy). It holds types, interfaces and constants (with the role order); never
// code that reaches a store.
package identity

import (
	"context"
	"errors"
	"time"

	"github.com/authcore/authcore/platform/apperr"
)

// PublicTenant is the tenant of dashboard users (SPEC §0).
const PublicTenant = "public"

// Profile is what session/me reports of a user, read from the user store. Either field is
// nil when missing or unreadable.
type Profile struct {
	Email         *string
	Name          *string
	EmailVerified bool
	// Metadata is the user's metadata object (SPEC §25 custom claims); nil when it is not
	// a JSON object.
	Metadata map[string]any
}

// ProfileTopic is the invalidation topic of cached profiles (key: user id): the account
// module publishes it when a profile changes (an address verified).
const ProfileTopic = "user_profile"

// Users is supplied by the account module to the session and MFA modules.
type Users interface {
	Profile(ctx context.Context, userID string) (Profile, error)
	// FindUser is the id of the tenant's user with that email, if any.
	FindUser(ctx context.Context, tenantID, email string) (string, bool, error)
	// Admit is nil when the user may start a session now; else the refusal to answer
	// (SPEC §25: 403 user_blocked for a blocked user, §27: 403 user_deprovisioned for one
	// their org's directory deactivated, invalid_credentials for one deleted
	// since they proved who they are). The session engine asks it before every session it
	// starts, so every way in (password, passkey, mailed code, provider, second factor)
	// holds to it without saying it again.
	Admit(ctx context.Context, userID string) error
}

// Tenants is supplied by the project module: a project's tenant id is its project id.
type Tenants interface {
	TenantExists(ctx context.Context, tenantID string) (bool, error)
	// TenantName is the name of the project that owns tenantID, for mails to its users.
	TenantName(ctx context.Context, tenantID string) (string, bool, error)
}

// NewSession is what the account module asks the session engine to start at sign-in.
type NewSession struct {
	UserID    string
	TenantID  string
	UserAgent string
	IP        string
	Payload   map[string]any
	// AMR is how the user authenticated (RFC 8176: "pwd", "otp", "hwk", "swk", "mfa").
	AMR []string
	// OrgID is the organisation the session starts in (SPEC §26), when the way in names
	// one (an org's connection); ignored unless the person is its member.
	OrgID string
}

// Tokens are the credentials of a started or refreshed session.
type Tokens struct {
	SessionHandle        string
	AccessToken          string
	RefreshToken         string
	AccessTokenExpiresAt time.Time
}

// Sessions is supplied by the session module to the account module.
type Sessions interface {
	Start(ctx context.Context, s NewSession) (Tokens, error)
	// RevokeUser revokes every live session of a user but keep ("" keeps none), on every
	// replica; it returns how many it revoked.
	RevokeUser(ctx context.Context, userID, keep string) (int, error)
	// StepUp records a fresh authentication of a live session by method (an RFC 8176
	// value) and signs an access token whose authTime is now; the refresh token stays.
	StepUp(ctx context.Context, sessionHandle, method string) (Tokens, error)
	// Revoke ends one session (a sign-out), on every replica; false when it was not live.
	Revoke(ctx context.Context, sessionHandle string) (bool, error)
	// State reads one session by handle, live or not (SPEC §25: the SSO session a
	// browser's cookie names); ok is false when there is no such session.
	State(ctx context.Context, sessionHandle string) (s SessionState, ok bool, err error)
}

// SessionState is a session as single sign-on sees it (SPEC §25).
type SessionState struct {
	UserID   string
	TenantID string
	// AuthTime is the latest authentication (the sign-in or a step-up); AMR is how.
	AuthTime time.Time
	AMR      []string
	// OrgID is the session's active organisation (SPEC §26), or "".
	OrgID string
	// Live is false once the session was revoked or its refresh token expired.
	Live bool
}

// ErrEngineNotReady means the session engine has not loaded its signing keys yet (the
// seed's "auth engine not initialized").
var ErrEngineNotReady = errors.New("auth engine not initialized")

// Verification failure reasons of SPEC §3.
const (
	ReasonNoSession      = "no_session"
	ReasonInvalidToken   = "invalid_token"
	ReasonTokenExpired   = "token_expired"
	ReasonSessionRevoked = "session_revoked"
)

// VerifyError is a session that did not verify, with its SPEC §3 reason.
type VerifyError struct{ Reason string }

func (e *VerifyError) Error() string { return "session not verified: " + e.Reason }

// Principal is a verified session.
type Principal struct {
	UserID        string
	TenantID      string
	SessionHandle string
	// Claims are the verified access token claims (accessTokenPayload).
	Claims map[string]any
	// ClaimsJSON is Claims encoded once, when the token was first verified, so the hot
	// path does not re-encode a map on every call.
	ClaimsJSON []byte
	// AuthTime is when the user last authenticated: the sign-in or the latest step-up
	// (SPEC §17); zero for tokens signed before it was recorded.
	AuthTime time.Time
}

// Factors is supplied by the MFA module to the guard, which asks for a recent
// authentication only of users with a second factor and refuses, on projects that
// require one, members without.
type Factors interface {
	Enrolled(ctx context.Context, userID string) (bool, error)
}

// FactorsTopic is the invalidation topic of cached enrolment answers (key: user id).
const FactorsTopic = "user_factors"

// Proof is a second factor presented at sign-in or step-up: exactly one field is set.
type Proof struct {
	Code         string // TOTP
	RecoveryCode string
	Assertion    []byte // a WebAuthn assertion, as the browser's JSON
}

// SecondFactor is supplied by the MFA module to the account module, which owns sign-in
// (SPEC §17): the two-step answer, its second step and passwordless passkey sign-in.
type SecondFactor interface {
	// Methods lists the kinds of factor userID has confirmed ("totp", "passkey",
	// "recovery_code"); none means sign-in is one step.
	Methods(ctx context.Context, userID string) ([]string, error)
	// Challenge starts a second step: an opaque token naming the user, five minutes long.
	Challenge(ctx context.Context, userID, tenantID string) (mfaToken string, err error)
	// Peek names the user an unexpired mfaToken is for, without spending it.
	Peek(ctx context.Context, mfaToken string) (userID, tenantID string, err error)
	// Complete checks proof for the mfaToken's user and spends the token; amr is how.
	Complete(ctx context.Context, mfaToken string, proof Proof) (userID string, amr []string, err error)
	// BeginPasskey starts a WebAuthn ceremony: request options and the challenge's id.
	// Without an mfaToken it is a sign-in by passkey alone or a step-up (discoverable, user
	// verification required); with one, the second factor of that token's user.
	BeginPasskey(ctx context.Context, tenantID, mfaToken string) (options []byte, challengeID string, err error)
	// FinishPasskey checks an assertion against the challenge and spends it.
	FinishPasskey(ctx context.Context, challengeID string, assertion []byte) (userID string, amr []string, err error)
}

// ErrSecondFactor is a second factor that did not verify: wrong, reused or expired. It is
// the API's answer as it stands, so the account and MFA modules return it unchanged.
var ErrSecondFactor = apperr.New(apperr.KindUnauthenticated, "invalid_second_factor", "the code, recovery code or passkey did not verify")

// Project roles, in increasing power (SPEC §2).
const (
	RoleViewer    = "viewer"
	RoleDeveloper = "developer"
	RoleAdmin     = "admin"
)

// RoleRank orders roles; 0 for anything that is not a role.
func RoleRank(role string) int {
	switch role {
	case RoleViewer:
		return 1
	case RoleDeveloper:
		return 2
	case RoleAdmin:
		return 3
	}
	return 0
}

// Memberships is supplied by the project module to the guard and to modules that scope
// what a project admin may see (the session module).
type Memberships interface {
	// Role is userID's role on projectID; ok is false for a non-member or no such project.
	Role(ctx context.Context, projectID, userID string) (role string, ok bool, err error)
	// MemberIDs lists the user ids of a project's members.
	MemberIDs(ctx context.Context, projectID string) ([]string, error)
}

// DashboardUser is a user of tenant "public", as the project module needs one.
type DashboardUser struct {
	ID    string
	Email string
}

// Directory is supplied by the account module: it finds dashboard users to add to
// projects and reads their emails for member lists.
type Directory interface {
	// FindDashboardUser finds a user of tenant "public" by id or by email (one is set).
	FindDashboardUser(ctx context.Context, id, email string) (DashboardUser, bool, error)
	// Emails maps user ids to emails; unknown ids are left out.
	Emails(ctx context.Context, ids []string) (map[string]string, error)
}

type issuerKey struct{}

// WithIssuer returns ctx carrying the issuer of tokens signed for this request: the
// server's own URL (config.SelfURL), never the host a request named.
func WithIssuer(ctx context.Context, issuer string) context.Context {
	return context.WithValue(ctx, issuerKey{}, issuer)
}

// SessionAudience is the aud of session access tokens, so that no verifier can take one
// for an OAuth access token or the other way round (SPEC §9).
const SessionAudience = "authcore:session"

// LegacyIssuer is the iss of tokens signed before issuers were URLs, and of tokens signed
// outside any request.
const LegacyIssuer = "authcore"

// IssuerFrom is the issuer WithIssuer put in ctx, or LegacyIssuer.
func IssuerFrom(ctx context.Context) string {
	if s, ok := ctx.Value(issuerKey{}).(string); ok && s != "" {
		return s
	}
	return LegacyIssuer
}

// EmailVerification is supplied by the account module to the guard, which refuses
// unverified dashboard users when AUTHCORE_REQUIRE_VERIFIED_EMAIL is set.
type EmailVerification interface {
	EmailVerified(ctx context.Context, userID string) (bool, error)
}
