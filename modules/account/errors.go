package account

import (
	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/identity"
)

var (
	errInvalidCredentials = apperr.New(apperr.KindUnauthenticated, "invalid_credentials", "wrong email or password")
	errEmailTaken         = identity.ErrEmailTaken
	errSignupClosed       = apperr.New(apperr.KindForbidden, "signup_closed", "sign-up is closed")
)
