// Package health serves the probes: /healthz answers 200 while the process serves HTTP,
// whatever the store does; /readyz answers 200 only while every readiness check
// contributed through AsCheck passes (the store's, the session engine's…), else 503
// unavailable naming the failing checks but not why. It must not know what the checks are.
package health

import (
	"context"
	"sort"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/fx"

	"github.com/authcore/authcore/platform/httpserver"
)

// Check is one readiness condition, e.g. the store answering.
type Check struct {
	Name  string
	Check func(ctx context.Context) error
}

// AsCheck contributes a readiness check; the only place that spells the group tag.
func AsCheck(f any) fx.Option {
	return fx.Provide(fx.Annotate(f, fx.ResultTags(`group:"readiness"`)))
}

// Module serves the two probes.
var Module = fx.Module("health", httpserver.AsRoutes(routes))

type params struct {
	fx.In
	Checks   []Check `group:"readiness"`
	Registry prometheus.Registerer
}

func routes(p params) ([]httpserver.Route, error) {
	// authcore_readiness{check} is 1 while a check passes, 0 while it fails, as of the last
	// /readyz (the orchestrator probes it every few seconds): what alerts on an unreachable
	// store read.
	gauge := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "authcore_readiness", Help: "Readiness checks as of the last /readyz: 1 passing, 0 failing.",
	}, []string{"check"})
	if err := p.Registry.Register(gauge); err != nil {
		return nil, err
	}
	checks := append([]Check(nil), p.Checks...)
	sort.Slice(checks, func(i, j int) bool { return checks[i].Name < checks[j].Name })
	ready := func(c *fiber.Ctx) error {
		ctx, cancel := context.WithTimeout(c.UserContext(), 2*time.Second)
		defer cancel()
		results := make(map[string]string, len(checks))
		ok := true
		for _, ch := range checks {
			// The reason stays in the log of whoever failed; the probe says only which.
			if err := ch.Check(ctx); err != nil {
				results[ch.Name] = "failing"
				gauge.WithLabelValues(ch.Name).Set(0)
				ok = false
			} else {
				results[ch.Name] = "ok"
				gauge.WithLabelValues(ch.Name).Set(1)
			}
		}
		if !ok {
			return c.Status(fiber.StatusServiceUnavailable).JSON(fiber.Map{
				"code": "unavailable", "message": "not ready", "status": "unavailable", "checks": results,
			})
		}
		return c.JSON(fiber.Map{"status": "ready", "checks": results})
	}
	return []httpserver.Route{
		{Method: fiber.MethodGet, Path: "/healthz", Handlers: []fiber.Handler{func(c *fiber.Ctx) error {
			return c.JSON(fiber.Map{"status": "ok"})
		}}},
		{Method: fiber.MethodGet, Path: "/readyz", Handlers: []fiber.Handler{ready}},
	}, nil
}
