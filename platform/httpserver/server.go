// Package httpserver is the Fiber application of the process: routes contributed by
// modules through AsRoutes, the one error handler that renders every error body of SPEC §4,
// request ids, the access log and the HTTP metrics. It must not know any module's routes.
package httpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/netip"
	"reflect"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/gofiber/fiber/v2/middleware/recover"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/fx"

	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/metrics"
	"github.com/authcore/authcore/platform/tracing"
)

// BodyLimit is the largest request body accepted (SPEC §4: over it, 413).
const BodyLimit = 64 << 10

// ShutdownTimeout bounds how long in-flight requests may finish after SIGTERM.
const ShutdownTimeout = 10 * time.Second

// Route is one method and path template with its handlers. A guard is simply the first
// handler: each module attaches its guards to each route (STYLE 6).
type Route struct {
	Method   string
	Path     string
	Handlers []fiber.Handler
	// Module is the folder under modules/ whose route it is (AsModuleRoutes sets it);
	// "" for the platform's own, which every process serves.
	Module string
	// BodyLimit raises BodyLimit for this route alone (a bulk import); 0 keeps it.
	BodyLimit int
}

// Collection is the routes of a collection a project admin manages: list (GET base),
// create (POST base) and revoke (DELETE base/:idParam), each behind the same guards.
func Collection(base, idParam string, guards []fiber.Handler, list, create, revoke fiber.Handler) []Route {
	behind := func(h fiber.Handler) []fiber.Handler { return append(append([]fiber.Handler(nil), guards...), h) }
	return []Route{
		{Method: fiber.MethodGet, Path: base, Handlers: behind(list)},
		{Method: fiber.MethodPost, Path: base, Handlers: behind(create)},
		{Method: fiber.MethodDelete, Path: base + "/:" + idParam, Handlers: behind(revoke)},
	}
}

// AsRoutes contributes the []Route returned by constructor f: platform routes, served
// by every process. It is the only place that spells the group tag.
func AsRoutes(f any) fx.Option {
	return fx.Provide(fx.Annotate(f, fx.ResultTags(`group:"routes,flatten"`)))
}

// AsModuleRoutes contributes module's routes, returned by constructor f (whose first
// result is []Route): served only when AUTHCORE_MODULES names module, or is empty. A
// product plugin's routes are the badge module's. The wrapper has f's own signature, so
// fx sees f's dependencies; reflection is the only way to keep that for any f.
func AsModuleRoutes(module string, f any) fx.Option {
	fv := reflect.ValueOf(f)
	if fv.Kind() != reflect.Func || fv.Type().NumOut() == 0 || fv.Type().Out(0) != reflect.TypeOf([]Route(nil)) {
		return fx.Error(fmt.Errorf("httpserver.AsModuleRoutes(%q): want a constructor returning []Route, got %T", module, f))
	}
	tagged := reflect.MakeFunc(fv.Type(), func(args []reflect.Value) []reflect.Value {
		out := fv.Call(args)
		routes := out[0].Interface().([]Route)
		for i := range routes {
			routes[i].Module = module
		}
		return out
	})
	return AsRoutes(tagged.Interface())
}

// Module provides the server. It binds nothing: only the serve command (and the test
// harness) add Listen, so operator commands build the same graph without a port.
var Module = fx.Module("httpserver", fx.Provide(New))

// Listen binds the listener in OnStart and drains it in OnStop.
var Listen = fx.Invoke(func(lc fx.Lifecycle, s *Server) {
	lc.Append(fx.Hook{OnStart: s.Start, OnStop: s.Stop})
})

// Server owns the Fiber app and its listener.
type Server struct {
	app  *fiber.App
	cfg  config.Config
	log  *slog.Logger
	http *metrics.HTTP
	addr atomic.Pointer[net.TCPAddr]
	// tracer is nil unless tracing is on: then every request is a server span.
	tracer  trace.Tracer
	tracing *tracing.Tracing
	// templates[method][path] is every registered route, read-only after New.
	templates map[string]map[string]struct{}
	// middleware is Fiber's routes of the Use layer: what c.Route() names when no route
	// matched.
	middleware map[*fiber.Route]bool
	// trusted is AUTHCORE_TRUSTED_PROXIES, nil when none.
	trusted []netip.Prefix
	// conns are the open connections, for Stop.
	conns connections
}

