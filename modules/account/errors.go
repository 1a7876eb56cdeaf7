package account

import (
	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/identity"
)

var (
	errInvalidCredentials = apperr.New(apperr.KindUnauthenticated, "invalid_credentials", "wrong email or password")
	errEmailTaken         = identity.ErrEmailTaken
	errUserBlocked        = apperr.New(apperr.KindForbidden, "user_blocked", "this account is blocked by the project's administrators")
	// errUserDeprovisioned is its own code, not user_blocked: the person learns that their
	// organisation's directory, not the project's administrators, turned them off, and
	// whom to ask (SPEC §27).
	errUserDeprovisioned = apperr.New(apperr.KindForbidden, "user_deprovisioned", "this account is deactivated by your organisation's directory")
	errSignupClosed      = apperr.New(apperr.KindForbidden, "signup_closed", "sign-up is closed")
)
