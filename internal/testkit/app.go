package testkit

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/fx"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/logging"
	"github.com/authcore/authcore/platform/metrics"
	"github.com/authcore/authcore/platform/secret"
	"github.com/authcore/authcore/platform/tracing"
)

// Graph is the fx graph a test boots, given its settings, master key and log output.
type Graph func(cfg config.Config, keys secret.MasterKeys, out logging.Output) fx.Option

// Core is the platform every test graph stands on: logs, clock, keys, metrics, the store
// and the HTTP server. A platform test adds the packages it tests and their routes.
func Core(cfg config.Config, keys secret.MasterKeys, out logging.Output) fx.Option {
	return fx.Options(
		fx.Supply(cfg, keys, out),
		logging.Module, logging.FxLogger, tracing.Module, clock.Module, secret.Module,
		metrics.Module, database.Module, httpserver.Module,
	)
}

// Listeners bind the HTTP server and the separate metrics listener, as serve does.
var Listeners = fx.Options(httpserver.Listen, metrics.Listen)

// App is a running authcore graph for one test.
type App struct {
	T      testing.TB
	Store  string
	Config config.Config
	Base   string // http://127.0.0.1:PORT
	// MetricsBase is the metrics listener's http://HOST:PORT when the test gave it one
	// (AUTHCORE_METRICS_ADDR); "" when /metrics is on Base, as tests have it by default.
	MetricsBase string
	Logs        *LogBuffer
	Clock       *clock.Fake
	DB          *database.DB
	Ent         *ent.Client
	HTTP        *http.Client
	// Check, when set, judges every exchange Do makes (the whole-app harness validates it
	// against the OpenAPI document).
	Check func(t testing.TB, req *http.Request, res *Response)
	fx    *fx.App
}

// Option changes a test app before it starts.
type Option func(*options)

type options struct {
	cfg   []func(*config.Config)
	fx    []fx.Option
	graph Graph
}

// WithConfig edits the settings; several apply in order.
func WithConfig(f func(*config.Config)) Option { return func(o *options) { o.cfg = append(o.cfg, f) } }

// WithFx adds fx options to the graph: extra test-only modules, fx.Decorate, fx.Populate.
func WithFx(opts ...fx.Option) Option { return func(o *options) { o.fx = append(o.fx, opts...) } }

// WithGraph boots graph instead of the one the caller names (a whole app with other
// products, say).
func WithGraph(graph Graph) Option { return func(o *options) { o.graph = graph } }

// optionsOf applies opts, and says which graph to boot: graph, unless WithGraph named
// another.
func optionsOf(opts []Option, graph Graph) (options, Graph) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if o.graph != nil {
		graph = o.graph
	}
	return o, graph
}

// Start boots graph on store st and stops it when the test ends.
func Start(t testing.TB, st Store, graph Graph, opts ...Option) *App {
	t.Helper()
	return StartURL(t, st.Name, st.URL(t), graph, opts...)
}

