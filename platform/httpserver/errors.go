package httpserver

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/database/dberr"
)

// statusOf is the one mapping from error kinds to HTTP statuses.
var statusOf = map[apperr.Kind]int{
	apperr.KindInternal:        http.StatusInternalServerError,
	apperr.KindInvalid:         http.StatusBadRequest,
	apperr.KindUnauthenticated: http.StatusUnauthorized,
	apperr.KindForbidden:       http.StatusForbidden,
	apperr.KindNotFound:        http.StatusNotFound,
	apperr.KindConflict:        http.StatusConflict,
	apperr.KindTooLarge:        http.StatusRequestEntityTooLarge,
	apperr.KindRateLimited:     http.StatusTooManyRequests,
	apperr.KindUnavailable:     http.StatusServiceUnavailable,
	apperr.KindPrecondition:    http.StatusPreconditionFailed,
}

// StatusOf is the HTTP status an error of kind k is answered with.
func StatusOf(k apperr.Kind) int {
	if s, ok := statusOf[k]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// renderError is the one place an error becomes a response body (SPEC §4). Causes are
// logged here, once, and never sent.
func (s *Server) renderError(c *fiber.Ctx, err error) error {
	status, e := s.classify(err)
	ctx := c.UserContext()
	switch {
	case status == http.StatusServiceUnavailable:
		s.log.WarnContext(ctx, "unavailable", "route", s.routeOf(c), "code", e.Code, "error", err)
	case status >= 500:
		s.log.ErrorContext(ctx, "unhandled failure", "route", s.routeOf(c), "error", err)
	case e.Cause != nil && e.CauseIsClients:
		s.log.InfoContext(ctx, "refused: "+e.Code, "route", s.routeOf(c), "error", err)
	case e.Cause != nil:
		// A failure the contract answers with a client status (create_failed, revoke_failed).
		s.log.ErrorContext(ctx, "failure answered as "+e.Code, "route", s.routeOf(c), "error", err)
	}
	for k, v := range e.Headers {
		c.Set(k, v)
	}
	if pe := (*pageError)(nil); errors.As(err, &pe) {
		SecurePage(c, PagePolicy)
		c.Set(fiber.HeaderCacheControl, "no-store")
		c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
		c.Status(status)
		return pe.render(c, e)
	}
	if e.Style == apperr.StyleSCIM {
		body := map[string]any{"schemas": []string{scimErrorSchema}, "status": strconv.Itoa(status), "detail": e.Message}
		if e.Code != "" {
			body["scimType"] = e.Code
		}
		c.Status(status)
		c.Set(fiber.HeaderContentType, SCIMContentType)
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		return c.Send(b)
	}
	if e.Style == apperr.StyleOAuth {
		return c.Status(status).JSON(map[string]string{"error": e.Code, "error_description": e.Message})
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
	return c.Status(status).JSON(body)
}

func (s *Server) classify(err error) (int, *apperr.Error) {
	if e, ok := apperr.As(err); ok {
		if e.Kind == apperr.KindInternal && e.Code == "" && e.Style != apperr.StyleSCIM {
			return http.StatusInternalServerError, apperr.Internal
		}
		return StatusOf(e.Kind), e
	}
	var fe *fiber.Error
	if errors.As(err, &fe) {
		return fromFiber(fe)
	}
	if dberr.IsUnavailable(err) {
		return http.StatusServiceUnavailable, apperr.Unavailable
	}
	return http.StatusInternalServerError, apperr.Internal
}

// fromFiber turns the errors Fiber and fasthttp raise themselves (no route, body too large,
// malformed request) into SPEC §4 bodies. Their statuses are Fiber's, so some have no kind.
func fromFiber(fe *fiber.Error) (int, *apperr.Error) {
	switch fe.Code {
	case http.StatusNotFound:
		return fe.Code, apperr.NotFound("no such route")
	case http.StatusMethodNotAllowed:
		return fe.Code, apperr.BadRequest("method_not_allowed", "method not allowed on this route")
	case http.StatusRequestEntityTooLarge:
		return fe.Code, errTooLarge
	case http.StatusRequestHeaderFieldsTooLarge:
		return fe.Code, apperr.BadRequest("headers_too_large", "request headers too large")
	case http.StatusRequestTimeout:
		return fe.Code, apperr.BadRequest("request_timeout", "request timed out")
	}
	if fe.Code >= 400 && fe.Code < 500 {
		code := strings.ReplaceAll(strings.ToLower(http.StatusText(fe.Code)), " ", "_")
		if code == "" {
			code = "bad_request"
		}
		return fe.Code, apperr.BadRequest(code, "malformed request")
	}
	return http.StatusInternalServerError, apperr.Internal
}

var errTooLarge = apperr.New(apperr.KindTooLarge, "payload_too_large", "request body exceeds 64 KiB")

// SCIMContentType is the media type of SCIM messages (RFC 7644 §3.1).
const SCIMContentType = "application/scim+json"

const scimErrorSchema = "urn:ietf:params:scim:api:messages:2.0:Error"
