// Package apperr is the error model shared by services and the HTTP layer. Services
// return *Error for every outcome a client caused or must see; the one HTTP error handler
// renders it. Anything else is an unhandled failure: logged there, answered as 500.
// It must not import Fiber, so services stay free of HTTP.
package apperr

import (
	"errors"
	"net/http"
)

// Error is an answer for the client: a status, a contract code, a message, and any extra
// fields that a route's contract puts into its error body (e.g. "engine").
type Error struct {
	Status  int
	Code    string
	Message string
	// Fields are merged into the JSON body beside code and message.
	Fields map[string]any
	// Headers are set on the response (e.g. Retry-After).
	Headers map[string]string
	// Cause is kept for the log; never sent to the client.
	Cause error
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return e.Code + ": " + e.Message + ": " + e.Cause.Error()
	}
	return e.Code + ": " + e.Message
}

func (e *Error) Unwrap() error { return e.Cause }

// New returns an error answered with status, code and message.
func New(status int, code, message string) *Error {
	return &Error{Status: status, Code: code, Message: message}
}

// With returns a copy of e carrying one more body field.
func (e *Error) With(key string, value any) *Error {
	c := *e
	c.Fields = make(map[string]any, len(e.Fields)+1)
	for k, v := range e.Fields {
		c.Fields[k] = v
	}
	c.Fields[key] = value
	return &c
}

// Wrap returns a copy of e that keeps cause for the log.
func (e *Error) Wrap(cause error) *Error {
	c := *e
	c.Cause = cause
	return &c
}

// As returns the *Error inside err, if any.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// The SPEC §4 rejections every module shares.
func BadRequest(code, message string) *Error { return New(http.StatusBadRequest, code, message) }
func Unauthorized(message string) *Error {
	return New(http.StatusUnauthorized, "unauthorized", message)
}
func Forbidden(message string) *Error { return New(http.StatusForbidden, "forbidden", message) }
func NotFound(message string) *Error  { return New(http.StatusNotFound, "not_found", message) }
func Conflict(code, message string) *Error {
	return New(http.StatusConflict, code, message)
}

// Unavailable is the SPEC §4 answer when the store cannot be reached.
var Unavailable = New(http.StatusServiceUnavailable, "unavailable", "the store is unavailable, try again shortly")

// Internal is the only body an unhandled failure ever gets.
var Internal = New(http.StatusInternalServerError, "internal_error", "internal error")
