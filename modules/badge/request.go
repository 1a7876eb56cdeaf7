package badge

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/authcore/authcore/ent/schema"
	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/jsonbody"
	"github.com/authcore/authcore/platform/product"
)

// Limits of seed 4.4 / 8.
const (
	maxName          = 80
	minDays, maxDays = 1, 365
	defaultRole      = identity.RoleViewer
	maxOrgID         = 64
)

// Issue is one violation of the create body (seed 4.4 rule 1).
type Issue = apperr.Issue

// CreateRequest is a validated create body.
type CreateRequest struct {
	Name          string
	Product       product.Product
	Role          string
	ExpiresInDays *int
	// OrgID binds the badge to an org of the project (SPEC §26), or "".
	OrgID string
}

// parseCreate applies the create rules in SPEC §6 order: body shape (rule 1), then product
// mintable (rule 2), then role value (rule 3). Unknown fields are ignored.
func parseCreate(body []byte, products *product.Registry) (CreateRequest, error) {
	o, ok := jsonbody.Parse(body)
	if !ok {
		return CreateRequest{}, apperr.Validation(apperr.NotAnObject)
	}
	var req CreateRequest
	var issues []Issue

	switch s, st := o.String("name"); st {
	case jsonbody.Absent:
		issues = append(issues, Issue{Field: "name", Reason: "is required"})
	case jsonbody.Null, jsonbody.WrongType:
		issues = append(issues, Issue{Field: "name", Reason: "must be a string"})
	default:
		switch n := utf8.RuneCountInString(s); {
		case n < 1 || n > maxName:
			issues = append(issues, Issue{Field: "name", Reason: "must be 1 to 80 characters"})
		case strings.IndexFunc(s, unicode.IsControl) >= 0:
			issues = append(issues, Issue{Field: "name", Reason: "must not contain control characters"})
		default:
			req.Name = s
		}
	}

	oneOf := "must be one of " + strings.Join(products.Keys(), ", ")
	switch s, st := o.String("product"); st {
	case jsonbody.Absent:
		issues = append(issues, Issue{Field: "product", Reason: "is required"})
	case jsonbody.Null, jsonbody.WrongType:
		issues = append(issues, Issue{Field: "product", Reason: oneOf})
	default:
		if p, ok := products.Get(s); ok {
			req.Product = p
		} else {
			issues = append(issues, Issue{Field: "product", Reason: oneOf})
		}
	}

	days := "must be an integer from 1 to 365"
	switch v, whole, st := o.Integer("expiresInDays"); {
	case st == jsonbody.Absent:
	case st != jsonbody.OK || !whole || v < minDays || v > maxDays:
		issues = append(issues, Issue{Field: "expiresInDays", Reason: days})
	default:
		d := int(v)
		req.ExpiresInDays = &d
	}

	switch s, st := o.String("orgId"); st {
	case jsonbody.Absent:
	case jsonbody.OK:
		if !strings.HasPrefix(s, schema.OrgIDPrefix) || len(s) > maxOrgID {
			issues = append(issues, Issue{Field: "orgId", Reason: "must be an org's id (org_…)"})
		} else {
			req.OrgID = s
		}
	default:
		issues = append(issues, Issue{Field: "orgId", Reason: "must be a string"})
	}

	if len(issues) > 0 {
		return CreateRequest{}, apperr.Validation(issues...)
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
		return CreateRequest{}, errInvalidRole
	}
	return req, nil
}