// Params are the server's dependencies.
type Params struct {
	fx.In
	Config   config.Config
	Log      *slog.Logger
	HTTP     *metrics.HTTP
	Gatherer prometheus.Gatherer
	Registry prometheus.Registerer
	Tracing  *tracing.Tracing
	Routes   []Route `group:"routes"`
}

// New builds the app and registers every contributed route. It binds nothing.
func New(p Params) (*Server, error) {
	s := &Server{cfg: p.Config, log: p.Log, http: p.HTTP, templates: map[string]map[string]struct{}{}, tracing: p.Tracing,
		middleware: map[*fiber.Route]bool{}}
	trusted, err := config.ParseTrustedProxies(p.Config.TrustedProxies)
	if err != nil {
		return nil, err
	}
	if len(trusted) > 0 {
		s.trusted = trusted
	}
	if p.Tracing.Enabled() {
		s.tracer = p.Tracing.Tracer("github.com/authcore/authcore/platform/httpserver")
	}
	s.app = fiber.New(fiber.Config{
		DisableStartupMessage: true,
		BodyLimit:             BodyLimit,
		ReadBufferSize:        16 << 10, // room for a few cookies and a long bearer token
		ReadTimeout:           readTimeout,
		WriteTimeout:          15 * time.Second,
		IdleTimeout:           60 * time.Second,
		ErrorHandler:          s.renderError,
		// Fiber's Protocol and Hostname believe X-Forwarded-* only from these peers (by
		// default from anyone). The client address is ClientIP's, not Fiber's: see there.
		EnableTrustedProxyCheck: true,
		TrustedProxies:          p.Config.TrustedProxies,
	})
	s.app.Use(s.observe)
	s.app.Use(recover.New(recover.Config{
		EnableStackTrace: true,
		StackTraceHandler: func(c *fiber.Ctx, v any) {
			s.log.ErrorContext(c.UserContext(), "handler panicked", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
		},
	}))
	for _, routes := range s.app.Stack() {
		for _, r := range routes {
			s.middleware[r] = true
		}
	}

	routes, modules, err := served(p.Routes, p.Config.Modules)
	if err != nil {
		return nil, err
	}
	// Which modules each process serves, so a dashboard can tell a split deployment's
	// halves apart (joined on instance) whatever labels the scraper adds.
	servedGauge := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "authcore_module_served",
		Help: "1 for each module whose routes this process serves (AUTHCORE_MODULES)."}, []string{"module"})
	for _, m := range modules {
		servedGauge.WithLabelValues(m).Set(1)
	}
	if err := p.Registry.Register(servedGauge); err != nil {
		return nil, err
	}
	if p.Config.MetricsOnPublicPort() {
		routes = append(routes, Route{Method: fiber.MethodGet, Path: "/metrics", Handlers: []fiber.Handler{adaptor.HTTPHandler(metrics.Handler(p.Gatherer))}})
	}
	// Group members arrive in random order: register in a stable one and refuse a route
	// two modules both claim, rather than let the first silently win.
	sort.SliceStable(routes, func(i, j int) bool {
		if routes[i].Path != routes[j].Path {
			return routes[i].Path < routes[j].Path
		}
		return routes[i].Method < routes[j].Method
	})
	var larger []Route
	for i, r := range routes {
		if i > 0 && routes[i-1].Method == r.Method && routes[i-1].Path == r.Path {
			return nil, fmt.Errorf("route %s %s is registered twice", r.Method, r.Path)
		}
		if len(r.Handlers) == 0 {
			return nil, fmt.Errorf("route %s %s has no handler", r.Method, r.Path)
		}
		s.app.Add(r.Method, r.Path, r.Handlers...)
		if r.BodyLimit > BodyLimit {
			larger = append(larger, r)
		}
		if s.templates[r.Method] == nil {
			s.templates[r.Method] = map[string]struct{}{}
		}
		s.templates[r.Method][r.Path] = struct{}{}
	}
	if len(larger) > 0 {
		// fasthttp reads a body before any handler runs, with one limit for the server; its
		// header hook is the one place a route can ask for more, decided from the request
		// line alone, so every other route keeps refusing large bodies unread.
		grants := &largeBodies{}
		s.app.Server().HeaderReceived = func(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
			// fasthttp allocates a declared Content-Length before reading it, and this runs
			// before anyone is authenticated: only a request that carries a credential gets
			// the larger limit, and only largeBodyGrants of them per read timeout, so
			// stalled uploads cannot hold more than that many large buffers at once.
			if len(h.Peek(fiber.HeaderAuthorization)) == 0 && len(h.Peek(fiber.HeaderCookie)) == 0 {
				return fasthttp.RequestConfig{}
			}
			if n := h.ContentLength(); n >= 0 && n <= BodyLimit { // fits anyway: no grant spent
				return fasthttp.RequestConfig{}
			}
			for _, r := range larger {
				if string(h.Method()) == r.Method && matchTemplate(r.Path, string(h.RequestURI())) && grants.take(time.Now()) {
					return fasthttp.RequestConfig{MaxRequestBodySize: r.BodyLimit}
				}
			}
			return fasthttp.RequestConfig{}
		}
	}
	return s, nil
}

