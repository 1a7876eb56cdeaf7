package session

import (
	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/identity"
)

var (
	errNotReady      = apperr.New(apperr.KindUnavailable, "auth_core_sdk_not_ready", "the auth engine is not initialized yet").Wrap(identity.ErrEngineNotReady)
	errRefreshDenied = apperr.Unauthorized("refresh token missing, invalid or expired")
	errTokenTheft    = apperr.New(apperr.KindUnauthenticated, "token_theft_detected", "a rotated refresh token was reused; the session is revoked")
)

func verifyFailed(reason string) error { return &identity.VerifyError{Reason: reason} }
