package identity

import (
	"context"
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
