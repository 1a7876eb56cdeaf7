package account

import (
	"net/http"

	"github.com/authcore/authcore/platform/apperr"
)

var (
	errInvalidCredentials = apperr.New(http.StatusUnauthorized, "invalid_credentials", "wrong email or password")
	errEmailTaken         = apperr.Conflict("email_taken", "an account with this email already exists")
	errSignupClosed       = apperr.New(http.StatusForbidden, "signup_closed", "sign-up is closed")
)

// Issue is one violation in a validation_failed answer.
type Issue struct {
	Field  string `json:"field"`
	Reason string `json:"reason"`
}

func invalid(issues []Issue) *apperr.Error {
	return apperr.BadRequest("validation_failed", "invalid request body").With("issues", issues)
}
