package badge

import (
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/jsonbody"
	"github.com/authcore/authcore/platform/product"
)

// Limits of seed 4.4 / 8.
const (
	maxName             = 80
	minDays, maxDays    = 1, 365
	defaultRole         = identity.RoleViewer
	invalidRequestBody  = "invalid request body"
	codeValidation      = "validation_failed"
	codeNotAvailable    = "product_not_available"
	codeStorageNotReady = "storage_not_configured"
)

// Issue is one violation of the create body (seed 4.4 rule 1).
type Issue struct {
	Field  string `json:"field"`
	Reason string `json:"reason"`
}

// CreateRequest is a validated create body.
type CreateRequest struct {
	Name          string
	Product       product.Product
	Role          string
	ExpiresInDays *int
}

// parseCreate applies the create rules in SPEC §6 order: body shape (rule 1), then product
// mintable (rule 2), then role value (rule 3). Unknown fields are ignored.
func parseCreate(body []byte, products *product.Registry) (CreateRequest, error) {
	o, ok := jsonbody.Parse(body)
	if !ok {
		return CreateRequest{}, shapeError(Issue{"body", "must be a JSON object"})
	}
	var req CreateRequest
	var issues []Issue

	switch s, st := o.String("name"); st {
	case jsonbody.Absent:
		issues = append(issues, Issue{"name", "is required"})
	case jsonbody.Null, jsonbody.WrongType:
		issues = append(issues, Issue{"name", "must be a string"})
	default:
		switch n := utf8.RuneCountInString(s); {
		case n < 1 || n > maxName:
			issues = append(issues, Issue{"name", "must be 1 to 80 characters"})
		case strings.IndexFunc(s, unicode.IsControl) >= 0:
			issues = append(issues, Issue{"name", "must not contain control characters"})
		default:
			req.Name = s
		}
	}

	oneOf := "must be one of " + strings.Join(products.Keys(), ", ")
	switch s, st := o.String("product"); st {
	case jsonbody.Absent:
		issues = append(issues, Issue{"product", "is required"})
	case jsonbody.Null, jsonbody.WrongType:
		issues = append(issues, Issue{"product", oneOf})
	default:
		if p, ok := products.Get(s); ok {
			req.Product = p
		} else {
			issues = append(issues, Issue{"product", oneOf})
		}
	}

	days := "must be an integer from 1 to 365"
	switch v, whole, st := o.Integer("expiresInDays"); {
	case st == jsonbody.Absent:
	case st != jsonbody.OK || !whole || v < minDays || v > maxDays:
		issues = append(issues, Issue{"expiresInDays", days})
	default:
		d := int(v)
		req.ExpiresInDays = &d
	}

	if len(issues) > 0 {
		return CreateRequest{}, shapeError(issues...)
	}
	if ok, reason := req.Product.Mintable(); !ok {
		return CreateRequest{}, apperr.BadRequest(codeNotAvailable, reason)
	}
	switch s, st := o.String("role"); {
	case st == jsonbody.Absent:
		req.Role = defaultRole
	case st == jsonbody.OK && identity.RoleRank(s) > 0:
		req.Role = s
	default:
		return CreateRequest{}, apperr.BadRequest(codeValidation, "invalid role")
	}
	return req, nil
}

func shapeError(issues ...Issue) error {
	return apperr.New(http.StatusBadRequest, codeValidation, invalidRequestBody).With("issues", issues)
}
