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
)

// PublicTenant is the tenant of dashboard users (SPEC §0).
const PublicTenant = "public"

// Profile is what session/me reports of a user, read from the user store. Either field is
// nil when missing or unreadable.
type Profile struct {
	Email         *string
	Name          *string
	EmailVerified bool
}

// ProfileTopic is the invalidation topic of cached profiles (key: user id): the account
// module publishes it when a profile changes (an address verified).
const ProfileTopic = "user_profile"

// Users is supplied by the account module to the session module.
type Users interface {
	Profile(ctx context.Context, userID string) (Profile, error)
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
}

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
