package badge

import (
	"errors"

	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/product"
)

// Codes of seed 4.4 and SPEC §6.
const (
	codeValidation      = "validation_failed"
	codeNotAvailable    = "product_not_available"
	codeStorageNotReady = "storage_not_configured"
)

var errInvalidRole = apperr.BadRequest(codeValidation, "invalid role")

// ErrNotFound is a revoke of a badge that is unknown, already revoked, or another
// project's: all answered the same.
var ErrNotFound = apperr.NotFound("no such badge in this project")

// mintFailed applies seed 4.4 rule 4: a product whose backing service is not configured is
// 503 storage_not_configured with the product's message; any other failure is unhandled.
func mintFailed(err error) error {
	if errors.Is(err, product.ErrNotConfigured) {
		return apperr.New(apperr.KindUnavailable, codeStorageNotReady, err.Error()).Wrap(err)
	}
	return err
}
