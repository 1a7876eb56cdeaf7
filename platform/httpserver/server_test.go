package httpserver_test

import (
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"go.uber.org/fx"

	"github.com/authcore/authcore/internal/testkit"
	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/health"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/logging"
	"github.com/authcore/authcore/platform/secret"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// graph is the server on the platform core with the probes; each test adds its routes.
func graph(cfg config.Config, keys secret.MasterKeys, out logging.Output) fx.Option {
	return fx.Options(testkit.Core(cfg, keys, out), health.Module)
}

// testRoutes are registered only in these tests, to drive the error handler.
func testRoutes() []httpserver.Route {
	h := func(f fiber.Handler) []fiber.Handler { return []fiber.Handler{f} }
	return []httpserver.Route{
		{Method: http.MethodGet, Path: "/test/panic", Handlers: h(func(*fiber.Ctx) error { panic("boom: secret-cause-123") })},
		{Method: http.MethodGet, Path: "/test/fail", Handlers: h(func(*fiber.Ctx) error { return errors.New("db exploded: secret-cause-456") })},
		{Method: http.MethodGet, Path: "/test/conflict", Handlers: h(func(*fiber.Ctx) error {
			return apperr.Conflict("email_taken", "taken").With("engine", "authcore")
		})},
		{Method: http.MethodGet, Path: "/test/refused", Handlers: h(func(*fiber.Ctx) error {
			return apperr.BadRequest("saml_malformed", "not well-formed").Because(errors.New("line 1: refused-cause-789"))
		})},
		{Method: http.MethodGet, Path: "/test/oauth", Handlers: h(func(*fiber.Ctx) error {
			return apperr.OAuth(apperr.KindUnauthenticated, "invalid_client", "client authentication failed").WithHeader("WWW-Authenticate", "Basic")
		})},
		{Method: http.MethodGet, Path: "/test/slow", Handlers: h(func(c *fiber.Ctx) error {
			select {
			case inSlow <- struct{}{}:
			default:
			}
			time.Sleep(300 * time.Millisecond)
			return c.JSON(fiber.Map{"done": true})
		})},
		{Method: http.MethodPost, Path: "/test/echo/:id", Handlers: h(func(c *fiber.Ctx) error {
			return c.JSON(fiber.Map{"len": len(c.Body())})
		})},
	}
}

func TestErrorBodies(t *testing.T) {
	a := testkit.StartURL(t, "sqlite", "sqlite::memory:", graph, testkit.WithFx(httpserver.AsRoutes(testRoutes)))

	t.Run("unmatched route is 404 not_found JSON", func(t *testing.T) {
		r := a.Get("/v1/nothing/here")
		r.Expect(t, 404, map[string]any{"code": "not_found"})
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Fatalf("content type %q", ct)
		}
	})
	t.Run("body over 64 KiB is 413 payload_too_large", func(t *testing.T) {
		r := a.Do(testkit.Req{Method: http.MethodPost, Path: "/test/echo/1", Body: strings.Repeat("x", 100<<10)})
		r.Expect(t, 413, map[string]any{"code": "payload_too_large"})
	})
	t.Run("body of exactly 64 KiB is accepted", func(t *testing.T) {
		r := a.Do(testkit.Req{Method: http.MethodPost, Path: "/test/echo/1", Body: strings.Repeat("x", 64<<10)})
		r.Expect(t, 200, map[string]any{"len": 64 << 10})
	})
	t.Run("panic is 500 internal_error and the server keeps serving", func(t *testing.T) {
		r := a.Get("/test/panic")
		r.Expect(t, 500, map[string]any{"code": "internal_error", "message": "internal error"})
		if strings.Contains(string(r.Body), "secret-cause") || strings.Contains(string(r.Body), "goroutine") {
			t.Fatalf("cause leaked to the client: %s", r.Body)
		}
		a.Get("/healthz").Expect(t, 200, map[string]any{"status": "ok"})
		if !a.Logs.Contains("secret-cause-123") || !a.Logs.Contains("handler panicked") {
			t.Fatalf("panic cause not logged:\n%s", a.Logs)
		}
	})
	t.Run("unhandled error is 500 with the cause logged, not sent", func(t *testing.T) {
		r := a.Get("/test/fail")
		r.Expect(t, 500, map[string]any{"code": "internal_error", "message": "internal error"})
		if strings.Contains(string(r.Body), "secret-cause") {
			t.Fatalf("cause leaked: %s", r.Body)
		}
		if !a.Logs.Contains("secret-cause-456") {
			t.Fatal("cause not logged")
		}
	})
	t.Run("an OAuth error is rendered as RFC 6749 says, by the same renderer", func(t *testing.T) {
		r := a.Get("/test/oauth")
		got := r.Expect(t, 401, map[string]any{"error": "invalid_client", "error_description": "client authentication failed"})
		if len(got) != 2 || r.Header.Get("WWW-Authenticate") != "Basic" || r.Header.Get("Cache-Control") != "no-store" {
			t.Fatalf("%v %v", got, r.Header)
		}
	})
	t.Run("a refusal's cause is logged at INFO, not as a failure, and not sent", func(t *testing.T) {
		r := a.Get("/test/refused")
		r.Expect(t, 400, map[string]any{"code": "saml_malformed", "message": "not well-formed"})
		line := testkit.GrepLines(a.Logs.String(), "refused-cause-789")
		if strings.Contains(string(r.Body), "refused-cause") || !strings.Contains(line, `"level":"INFO"`) {
			t.Fatalf("body %s; log line %q", r.Body, line)
		}
	})
	t.Run("apperr fields are merged into the body", func(t *testing.T) {
		a.Get("/test/conflict").Expect(t, 409, map[string]any{"code": "email_taken", "message": "taken", "engine": "authcore"})
	})
}

