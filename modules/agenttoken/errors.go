package agenttoken

import (
	"github.com/authcore/authcore/platform/apperr"
)

// engineName is the seed's "engine" constant (SPEC §0): every error body of these routes
// carries it.
const engineName = "authcore"

// The seed's error bodies of 4.1: every creation failure is 400 create_failed, every revoke
// failure 404 revoke_failed, a list failure 500 list_failed. A store failure keeps its
// cause for the log; its text is never sent.
var (
	errCreateFailed = failure(apperr.KindInvalid, "create_failed", "the token could not be created")
	errRevokeFailed = failure(apperr.KindNotFound, "revoke_failed", "the token could not be revoked")
	errListFailed   = failure(apperr.KindInternal, "list_failed", "the tokens could not be listed")
	// ErrNotFound is a revoke of a token that is unknown, already revoked, or another
	// project's: all the same, so nothing reveals that a token exists elsewhere.
	ErrNotFound = failure(apperr.KindNotFound, "revoke_failed", "no such live token in this project")
	// ErrRollNotFound is ErrNotFound for a roll (SPEC §12).
	ErrRollNotFound = failure(apperr.KindNotFound, "roll_failed", "no such live token in this project")
	errRollFailed   = failure(apperr.KindInternal, "roll_failed", "the token could not be rolled")
)

// failed is a store failure of op, answered as the seed says.
func failed(op string, err error) error {
	switch op {
	case "create":
		return errCreateFailed.Wrap(err)
	case "list":
		return errListFailed.Wrap(err)
	case "revoke":
		return errRevokeFailed.Wrap(err)
	}
	return errRollFailed.Wrap(err)
}

func failure(kind apperr.Kind, code, message string) *apperr.Error {
	return apperr.New(kind, code, message).With("engine", engineName)
}

// invalidRoll is a roll the body or the project's policy refuses.
func invalidRoll(message string) error {
	return failure(apperr.KindInvalid, "roll_failed", message)
}

// invalidCreate is a create body that breaks SPEC §5; message lists every problem.
func invalidCreate(message string) error {
	return failure(apperr.KindInvalid, "create_failed", message)
}
