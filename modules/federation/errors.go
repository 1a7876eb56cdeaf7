package federation

import "github.com/authcore/authcore/platform/apperr"

// The answers of SPEC §20's routes. A refusal at the callback is shown to the person as a
// page, and to an API client as this JSON.
var (
	errProviderNotFound = apperr.New(apperr.KindNotFound, "provider_not_found", "no such sign-in provider")
	errProviderDisabled = apperr.New(apperr.KindForbidden, "provider_disabled", "this sign-in provider is turned off")
	errInvalidState     = apperr.BadRequest("invalid_state",
		"this sign-in is unknown, used, expired or was started in another browser: start again")
	errUpstreamUnavailable = apperr.New(apperr.KindUnavailable, "upstream_unavailable",
		"the identity provider could not be reached or failed; nothing was changed, try again later")
	errUpstreamRefused = apperr.BadRequest("upstream_refused", "the identity provider refused the sign-in")
	errIDToken         = apperr.New(apperr.KindUnauthenticated, "invalid_id_token",
		"the identity provider's answer did not verify (issuer, audience, nonce, expiry or signature)")
	errNoEmail = apperr.BadRequest("email_required",
		"the identity provider did not share an email address, which an account needs")
	// errAccountExists never signs anyone into an account whose address they did not prove.
	errAccountExists = apperr.Conflict("account_exists",
		"an account with this email already exists: sign in to it, then link this provider from Account")
	errEmailNotProven = apperr.New(apperr.KindForbidden, "email_not_verified",
		"the identity provider did not vouch for this email address, so no account is made with it: sign up with the address, then link this provider from Account")
	errIdentityTaken = apperr.Conflict("identity_taken", "this identity is already linked to another account")
	errSignupClosed  = apperr.New(apperr.KindForbidden, "signup_closed", "sign-up is closed")
	errLastMethod    = apperr.Conflict("last_sign_in_method",
		"this is your last way to sign in: set a password or link another provider first")
	errIdentityNotFound   = apperr.New(apperr.KindNotFound, "identity_not_found", "no such linked identity")
	errMethodDisabled     = apperr.New(apperr.KindForbidden, "method_disabled", "this sign-in method is turned off for this tenant")
	errPasswordDisabled   = apperr.New(apperr.KindForbidden, "password_disabled", "password sign-in is turned off for this tenant")
	errInvalidCode        = apperr.BadRequest("invalid_code", "the code is wrong, used or expired")
	errInvalidToken       = apperr.BadRequest("invalid_token", "the token is unknown, used or expired")
	errMailNotConfigured  = apperr.New(apperr.KindUnavailable, "mail_not_configured", "mail is not configured on this server")
	errNoProviderForEmail = apperr.New(apperr.KindNotFound, "no_provider", "no provider claims this address's domain")
	errDomainTaken        = apperr.Conflict("domain_taken", "another provider of this tenant claims this domain")
	errDomainNotFound     = apperr.New(apperr.KindNotFound, "domain_not_found", "this provider claims no such domain")
	errNoSignInMethod     = apperr.Conflict("no_sign_in_method", "leave at least one way to sign in: password, email link or an enabled provider")
)