func TestObservability(t *testing.T) {
	a := testkit.StartURL(t, "sqlite", "sqlite::memory:", graph, testkit.WithFx(httpserver.AsRoutes(testRoutes)))

	r := a.Do(testkit.Req{Method: http.MethodPost, Path: "/test/echo/usr_SECRETID?token=querysecret", Body: `{"password":"bodysecret"}`,
		Header: map[string]string{"Authorization": "Bearer headersecret", "Cookie": "sAccessToken=cookiesecret", "X-Request-Id": "req-abc.1"}})
	r.Expect(t, 200, nil)
	if got := r.Header.Get("X-Request-Id"); got != "req-abc.1" {
		t.Fatalf("request id %q not echoed", got)
	}
	a.Get("/no/such/usr_OTHERID")
	logs := a.Logs.String()
	for _, secret := range []string{"querysecret", "bodysecret", "headersecret", "cookiesecret"} {
		if strings.Contains(logs, secret) {
			t.Errorf("log holds %q:\n%s", secret, logs)
		}
	}
	if !strings.Contains(logs, `"request_id":"req-abc.1"`) {
		t.Errorf("access log has no request id:\n%s", logs)
	}
	if got := a.Get("/healthz", "X-Request-Id", "bad id <script>"); got.Header.Get("X-Request-Id") == "bad id <script>" {
		t.Error("unsafe request id kept")
	}

	m := string(a.Get("/metrics").Body)
	for _, want := range []string{
		`authcore_http_requests_total{method="POST",route="/test/echo/:id",status="200"} 1`,
		`authcore_http_requests_total{method="GET",route="unmatched",status="404"} 1`,
		`authcore_http_request_duration_seconds_bucket{method="POST",route="/test/echo/:id"`,
		"go_goroutines", "process_resident_memory_bytes", "go_sql_open_connections",
	} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %s\n%s", want, testkit.GrepLines(m, "authcore_http_requests"))
		}
	}
	if strings.Contains(m, "SECRETID") || strings.Contains(m, "OTHERID") {
		t.Error("a raw path became a label value")
	}
}

