package identity

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/platform/apperr"
)

// Account is a user as sign-in by proof (an upstream identity, a mailed code) sees it.
// Its JSON is the user object of every sign-in answer (SPEC §2, §14).
type Account struct {
	ID            string    `json:"id"`
	TenantID      string    `json:"tenantId"`
	Email         string    `json:"email"`
	Name          *string   `json:"name"`
	EmailVerified bool      `json:"emailVerified"`
	CreatedAt     time.Time `json:"createdAt"`
	// HasPassword is false for a user who never set one (signed up through a provider or
	// a mailed code): password sign-in is then not one of their ways in.
	HasPassword bool `json:"-"`
}

// ProvenUsers is supplied by the account module to the federation module (SPEC §20): it
// finds and creates users who prove their address to an upstream provider or by a mailed
// code rather than with a password. Writes run in the caller's transaction, so a user, its
// identity and their audit records commit together or not at all.
type ProvenUsers interface {
	Account(ctx context.Context, userID string) (Account, error)
	// AccountByEmail is the tenant's user with that address (any case), if any.
	AccountByEmail(ctx context.Context, tenantID, email string) (Account, bool, error)
	// CreateProven creates a user whose address was just proven: verified, no password.
	// An address taken meanwhile is ErrEmailTaken.
	CreateProven(ctx context.Context, tx *ent.Tx, tenantID, email string, name *string) (Account, error)
	// MarkVerified records that userID proved their address.
	MarkVerified(ctx context.Context, tx *ent.Tx, userID string) error
}

// SignInRules is supplied by the federation module to the account module: a tenant may
// turn password sign-in off, or require its identity provider for the domains that
// provider proved (SPEC §20). PasswordAllowed is nil, or the error to answer
// (sso_required with the providerId, password_disabled).
type SignInRules interface {
	PasswordAllowed(ctx context.Context, tenantID, email string) error
}

// Linked is supplied by the federation module to those that meet people by an upstream
// issuer's subject rather than by a session (an ID-JAG of SPEC §22): the tenant's user
// whose identity at the OpenID provider issuer is subject (SPEC §20), if one is linked.
type Linked interface {
	LinkedUser(ctx context.Context, tenantID, issuer, subject string) (string, bool, error)
}

// ErrEmailTaken is a user whose address another user of the tenant already has (SPEC §2).
var ErrEmailTaken = apperr.Conflict("email_taken", "an account with this email already exists")

// Upstreams is supplied by the federation module to the token vault (SPEC §23): the
// upstream providers people connect for a project's agents, the tokens a sign-in with
// offline access left on a person's identity, and calls to the provider's token and
// revocation endpoints. Tokens pass in clear only between the two; each keeps them sealed.
type Upstreams interface {
	// Upstream describes a provider; ok is false when there is none with this id.
	Upstream(ctx context.Context, providerID string) (u UpstreamProvider, ok bool, err error)
	// TakeTokens moves the tokens the user's identity with the provider holds out of it,
	// in tx: from then on they are the caller's to keep. ok is false when it holds none.
	TakeTokens(ctx context.Context, tx *ent.Tx, userID, providerID string) (t UpstreamTokens, ok bool, err error)
	// Refresh trades a refresh token at the provider's token endpoint: ErrUpstreamRefused
	// when the provider refused it (its grant is gone), ErrUpstreamUnavailable when it
	// could not be reached or failed.
	Refresh(ctx context.Context, providerID, refreshToken string) (UpstreamTokens, error)
	// Revoke revokes a token at the provider (RFC 7009, hint "refresh_token" or
	// "access_token"); false when the provider has no revocation endpoint.
	Revoke(ctx context.Context, providerID, token, hint string) (bool, error)
}

// UpstreamProvider is a provider as the vault sees it.
type UpstreamProvider struct {
	ID, TenantID, Name string
	// Offline: it asks for offline access, so sign-ins with it leave a refresh token.
	Offline, Enabled bool
}

// UpstreamTokens are a provider's tokens. The access token's end is ExpiresIn from now
// when that is set (a fresh answer: the caller's clock decides), else Expiry when that is;
// neither when the provider said nothing.
type UpstreamTokens struct {
	AccessToken, RefreshToken, TokenType, Scope string
	ExpiresIn                                   time.Duration
	Expiry                                      time.Time
}

// The outcomes of Upstreams.Refresh that are not the provider's answer.
var (
	ErrUpstreamRefused     = errors.New("the upstream provider refused the refresh token")
	ErrUpstreamUnavailable = errors.New("the upstream provider could not be reached")
)

// Classes of UpstreamFailure.
const (
	UpstreamTimeout     = "timeout"      // no answer in time
	UpstreamConnRefused = "refused"      // nothing listens there: connection refused
	Upstream5xx         = "upstream_5xx" // it answered a server error
	UpstreamBadAnswer   = "bad_answer"   // it answered, but not what the protocol says
	UpstreamUnreachable = "unreachable"  // DNS, TLS, a reset, the outbound policy
)

// UpstreamFailure is why a call to a provider failed (ErrUpstreamUnavailable), as a log
// may name it: a class and, when the provider answered, the HTTP status. Never what it
// answered or was sent, which may hold a token.
type UpstreamFailure struct {
	Class  string
	Status int
}

func (f *UpstreamFailure) Error() string {
	if f.Status != 0 {
		return fmt.Sprintf("upstream %s (HTTP %d)", f.Class, f.Status)
	}
	return "upstream " + f.Class
}

// FailureOf is the UpstreamFailure err carries; class "unknown" when it carries none.
func FailureOf(err error) UpstreamFailure {
	var f *UpstreamFailure
	if errors.As(err, &f) {
		return *f
	}
	return UpstreamFailure{Class: "unknown"}
}
