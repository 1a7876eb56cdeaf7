package account

import (
	"errors"

	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/identity"
)

var (
	errInvalidCredentials = apperr.New(apperr.KindUnauthenticated, "invalid_credentials", "wrong email or password")
	errEmailTaken         = apperr.Conflict("email_taken", "an account with this email already exists")
	errSignupClosed       = apperr.New(apperr.KindForbidden, "signup_closed", "sign-up is closed")
)

var errSecondFactor = apperr.New(apperr.KindUnauthenticated, "invalid_second_factor", "the code, recovery code or passkey did not verify")

// mfaError answers identity.ErrSecondFactor as the API's error; the MFA module's own
// errors (an expired mfaToken) are already answers.
func mfaError(err error) error {
	if errors.Is(err, identity.ErrSecondFactor) {
		return errSecondFactor
	}
	return err
}