// largeBodyGrants is how many requests may be given a larger body limit within one
// readTimeout, the longest a body may take to arrive (and so to hold its buffer).
const largeBodyGrants = 4

const readTimeout = 15 * time.Second

// largeBodies counts the larger limits given within the last readTimeout.
type largeBodies struct {
	mu    sync.Mutex
	given []time.Time
}

func (l *largeBodies) take(now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.given = slices.DeleteFunc(l.given, func(t time.Time) bool { return now.Sub(t) >= readTimeout })
	if len(l.given) >= largeBodyGrants {
		return false
	}
	l.given = append(l.given, now)
	return true
}

// matchTemplate says whether the path of uri (query dropped) fits a route template whose
// ":name" segments stand for any one non-empty segment.
func matchTemplate(template, uri string) bool {
	path, _, _ := strings.Cut(uri, "?")
	want, got := strings.Split(template, "/"), strings.Split(path, "/")
	if len(want) != len(got) {
		return false
	}
	for i, w := range want {
		if strings.HasPrefix(w, ":") {
			if got[i] == "" {
				return false
			}
		} else if w != got[i] {
			return false
		}
	}
	return true
}

// served is the routes this process serves: the platform's, and those of the modules
// AUTHCORE_MODULES names (all when it names none), so sign-in and verification can run as
// separate deployments of one binary (SPEC §18). A name no module has stops the process.
func served(all []Route, modules []string) (routes []Route, names []string, err error) {
	known := map[string]bool{}
	for _, r := range all {
		if r.Module != "" {
			known[r.Module] = true
		}
	}
	want := map[string]bool{}
	for _, m := range modules {
		m = strings.TrimSpace(m)
		if !known[m] {
			return nil, nil, fmt.Errorf("AUTHCORE_MODULES: no module is named %q (there are %s)", m, strings.Join(slices.Sorted(maps.Keys(known)), ", "))
		}
		want[m] = true
	}
	for _, r := range all {
		if len(want) == 0 || r.Module == "" || want[r.Module] {
			routes = append(routes, r)
		}
	}
	if len(want) == 0 {
		want = known
	}
	return routes, slices.Sorted(maps.Keys(want)), nil
}

// App exposes the Fiber app, for tests that drive it without a listener.
func (s *Server) App() *fiber.App { return s.app }

// Addr is the bound address once started (useful with port 0), or nil.
func (s *Server) Addr() *net.TCPAddr { return s.addr.Load() }

// Start binds the listener and serves in the background.
func (s *Server) Start(context.Context) error {
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("AUTHCORE_ADDR: %w", err)
	}
	s.addr.Store(ln.Addr().(*net.TCPAddr))
	go func() {
		if err := s.app.Listener(listener{Listener: ln, conns: &s.conns}); err != nil && !errors.Is(err, net.ErrClosed) {
			s.log.Error("http listener stopped", "error", err)
		}
	}()
	s.log.Info("listening", "addr", ln.Addr().String(), "public_url", s.cfg.SelfURL())
	if s.cfg.PublicURL == "" {
		s.log.Warn("AUTHCORE_PUBLIC_URL is not set: mailed links, issuers and OAuth metadata name " + s.cfg.SelfURL() + ", which only this machine can reach; set it to the URL clients use")
	}
	return nil
}

// Stop stops accepting and lets in-flight requests finish, up to ShutdownTimeout.
// Connections that have sent nothing are closed once silent for silentGrace.
func (s *Server) Stop(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, ShutdownTimeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.app.ShutdownWithContext(ctx) }()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			return err
		case <-tick.C:
			s.conns.closeSilent(silentGrace)
		}
	}
}