// StartURL boots graph on an explicit database URL.
func StartURL(t testing.TB, storeName, databaseURL string, graph Graph, opts ...Option) *App {
	t.Helper()
	o, graph := optionsOf(opts, graph)
	cfg := Config(databaseURL, t.TempDir())
	// The server's own URL never comes from a request (SPEC §9a), so the app must know
	// the address tests reach it at before it starts: pick a free port now and name it
	// as the public URL. A test may still change either, or clear the public URL to run on
	// the http://localhost:<port> default.
	// The port is free when picked but may be taken before the server binds it (another
	// test binary picked it too): then the app is built again on another, up to 3 times.
	var a *App
	var srv *httpserver.Server
	var ml *metrics.Listener
	for attempt := 1; ; attempt++ {
		port, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		cfg := cfg
		cfg.Addr = fmt.Sprintf("127.0.0.1:%d", port)
		cfg.PublicURL = fmt.Sprintf("http://127.0.0.1:%d", port)
		// Apps one test starts on one store are replicas of one deployment, which has one
		// public URL: tokens one signs carry an issuer the others accept.
		key := t.Name() + "\x00" + databaseURL
		shared := !strings.Contains(databaseURL, ":memory:")
		if shared {
			if first, loaded := publicURLs.LoadOrStore(key, cfg.PublicURL); loaded {
				cfg.PublicURL = first.(string)
			} else {
				t.Cleanup(func() { publicURLs.Delete(key) })
			}
		}
		ours := cfg.Addr
		for _, f := range o.cfg {
			f(&cfg)
		}
		a = &App{
			T: t, Store: storeName, Config: cfg, Logs: &LogBuffer{},
			Clock: clock.NewFake(time.Now()),
			HTTP:  &http.Client{Timeout: 30 * time.Second},
		}
		mk, err := config.DecodeMasterKeys(cfg.MasterKey)
		if err != nil {
			t.Fatal(err)
		}
		all := []fx.Option{
			graph(cfg, masterKeys(mk), logging.Output{Writer: a.Logs}),
			Listeners,
			fx.Decorate(func() clock.Clock { return a.Clock }),
			fx.Populate(&srv, &ml, &a.DB, &a.Ent),
		}
		all = append(all, o.fx...)
		a.fx = fx.New(all...)
		if err := a.fx.Err(); err != nil {
			t.Fatalf("building the app: %v", err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err = a.fx.Start(ctx)
		cancel()
		if err == nil {
			break
		}
		if attempt == 3 || cfg.Addr != ours || !strings.Contains(err.Error(), "address already in use") {
			t.Fatalf("starting the app: %v\nlogs:\n%s", err, a.Logs)
		}
		t.Logf("port %d was taken meanwhile; another", port)
		if shared {
			if first, _ := publicURLs.Load(key); first == fmt.Sprintf("http://127.0.0.1:%d", port) {
				publicURLs.Delete(key) // this app named it and never served it
			}
		}
	}
	t.Cleanup(func() {
		if t.Failed() {
			// A failed test shows what the service logged as errors: a 500's cause is there.
			for _, line := range strings.Split(a.Logs.String(), "\n") {
				if strings.Contains(line, `"level":"ERROR"`) {
					t.Log(line)
				}
			}
		}
		a.HTTP.CloseIdleConnections()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := a.fx.Stop(ctx); err != nil {
			// The log's end names the stop hooks that ran and the one still running.
			logs := a.Logs.String()
			if len(logs) > 16<<10 {
				logs = "…" + logs[len(logs)-16<<10:]
			}
			t.Errorf("stopping the app: %v\nlogs:\n%s", err, logs)
		}
	})
	a.Base = fmt.Sprintf("http://%s", srv.Addr())
	if addr := ml.Addr(); addr != "" {
		a.MetricsBase = "http://" + addr
	}
	return a
}

// publicURLs is the public URL of the first app a test started on each store URL.
var publicURLs sync.Map

// freePort asks the kernel for a loopback port nothing listens on. The server binds it
// moments later (Go sets SO_REUSEADDR, so the port just closed is free to take).
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// Stop stops the app now (it is stopped at the end of the test anyway).
func (a *App) Stop() error {
	// fasthttp waits for keep-alive connections a client leaves open; ours closes them.
	a.HTTP.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return a.fx.Stop(ctx)
}

// Response is a finished HTTP exchange.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body as an object; it fails the test when the body is not one.
func (r *Response) JSON(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("response body is not a JSON object: %v\n%s", err, r.Body)
	}
	return m
}

// Decode decodes the body into v.
func (r *Response) Decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decoding response: %v\n%s", err, r.Body)
	}
}

// Req describes one request. Body may be nil, a string or []byte (sent as-is), or any
// other value (sent as JSON).
type Req struct {
	Method  string
	Path    string
	Body    any
	Header  map[string]string
	Cookies []*http.Cookie
}

