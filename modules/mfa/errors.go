package mfa

import (
	"github.com/authcore/authcore/platform/apperr"
)

var (
	errMFAToken          = apperr.New(apperr.KindUnauthenticated, "invalid_mfa_token", "the mfaToken is unknown, used or expired: sign in again")
	errFactorNotFound    = apperr.NotFound("no such factor")
	errAlreadyConfirmed  = apperr.Conflict("already_confirmed", "this factor is already confirmed")
	errPendingExpired    = apperr.New(apperr.KindInvalid, "enrolment_expired", "this TOTP secret was not confirmed within 10 minutes: start again")
	errPasskeyRegistered = apperr.Conflict("passkey_registered", "this passkey is already registered")
	errNoPasskeys        = apperr.New(apperr.KindUnavailable, "passkeys_unavailable",
		"passkeys need AUTHCORE_PUBLIC_URL to name a host by a domain name, not an IP address")
	errNoFactor = apperr.Conflict("no_factor", "enrol a second factor first")
	// errRecentForFactors: adding or removing the last factor wants an authentication
	// within the last 5 minutes (SPEC §17).
	errRecentForFactors = apperr.New(apperr.KindForbidden, "reauthentication_required",
		"authenticate again to change your factors: sign-in or step-up within the last 5 minutes")
)

var errBadCredential = apperr.Validation(apperr.Issue{Field: "credential", Reason: "not a WebAuthn credential this ceremony accepts"})
