package metrics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/fx"

	"github.com/authcore/authcore/platform/config"
)

// Handler serves the registry in the Prometheus text format.
func Handler(g prometheus.Gatherer) http.Handler {
	return promhttp.HandlerFor(g, promhttp.HandlerOpts{})
}

// Listen serves /metrics on a listener of its own at AUTHCORE_METRICS_ADDR (by default
// 127.0.0.1:9090, so the metrics stay off the public port, SPEC §9b); with "public" the
// HTTP server mounts /metrics instead and this binds nothing. Like httpserver.Listen, only
// the serve command (and test harnesses) add it, so operator commands beside a running
// server bind no port.
var Listen = fx.Options(fx.Provide(newListener), fx.Invoke(func(*Listener) {}))

// Listener is the metrics listener.
type Listener struct {
	addr atomic.Pointer[string]
}

// Addr is the address it listens on ("" when /metrics is on the public port, or before
// start): with port 0 configured, the port the kernel chose.
func (l *Listener) Addr() string {
	if a := l.addr.Load(); a != nil {
		return *a
	}
	return ""
}

func newListener(lc fx.Lifecycle, cfg config.Config, g prometheus.Gatherer, log *slog.Logger) *Listener {
	l := &Listener{}
	if cfg.MetricsOnPublicPort() {
		return l
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", Handler(g))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	lc.Append(fx.Hook{
		OnStart: func(ctx context.Context) error {
			ln, err := net.Listen("tcp", cfg.MetricsAddr)
			if err != nil {
				return fmt.Errorf("AUTHCORE_METRICS_ADDR: %w", err)
			}
			addr := ln.Addr().String()
			l.addr.Store(&addr)
			go func() {
				if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
					log.Error("metrics listener stopped", "error", err)
				}
			}()
			return nil
		},
		OnStop: srv.Shutdown,
	})
	return l
}