// Do sends r and reads the whole answer.
func (a *App) Do(r Req) *Response {
	a.T.Helper()
	var body io.Reader
	switch b := r.Body.(type) {
	case nil:
	case string:
		body = bytes.NewBufferString(b)
	case []byte:
		body = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			a.T.Fatal(err)
		}
		body = bytes.NewReader(j)
	}
	method := r.Method
	if method == "" {
		method = http.MethodGet
	}
	req, err := http.NewRequest(method, a.Base+r.Path, body)
	if err != nil {
		a.T.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range r.Header {
		if http.CanonicalHeaderKey(k) == "Host" { // net/http sends req.Host, never a Host header
			req.Host = v
		}
		req.Header.Set(k, v)
	}
	for _, c := range r.Cookies {
		req.AddCookie(c)
	}
	res, err := a.HTTP.Do(req)
	if err != nil {
		a.T.Fatalf("%s %s: %v", method, r.Path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		a.T.Fatal(err)
	}
	out := &Response{Status: res.StatusCode, Header: res.Header, Body: b}
	if a.Check != nil {
		a.Check(a.T, req, out)
	}
	return out
}

// Get is Do for a GET with optional headers as name, value pairs.
func (a *App) Get(path string, header ...string) *Response {
	a.T.Helper()
	return a.Do(Req{Path: path, Header: pairs(header)})
}

func pairs(kv []string) map[string]string {
	if len(kv) == 0 {
		return nil
	}
	m := make(map[string]string, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// Expect fails the test unless the response has the status and, for each key of want,
// the same JSON value (compared after a JSON round trip, so 1 == 1.0).
func (r *Response) Expect(t testing.TB, status int, want map[string]any) map[string]any {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d; body: %s", r.Status, status, r.Body)
	}
	if want == nil {
		var got map[string]any
		_ = json.Unmarshal(r.Body, &got)
		return got
	}
	got := r.JSON(t)
	for k, v := range want {
		wj, _ := json.Marshal(v)
		gj, _ := json.Marshal(got[k])
		if _, ok := got[k]; !ok {
			t.Fatalf("body has no %q; want %s; body: %s", k, wj, r.Body)
		}
		if !bytes.Equal(wj, gj) {
			t.Fatalf("body[%q] = %s, want %s; body: %s", k, gj, wj, r.Body)
		}
	}
	return got
}

// BuildErr builds (without starting) graph with opts and returns the graph's error.
func BuildErr(t testing.TB, graph Graph, opts ...Option) error {
	t.Helper()
	o, graph := optionsOf(opts, graph)
	cfg := Config("sqlite::memory:", t.TempDir())
	all := []fx.Option{graph(cfg, secret.MasterKeys{TestMasterKey}, logging.Output{Writer: &LogBuffer{}}), fx.Invoke(func(*httpserver.Server) {})}
	all = append(all, o.fx...)
	return fx.New(all...).Err()
}

// Logs2 is a logger writing into the app's log buffer, for calling platform functions
// directly in a test.
func (a *App) Logs2() *slog.Logger { return slog.New(slog.NewJSONHandler(a.Logs, nil)) }

// Raw sends request bytes exactly as given (for header edge cases net/http would
// normalise) and returns the status and body.
func (a *App) Raw(t testing.TB, request string) (int, string) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(a.Base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(request)); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// DumpDB returns every row of every table as text, for tests that check no secret is
// stored in plain text. Binary columns are included as raw bytes, so a stored plaintext
// would show up whatever its column type.
func (a *App) DumpDB(t testing.TB) string {
	t.Helper()
	ctx := context.Background()
	var q string
	if a.Store == "postgres" {
		q = "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
	} else {
		q = "SELECT name FROM sqlite_master WHERE type = 'table'"
	}
	tables := QueryStrings(t, a.DB.SQL, q)
	var b strings.Builder
	for _, table := range tables {
		rows, err := a.DB.SQL.QueryContext(ctx, fmt.Sprintf(`SELECT * FROM %q`, table))
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			b.WriteString(table)
			for _, v := range vals {
				switch x := v.(type) {
				case []byte:
					b.WriteString("|" + string(x))
				default:
					fmt.Fprintf(&b, "|%v", x)
				}
			}
			b.WriteString("\n")
		}
		rows.Close()
	}
	return b.String()
}

// QueryStrings is the first column of q's rows, as strings.
func QueryStrings(t testing.TB, db *sql.DB, q string) []string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

func masterKeys(raw [][]byte) secret.MasterKeys {
	ks := make(secret.MasterKeys, len(raw))
	for i, k := range raw {
		ks[i] = k
	}
	return ks
}
