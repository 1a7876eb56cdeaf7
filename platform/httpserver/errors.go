package httpserver

import (
	"errors"
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/database/dberr"
)

// renderError is the one place an error becomes a response body (SPEC §4). 5xx causes are
// logged here, once, and never sent.
func (s *Server) renderError(c *fiber.Ctx, err error) error {
	e := s.classify(err)
	ctx := c.UserContext()
	switch {
	case e.Status == http.StatusServiceUnavailable:
		s.log.WarnContext(ctx, "store unavailable", "route", s.routeOf(c), "error", err)
	case e.Status >= 500:
		s.log.ErrorContext(ctx, "unhandled failure", "route", s.routeOf(c), "error", err)
	}
	for k, v := range e.Headers {
		c.Set(k, v)
	}
	body := make(map[string]any, len(e.Fields)+2)
	for k, v := range e.Fields {
		body[k] = v
	}
	if e.Code != "" {
		body["code"] = e.Code
	}
	if e.Message != "" {
		body["message"] = e.Message
	}
	return c.Status(e.Status).JSON(body)
}

func (s *Server) classify(err error) *apperr.Error {
	if e, ok := apperr.As(err); ok {
		if e.Status >= 500 && e.Status != http.StatusServiceUnavailable && e.Code == "" {
			return apperr.Internal
		}
		return e
	}
	var fe *fiber.Error
	if errors.As(err, &fe) {
		return fromFiber(fe)
	}
	if dberr.IsUnavailable(err) {
		return apperr.Unavailable
	}
	return apperr.Internal
}

// fromFiber turns the errors Fiber and fasthttp raise themselves (no route, body too large,
// malformed request) into SPEC §4 bodies.
func fromFiber(fe *fiber.Error) *apperr.Error {
	switch fe.Code {
	case http.StatusNotFound:
		return apperr.NotFound("no such route")
	case http.StatusMethodNotAllowed:
		return apperr.New(fe.Code, "method_not_allowed", "method not allowed on this route")
	case http.StatusRequestEntityTooLarge:
		return apperr.New(fe.Code, "payload_too_large", "request body exceeds 64 KiB")
	case http.StatusRequestHeaderFieldsTooLarge:
		return apperr.New(fe.Code, "headers_too_large", "request headers too large")
	case http.StatusRequestTimeout:
		return apperr.New(fe.Code, "request_timeout", "request timed out")
	}
	if fe.Code >= 400 && fe.Code < 500 {
		code := strings.ReplaceAll(strings.ToLower(http.StatusText(fe.Code)), " ", "_")
		if code == "" {
			code = "bad_request"
		}
		return apperr.New(fe.Code, code, "malformed request")
	}
	return apperr.Internal
}
