// Package identity is where the account, session and project modules (and the guard and
// the auth plugin) meet without importing one another: each interface here is declared for
// its consumer and supplied, through fx, by the module that owns the data. It holds types,
// interfaces and constants (with the role order); never code that reaches a store.
package identity

import (
	"context"
	"errors"
	"time"

	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/scope"
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

// TokenSigner signs JWTs with the key set served at /.well-known/jwks.json. Supplied by
// the session module to products that issue tokens (the auth product's OAuth endpoint).
type TokenSigner interface {
	// SignAccessToken signs an OAuth access token (header typ at+jwt), adding iss (the
	// issuer in ctx). It fails with ErrEngineNotReady before the keys load.
	SignAccessToken(ctx context.Context, claims map[string]any) (string, error)
	// JWKS is the public key set (RFC 7517) of every token signed; an error before the
	// keys load.
	JWKS() ([]byte, error)
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

// ErrNotLive is a presented credential that is not a live one: unknown, revoked, expired
// or malformed, all alike.
var ErrNotLive = errors.New("credential not live")

// AgentGrant is a live AI agent token, as the OAuth surface sees it.
type AgentGrant struct {
	TokenID, ProjectID, AgentName string
	Scopes                        []string
	ExpiresAt                     time.Time
}

// AgentTokens is supplied by the agenttoken module to the OAuth surface (token exchange,
// introspection, revocation in plugins/auth).
type AgentTokens interface {
	// Grant verifies a presented agent token: its grant, or ErrNotLive.
	Grant(ctx context.Context, token string) (AgentGrant, error)
	// Live reports whether the token with this id is live, from a cache that a revoke on
	// any replica clears at once: what a JWT exchanged from it is worth.
	Live(ctx context.Context, tokenID string) (bool, error)
	// RevokePresented revokes the presented token — at its holder's request (RFC 7009) or
	// on a leak report — audited as r says; ErrNotLive when it is not a live token.
	RevokePresented(ctx context.Context, token string, r Revocation) error
}

// Revocation is how a credential revoked by presenting its secret is audited: no actor,
// Action (empty: the credential's own revoke action) and Metadata added to the record.
type Revocation struct {
	Action   string
	Metadata map[string]any
	Origin   audit.Origin
}

// BadgeGrant is a live service badge, as the OAuth surface sees it.
type BadgeGrant struct {
	BadgeID, ProjectID, Product, Role string
	ExpiresAt                         *time.Time
}

// Badges is supplied by the badge module to the OAuth surface.
type Badges interface {
	// Grant verifies a presented badge secret: its grant, or ErrNotLive.
	Grant(ctx context.Context, token string) (BadgeGrant, error)
	// RevokePresented revokes the presented badge as r says; ErrNotLive when it is not a
	// live badge.
	RevokePresented(ctx context.Context, token string, r Revocation) error
	// RevokeLive revokes the live badge with this id as r says (a product's own secret was
	// presented); ErrNotLive when it is not live.
	RevokeLive(ctx context.Context, badgeID string, r Revocation) error
}

// JWTVerifier is supplied by the session module to the OAuth surface: verification of any
// JWT signed with the key set served at /.well-known/jwks.json.
type JWTVerifier interface {
	// VerifyJWT checks the signature and the expiry (to the second) of token and returns
	// its header typ and its claims; ErrNotLive for anything else. It knows nothing of
	// revocation: the caller judges the token's subject.
	VerifyJWT(token string) (typ string, claims map[string]any, err error)
}

// EmailVerification is supplied by the account module to the guard, which refuses
// unverified dashboard users when AUTHCORE_REQUIRE_VERIFIED_EMAIL is set.
type EmailVerification interface {
	EmailVerified(ctx context.Context, userID string) (bool, error)
}

// Policy is a project's credential policy (SPEC §12). A nil limit is no limit beyond the
// service's own; nil AllowedScopes allows any scope.
type Policy struct {
	AgentTokenMaxTTLHours *int     `json:"agentTokenMaxTtlHours"`
	BadgeMaxExpiresInDays *int     `json:"badgeMaxExpiresInDays"`
	AllowedScopes         []string `json:"allowedScopes"`
}

// Allows reports whether the policy allows s: no list, or a pattern that covers it by
// the one coverage rule of platform/scope ("x:*" covers "x:…").
func (p Policy) Allows(s string) bool {
	return p.AllowedScopes == nil || scope.CoveredBy(p.AllowedScopes, s)
}

// Policies is supplied by the project module to the modules that mint credentials.
type Policies interface {
	Policy(ctx context.Context, projectID string) (Policy, error)
}
