// Package badge owns service badges (seed 4.4, 6; SPEC §6): per-project machine
// credentials, one product each. Products are plugins it knows only through
// platform/product; every mint and revoke commits with its audit record.
package badge

import (
	"log/slog"

	"go.uber.org/fx"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/bearer"
	"github.com/authcore/authcore/platform/credential"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/policy"
	"github.com/authcore/authcore/platform/product"
	"github.com/authcore/authcore/platform/secret"
)

// Module wires the service and its routes.
var Module = fx.Module("badge",
	fx.Decorate(func(l *slog.Logger) *slog.Logger { return l.With("module", "badge") }),
	fx.Provide(fx.Annotate(NewService, fx.As(fx.Self()), fx.As(new(credential.Badges)))),
	httpserver.AsModuleRoutes("badge", func(s *Service, g *guard.Guard, r *product.Registry, k bearer.Kit) []httpserver.Route {
		return (&handler{svc: s, guard: g, products: r, me: bearer.NewEndpoint(k, Kind).CountingLimited(s.verifier.Limited)}).routes()
	}),
	// One kind per registered product: a product added as a plugin is revocable by leak
	// reports and RFC 7009 with nothing else to change.
	credential.AsKinds(func(s *Service, r *product.Registry) []credential.Kind {
		var kinds []credential.Kind
		for _, key := range r.Keys() {
			kinds = append(kinds, credential.Kind{
				Name: Kind + ":" + key, Prefix: secret.Prefix(key), Pattern: secret.Pattern(key),
				Revoke:     s.RevokePresented,
				Introspect: s.introspect, IntrospectedAs: Kind,
				Events: []string{"service_badge.create", "service_badge.roll", "service_badge.revoke"},
			})
		}
		return kinds
	}),
)

// Params are the service's dependencies.
type Params struct {
	fx.In
	Ent      *ent.Client
	Products *product.Registry
	Audit    *audit.Recorder
	Policies policy.Source
	Kit      bearer.Kit
}

// NewService returns the service, subscribed to revocations from other replicas.
func NewService(p Params) *Service {
	s := &Service{ent: p.Ent, products: p.Products, audit: p.Audit, clock: p.Kit.Clock, metrics: p.Kit.Metrics, policies: p.Policies, usage: p.Kit.UsageReader}
	s.verifier = bearer.NewVerifier[answer](p.Kit, Kind, store{})
	return s
}
