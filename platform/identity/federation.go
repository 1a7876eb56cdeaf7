package identity

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/fx"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/audit"
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
	// Admit is Users.Admit: asked before a proof changes an existing account (adopting
	// it, linking an identity), so a blocked person's proof changes nothing.
	Admit(ctx context.Context, userID string) error
}

// AddressProofs is supplied by the account module to every path where a mailed proof (a
// code or a link sent to the address) verifies an existing account: the email
// verification link (its own), the email sign-in's link and code (the federation
// module's). A password reset verifies nothing and keeps factors (SPEC §17).
type AddressProofs interface {
	// Proven records, in tx, that whoever holds userID's mailbox proved it (via names the
	// proof in the audit record). When the account was unverified, what was set on it
	// before the proof may be a pre-account takeover's (an attacker signed up with the
	// address): the password is removed and the OAuth grants, linked identities and second
	// factors end, unless the proof came with a verified session of the account (sessionOf,
	// the user id of the request's session, or ""): its holder, who set the password, also
	// holds the mailbox. dropped reports that; the caller then ends every
	// session of the user (Sessions.RevokeUser) once tx commits, before it starts the
	// prover's own.
	Proven(ctx context.Context, tx *ent.Tx, userID, via, sessionOf string, origin audit.Origin) (dropped bool, err error)
}

// PriorCredentials is supplied, in group "prior_credentials" (AsPriorCredentials), by
// each module that keeps a way into an account besides its password, sessions and grants:
// linked identities (federation), second factors (MFA). AddressProofs.Proven asks each to
// drop the account's, in its transaction, when a mailed proof adopts an unverified account.
type PriorCredentials interface {
	// DropPrior deletes userID's credentials of this kind in tx; n is how many.
	DropPrior(ctx context.Context, tx *ent.Tx, userID string) (kind string, n int, err error)
}

// AsPriorCredentials contributes the PriorCredentials returned by constructor f.
func AsPriorCredentials(f any) fx.Option {
	return fx.Provide(fx.Annotate(f, fx.As(new(PriorCredentials)), fx.ResultTags(`group:"prior_credentials"`)))
}

// SessionEnding is supplied, in group "session_endings" (AsSessionEnding), by a module
// that must hear of every session that ends (SPEC §25 back-channel logout): a sign-out,
// an admin's revoke, a blocked or deleted user, token theft. The session engine calls it
// inside the transaction that revokes them, so what it records commits with the revoke.
type SessionEnding interface {
	SessionsEnded(ctx context.Context, tx *ent.Tx, sessionHandles []string) error
}

// AsSessionEnding contributes the SessionEnding returned by constructor f.
func AsSessionEnding(f any) fx.Option {
	return fx.Provide(fx.Annotate(f, fx.As(new(SessionEnding)), fx.ResultTags(`group:"session_endings"`)))
}

// Via names a way in, for SignInRules.SignInAllowed.
type Via struct {
	// Method is "password", "email" (a mailed link or code), "passkey" (a passkey alone),
	// "provider" (an upstream identity provider: OIDC, OAuth 2.0, a preset) or, later,
	// "saml" (an organisation's connection).
	Method string
	// ProviderID is the provider's or connection's id, for "provider" and "saml".
	ProviderID string
}

// SignInRules is supplied by the federation module to the account module: a tenant may
// turn password sign-in off, or require its identity provider for the domains that
// provider proved (SPEC §20). PasswordAllowed is nil, or the error to answer
// (sso_required with the providerId, password_disabled).
type SignInRules interface {
	PasswordAllowed(ctx context.Context, tenantID, email string) error
	// SignInAllowed is the one rule of enterprise SSO by domain (SPEC §20, §26): an address
	// whose domain must use its identity provider signs in only through it. Every way in
	// asks it for the account's address before it signs anyone in: password, email link
	// and code, passkey alone, every provider (and SAML connections and organisations'
	// ssoRequired when they come). nil, or 403 sso_required with the providerId.
	SignInAllowed(ctx context.Context, tenantID, email string, via Via) error
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
