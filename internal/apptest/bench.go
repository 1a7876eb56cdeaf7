package apptest

import (
	"net"
	"testing"

	"github.com/valyala/fasthttp"
	"go.uber.org/fx"

	"github.com/authcore/authcore/platform/httpserver"
)

// Handler is the app's whole HTTP stack (middleware, guards, handlers) as one fasthttp
// handler: what a benchmark of a route calls, so allocations per request count the
// server's work and none of an HTTP client's.
func Handler(tb testing.TB, st Store, opts ...Option) (*App, fasthttp.RequestHandler) {
	tb.Helper()
	var srv *httpserver.Server
	a := Start(tb, st, append(opts, WithFx(fx.Populate(&srv)))...)
	return a, srv.App().Handler()
}

// Request is a reusable request context for h: method, path and headers, from loopback.
func Request(method, path string, header map[string]string, body []byte) *fasthttp.RequestCtx {
	var ctx fasthttp.RequestCtx
	ctx.Init(&fasthttp.Request{}, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}, nil)
	ctx.Request.Header.SetMethod(method)
	ctx.Request.SetRequestURI(path)
	ctx.Request.Header.SetHost("127.0.0.1")
	for k, v := range header {
		ctx.Request.Header.Set(k, v)
	}
	if body != nil {
		ctx.Request.SetBody(body)
	}
	return &ctx
}

// Bench runs b with h serving ctx each time, after a first request that must answer 200:
// the allocations per request of one route, warm.
func Bench(b *testing.B, h fasthttp.RequestHandler, ctx *fasthttp.RequestCtx) {
	b.Helper()
	h(ctx)
	if ctx.Response.StatusCode() != 200 {
		b.Fatalf("%d %s", ctx.Response.StatusCode(), ctx.Response.Body())
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ctx.Response.Reset()
		h(ctx)
	}
	if ctx.Response.StatusCode() != 200 {
		b.Fatalf("%d", ctx.Response.StatusCode())
	}
}
