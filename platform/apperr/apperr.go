// Package apperr is the error model shared by services and the HTTP layer. Services
// return *Error for every outcome a client caused or must see, saying what kind of outcome
// it is, never which HTTP status it gets: platform/httpserver alone maps kinds to statuses
// and renders bodies. Anything that is not an *Error is an unhandled failure, logged there
// and answered 500. It must not import net/http or Fiber, so services stay free of HTTP.
package apperr

import (
	"errors"
	"maps"
)

// Kind is what sort of outcome an error is.
type Kind uint8

const (
	// KindInternal is a failure the client did not cause (500).
	KindInternal Kind = iota
	// KindInvalid is a request that is malformed or breaks a rule (400).
	KindInvalid
	// KindUnauthenticated is a missing or failed credential (401).
	KindUnauthenticated
	// KindForbidden is a credential without the right to do this (403).
	KindForbidden
	// KindNotFound is something that does not exist, or that the caller may not know of (404).
	KindNotFound
	// KindConflict is a change that clashes with the current state (409).
	KindConflict
	// KindTooLarge is a request body over the limit (413).
	KindTooLarge
	// KindRateLimited is a client over its budget (429).
	KindRateLimited
	// KindUnavailable is a dependency that cannot serve right now (503).
	KindUnavailable
	// KindPrecondition is a conditional request whose condition failed (412, If-Match).
	KindPrecondition
)

// Error is an answer for the client: a kind, a contract code, a message, and any extra
// fields that a route's contract puts into its error body (e.g. "engine").
type Error struct {
	Kind    Kind
	Code    string
	Message string
	// Fields are merged into the JSON body beside code and message.
	Fields map[string]any
	// Headers are set on the response (e.g. Retry-After).
	Headers map[string]string
	// Cause is kept for the log; never sent to the client. An error that carries one is
	// logged when it is rendered, whatever its kind.
	Cause error
	// CauseIsClients marks Cause as the detail of what the client sent wrong (Because):
	// logged at INFO, since anyone can send wrong things, rather than as a failure.
	CauseIsClients bool
	// Style is the body's shape: the seed's {code, message}, or RFC 6749 §5.2's.
	Style Style
}

// Style is the shape of an error body.
type Style uint8

const (
	// StyleSeed is {code, message, …fields} (seed §4).
	StyleSeed Style = iota
	// StyleOAuth is {error: code, error_description: message} (RFC 6749 §5.2), for the
	// OAuth endpoints, whose clients are stock libraries.
	StyleOAuth
	// StyleSCIM is RFC 7644 §3.12's {schemas, status, scimType, detail}, for the SCIM
	// endpoints: code is the scimType ("" for none), message the detail.
	StyleSCIM
)

// OAuth returns an RFC 6749 §5.2 error of kind: code is the error, message its
// error_description.
func OAuth(kind Kind, code, message string) *Error {
	return &Error{Kind: kind, Code: code, Message: message, Style: StyleOAuth}
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return e.Code + ": " + e.Message + ": " + e.Cause.Error()
	}
	return e.Code + ": " + e.Message
}

func (e *Error) Unwrap() error { return e.Cause }

// New returns an error of kind with code and message.
func New(kind Kind, code, message string) *Error {
	return &Error{Kind: kind, Code: code, Message: message}
}

// With returns a copy of e carrying one more body field. Errors are often package-level
// values shared by every request, so nothing here changes e itself.
func (e *Error) With(key string, value any) *Error {
	c := *e
	c.Fields = plus(e.Fields, key, value)
	return &c
}

// WithHeader returns a copy of e that sets one more response header.
func (e *Error) WithHeader(name, value string) *Error {
	c := *e
	c.Headers = plus(e.Headers, name, value)
	return &c
}

// plus returns a copy of m with k set to v.
func plus[V any](m map[string]V, k string, v V) map[string]V {
	c := maps.Clone(m)
	if c == nil {
		c = make(map[string]V, 1)
	}
	c[k] = v
	return c
}

// Wrap returns a copy of e that keeps cause for the log.
func (e *Error) Wrap(cause error) *Error {
	c := *e
	c.Cause = cause
	return &c
}

// Because returns a copy of e that keeps cause, the detail of what the client sent wrong,
// for the log at INFO: a refusal anyone can provoke must not fill the error log.
func (e *Error) Because(cause error) *Error {
	c := e.Wrap(cause)
	c.CauseIsClients = true
	return c
}

// As returns the *Error inside err, if any.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// IsKind reports whether err is an *Error of kind k.
func IsKind(err error, k Kind) bool {
	e, ok := As(err)
	return ok && e.Kind == k
}

// The SPEC §4 rejections every module shares.
func BadRequest(code, message string) *Error { return New(KindInvalid, code, message) }
func Unauthorized(message string) *Error     { return New(KindUnauthenticated, "unauthorized", message) }
func Forbidden(message string) *Error        { return New(KindForbidden, "forbidden", message) }
func NotFound(message string) *Error         { return New(KindNotFound, "not_found", message) }
func Conflict(code, message string) *Error   { return New(KindConflict, code, message) }

// Issue is one violation listed in a validation_failed answer.
type Issue struct {
	Field  string `json:"field"`
	Reason string `json:"reason"`
}

// Validation is the one validation_failed answer: "invalid request body" with every
// violation listed in issues (seed 4.4 rule 1; used by every body that is validated).
func Validation(issues ...Issue) *Error {
	return BadRequest("validation_failed", "invalid request body").With("issues", issues)
}

// NotAnObject is the issue of a body that is missing or not a JSON object.
var NotAnObject = Issue{Field: "body", Reason: "must be a JSON object"}

// CSRFRejected is the answer to a cookie-authenticated change from an origin that may not
// make it (SPEC §3, §9).
var CSRFRejected = New(KindForbidden, "csrf_rejected", "cookie-authenticated changes need an allowed Origin")

// Unavailable is the SPEC §4 answer when the store cannot be reached.
var Unavailable = New(KindUnavailable, "unavailable", "the store is unavailable, try again shortly")

// Internal is the only body an unhandled failure ever gets.
var Internal = New(KindInternal, "internal_error", "internal error")
