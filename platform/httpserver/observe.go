package httpserver

import (
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/oklog/ulid/v2"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/authcore/authcore/platform/logging"
)

// RequestIDHeader carries the request id in and out.
const RequestIDHeader = "X-Request-Id"

// observe is the outermost middleware. It renders errors itself (so the status it records
// is the one the client gets), then counts, times and logs the request. The access log
// never holds a header value, a cookie, a body or a query string: only the route template,
// the path, the status and the timing.
func (s *Server) observe(c *fiber.Ctx) error {
	start := time.Now()
	rid := requestID(c)
	c.Set(RequestIDHeader, rid)
	// Answers carry secrets shown once and per-user data: no cache keeps them unless a
	// route says otherwise (JWKS, metadata, the console's files).
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.SetUserContext(logging.WithRequestID(c.UserContext(), rid))
	var span trace.Span
	if s.tracer != nil {
		ctx := s.tracing.Propagator.Extract(c.UserContext(), headerCarrier{c})
		ctx, span = s.tracer.Start(ctx, methodLabel(c.Method()), trace.WithSpanKind(trace.SpanKindServer))
		c.SetUserContext(ctx)
	}

	var err error
	if ambiguousFraming(c) {
		// The body's end is ambiguous, so whatever follows it on this connection may be a
		// request smuggled past a proxy that framed it the other way: answer and close.
		c.Context().SetConnectionClose()
		err = errAmbiguousFraming
	} else {
		if s.trusted != nil {
			c.Locals(trustedKey{}, s.trusted)
		}
		err = c.Next()
	}
	if err != nil {
		if rerr := s.renderError(c, err); rerr != nil {
			s.log.ErrorContext(c.UserContext(), "rendering an error failed", "error", rerr)
			c.Status(fiber.StatusInternalServerError)
		}
	}

	status := c.Response().StatusCode()
	route := s.routeOf(c)
	// c.Method() aliases Fiber's recycled request buffer; a label value must not.
	method := methodLabel(c.Method())
	elapsed := time.Since(start)
	if span != nil {
		// Named by the route template, never the raw path, like the metrics.
		span.SetName(method + " " + route)
		span.SetAttributes(semconv.HTTPRequestMethodKey.String(method), semconv.HTTPRoute(route), semconv.HTTPResponseStatusCode(status))
		if status >= 500 {
			span.SetStatus(codes.Error, "")
		}
		span.End()
	}
	s.http.Requests.WithLabelValues(method, route, strconv.Itoa(status)).Inc()
	s.http.Duration.WithLabelValues(method, route).Observe(elapsed.Seconds())
	s.log.InfoContext(c.UserContext(), "request",
		"method", method,
		"route", route,
		"path", c.Path(), // copied by slog's encoder before the handler returns
		"status", status,
		"duration_ms", float64(elapsed.Microseconds())/1000,
	)
	return nil
}

// routeOf is the matched route template, or "unmatched". Read after c.Next(): only then
// does Fiber know the last route that matched. When no route matched, that is the
// middleware layer at "/", which is not one of ours (though its path is that of the
// console's GET /), so ids in unknown paths never become label values.
func (s *Server) routeOf(c *fiber.Ctx) string {
	r := c.Route()
	if r == nil || s.middleware[r] {
		return "unmatched"
	}
	if _, ok := s.templates[r.Method][r.Path]; !ok {
		return "unmatched"
	}
	return r.Path
}

// requestID keeps a caller's id when it is short and plain (so it cannot smuggle anything
// into a log line), else makes one.
func requestID(c *fiber.Ctx) string {
	in := c.Get(RequestIDHeader)
	if in != "" && len(in) <= 64 {
		ok := true
		for i := 0; i < len(in); i++ {
			b := in[i]
			if !(b == '-' || b == '_' || b == '.' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z') {
				ok = false
				break
			}
		}
		if ok {
			return string([]byte(in)) // copy: the header buffer is recycled
		}
	}
	return ulid.Make().String()
}

// methodLabels maps the request method onto a fixed set of constant strings: safe to keep
// after the request, and bounded as a label value.
var methodLabels = map[string]string{}

func init() {
	for _, m := range []string{fiber.MethodGet, fiber.MethodPost, fiber.MethodPut, fiber.MethodPatch,
		fiber.MethodDelete, fiber.MethodHead, fiber.MethodOptions} {
		methodLabels[m] = m
	}
}

func methodLabel(m string) string {
	if l, ok := methodLabels[m]; ok {
		return l
	}
	return "OTHER"
}

// headerCarrier reads a W3C traceparent from the request; values are parsed into the span
// context at once, so nothing outlives Fiber's buffers.
type headerCarrier struct{ c *fiber.Ctx }

func (h headerCarrier) Get(key string) string { return h.c.Get(key) }
func (h headerCarrier) Set(string, string)    {}
func (h headerCarrier) Keys() []string        { return []string{"traceparent", "tracestate"} }
