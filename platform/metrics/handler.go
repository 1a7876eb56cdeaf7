package metrics

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
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

// Listen serves /metrics on AUTHCORE_METRICS_ADDR when it is set, so the metrics can stay
// off the public port; when it is empty the HTTP server mounts /metrics. Like
// httpserver.Listen, only the serve command (and test harnesses) add it, so operator
// commands beside a running server bind no port.
var Listen = fx.Invoke(startSeparate)

func startSeparate(lc fx.Lifecycle, cfg config.Config, g prometheus.Gatherer, log *slog.Logger) {
	if cfg.MetricsAddr == "" {
		return
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", Handler(g))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	lc.Append(fx.Hook{
		OnStart: func(ctx context.Context) error {
			ln, err := net.Listen("tcp", cfg.MetricsAddr)
			if err != nil {
				return err
			}
			go func() {
				if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
					log.Error("metrics listener stopped", "error", err)
				}
			}()
			return nil
		},
		OnStop: srv.Shutdown,
	})
}
