package account

import (
	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/identity"
)

var (
	errInvalidCredentials = apperr.New(apperr.KindUnauthenticated, "invalid_credentials", "wrong email or password")
	errEmailTaken         = identity.ErrEmailTaken
	errUserBlocked        = apperr.New(apperr.KindForbidden, "user_blocked", "this account is blocked by the project's administrators")
	errSignupClosed       = apperr.New(apperr.KindForbidden, "signup_closed", "sign-up is closed")
)
