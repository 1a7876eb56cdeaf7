package scim

import (
	"errors"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/database/dberr"
)

// kinds maps the statuses SCIM answers with to error kinds; httpserver maps them back.
var kinds = map[int]apperr.Kind{
	http.StatusBadRequest: apperr.KindInvalid, http.StatusUnauthorized: apperr.KindUnauthenticated,
	http.StatusForbidden: apperr.KindForbidden, http.StatusNotFound: apperr.KindNotFound,
	http.StatusConflict: apperr.KindConflict, http.StatusRequestEntityTooLarge: apperr.KindTooLarge,
	http.StatusServiceUnavailable: apperr.KindUnavailable, http.StatusTooManyRequests: apperr.KindRateLimited,
	http.StatusPreconditionFailed: apperr.KindPrecondition,
}

// scimErr is an RFC 7644 §3.12 error: status, scimType ("" for none) and detail.
func scimErr(status int, scimType, detail string) *apperr.Error {
	k, ok := kinds[status]
	if !ok {
		k = apperr.KindInternal
	}
	e := apperr.New(k, scimType, detail)
	e.Style = apperr.StyleSCIM
	return e
}

// The scimTypes of RFC 7644 §3.12; another error's code is not one, so it is left out.
var scimTypes = map[string]bool{"invalidFilter": true, "tooMany": true, "uniqueness": true, "mutability": true,
	"invalidSyntax": true, "invalidPath": true, "noTarget": true, "invalidValue": true, "invalidVers": true, "sensitive": true}

var (
	errUnauthorized = scimErr(http.StatusUnauthorized, "", "present this directory's token: Authorization: Bearer ac_scim_…")
	errNotFound     = scimErr(http.StatusNotFound, "", "no such resource in this directory")
)

// asSCIM gives every error a SCIM route returns RFC 7644's shape, whichever layer raised
// it (the guard, a body check, Fiber, the store): a SCIM client reads no other.
func asSCIM(c *fiber.Ctx) error {
	err := c.Next()
	if err == nil {
		return nil
	}
	if e, ok := apperr.As(err); ok {
		if e.Style == apperr.StyleSCIM {
			return err
		}
		out := *e
		out.Style = apperr.StyleSCIM
		if !scimTypes[out.Code] {
			out.Code = ""
			if out.Kind == apperr.KindInvalid {
				out.Code = "invalidValue"
			}
		}
		if out.Kind == apperr.KindInternal {
			out.Message = "internal error"
		}
		return &out
	}
	var fe *fiber.Error
	if errors.As(err, &fe) {
		if fe.Code == http.StatusNotFound {
			return scimErr(fe.Code, "", "no such endpoint")
		}
		return scimErr(fe.Code, "", fe.Message)
	}
	if dberr.IsUnavailable(err) {
		e := scimErr(http.StatusServiceUnavailable, "", "the store is unavailable, try again shortly")
		e.Cause = err
		return e
	}
	e := scimErr(http.StatusInternalServerError, "", "internal error")
	e.Cause = err
	return e
}