func TestDuplicateRouteIsRefused(t *testing.T) {
	dup := func() []httpserver.Route {
		return []httpserver.Route{{Method: http.MethodGet, Path: "/healthz", Handlers: []fiber.Handler{func(c *fiber.Ctx) error { return nil }}}}
	}
	// Building must fail with an error naming the route, not panic or silently shadow it.
	err := testkit.BuildErr(t, graph, testkit.WithFx(httpserver.AsRoutes(dup)))
	if err == nil || !strings.Contains(err.Error(), "GET /healthz is registered twice") {
		t.Fatalf("err = %v", err)
	}
}

// inSlow says a request reached /test/slow's handler: the shutdown tests stop the app
// then, rather than after a sleep that a busy machine can outlast.
var inSlow = make(chan struct{}, 1)

func waitInSlow(t *testing.T) {
	t.Helper()
	select {
	case <-inSlow:
	case <-time.After(10 * time.Second):
		t.Fatal("the request never reached the handler")
	}
}

// Stopping the app (what SIGTERM does) lets an in-flight request finish, then refuses new
// connections.
func TestGracefulShutdownDrainsInFlight(t *testing.T) {
	a := testkit.StartURL(t, "sqlite", "sqlite::memory:", graph, testkit.WithFx(httpserver.AsRoutes(testRoutes)))
	done := make(chan *testkit.Response, 1)
	go func() { done <- a.Get("/test/slow") }()
	waitInSlow(t)
	if err := a.Stop(); err != nil {
		t.Fatal(err)
	}
	r := <-done
	r.Expect(t, 200, map[string]any{"done": true})
	if _, err := http.Get(a.Base + "/healthz"); err == nil {
		t.Fatal("still accepting after stop")
	}
}

// A client still sending a body far over the limit gets the 413 answer, not a connection
// reset: the server reads and discards (bounded) what is in flight before it closes.
func TestTooLargeBodyGetsItsAnswer(t *testing.T) {
	a := testkit.StartURL(t, "sqlite", "sqlite::memory:", graph, testkit.WithFx(httpserver.AsRoutes(testRoutes)))
	body := strings.Repeat("x", 1<<20)
	for i := range 20 {
		req, _ := http.NewRequest(http.MethodPost, a.Base+"/test/echo/1", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil || res.StatusCode != 413 || !strings.Contains(string(b), "payload_too_large") {
			t.Fatalf("request %d: %d %s %v", i+1, res.StatusCode, b, err)
		}
	}
}

// A connection that never sends a byte has no request to finish, so stopping does not wait
// for it. Browsers open such connections ahead of need (Chromium's preconnect), and
// fasthttp alone would wait out its read timeout, longer than the shutdown's.
func TestShutdownDoesNotWaitForSilentConnections(t *testing.T) {
	a := testkit.StartURL(t, "sqlite", "sqlite::memory:", graph, testkit.WithFx(httpserver.AsRoutes(testRoutes)))
	silent, err := net.Dial("tcp", strings.TrimPrefix(a.Base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	done := make(chan *testkit.Response, 1)
	go func() { done <- a.Get("/test/slow") }()
	waitInSlow(t)
	start := time.Now()
	if err := a.Stop(); err != nil {
		t.Fatalf("stop after %v: %v", time.Since(start), err)
	}
	(<-done).Expect(t, 200, map[string]any{"done": true})
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("stop took %v with a silent connection open", took)
	}
	// The silent client is told, as at fasthttp's own read timeout, and nothing is logged
	// as a failure.
	_ = silent.SetReadDeadline(time.Now().Add(5 * time.Second))
	got, _ := io.ReadAll(silent)
	if !strings.HasPrefix(string(got), "HTTP/1.1 408 ") {
		t.Fatalf("the silent connection read %q", got)
	}
	if strings.Contains(a.Logs.String(), `"level":"ERROR"`) {
		t.Fatalf("an error was logged:\n%s", a.Logs)
	}
}
