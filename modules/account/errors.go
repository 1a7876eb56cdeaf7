package account

import (
	"github.com/authcore/authcore/platform/apperr"
)

var (
	errInvalidCredentials = apperr.New(apperr.KindUnauthenticated, "invalid_credentials", "wrong email or password")
	errEmailTaken         = apperr.Conflict("email_taken", "an account with this email already exists")
	errSignupClosed       = apperr.New(apperr.KindForbidden, "signup_closed", "sign-up is closed")
)
