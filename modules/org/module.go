// Package org keeps a project's organizations, its business customers (SPEC §26): orgs
// with a slug unique in the project, their members (users of the project's tenant, found
// through identity.ProvenUsers) with a built-in or project-defined role, and the roles a
// project defines. Orgs are data scoped by ids the guard checks, not tenants: one tenant
// per project stays the unit of isolation. This slice serves project admins only; org
// admins, invitations and orgs in tokens come later. Verified domains and each org's
// policy are here, and identity.OrgDomains answers the ways in with them.
package org

import (
	_ "embed"

	"go.uber.org/fx"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/platform/apidoc"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/mail"
	"github.com/authcore/authcore/platform/ratelimit"
	"github.com/authcore/authcore/platform/secret"
)

// openAPI documents the org routes.
//
//go:embed org.yaml
var openAPI []byte

// Module serves SPEC §26's project-admin routes.
var Module = fx.Module("org",
	fx.Provide(fx.Private, newService),
	fx.Provide(fx.Private, newDomains),
	// The ways in ask it for the org of a verified domain and its policy (SPEC §26).
	fx.Provide(func(d *domains) identity.OrgDomains { return d }),
	fx.Provide(func(s *Service) identity.OrgMemberships { return s }, func(s *Service) identity.OrgSetup { return s }),
	apidoc.AsFragment(func() (apidoc.Fragment, error) { return apidoc.YAML("org", openAPI) }),
	httpserver.AsModuleRoutes("org", func(s *Service, d *domains, g *guard.Guard, l *ratelimit.Limiters) []httpserver.Route {
		return handler{svc: s, doms: d, guard: g, limits: l}.routes()
	}),
)

func newService(c *ent.Client, rec *audit.Recorder, users identity.ProvenUsers, emails identity.Directory, clk clock.Clock, cfg config.Config) *Service {
	return &Service{ent: c, audit: rec, users: users, emails: emails, clock: clk, selfURL: cfg.SelfURL()}
}

type domainsParams struct {
	fx.In
	Ent     *ent.Client
	Audit   *audit.Recorder
	Tenants identity.Tenants `optional:"true"`
	Mail    mail.Sender
	Keys    *secret.Keyring
	Clock   clock.Clock
	Config  config.Config
}

func newDomains(p domainsParams) *domains {
	return &domains{ent: p.Ent, audit: p.Audit, tenants: p.Tenants, mail: p.Mail, keys: p.Keys, clock: p.Clock,
		lookupTXT: newTXTLookup(p.Config.DNSResolver)}
}
