// Package org keeps a project's organizations, its business customers (SPEC §26): orgs
// with a slug unique in the project, their members (users of the project's tenant, found
// through identity.ProvenUsers) with a built-in or project-defined role, invitations by
// mail, and the roles a project defines. Orgs are data scoped by ids the guard checks, not
// tenants: one tenant per project stays the unit of isolation. Project admins manage them
// under /v1/projects/{id}/orgs; an org's owners and admins, users of the tenant, manage
// their own org's members and invitations under /v1/auth-core/orgs/{orgId} (guard.OrgAdmin).
// Verified domains and each org's policy are here, and identity.OrgDomains answers the
// ways in with them.
package org

import (
	_ "embed"
	"log/slog"

	"go.uber.org/fx"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/platform/apidoc"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/credential"
	"github.com/authcore/authcore/platform/database"
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

// Module serves SPEC §26's project admins' and org admins' routes; it tells the guard
// who holds which role (identity.OrgMemberships) and credentials which orgs exist
// (identity.Orgs).
var Module = fx.Module("org",
	fx.Provide(fx.Private, newService, newInvitations),
	fx.Provide(fx.Private, newDomains),
	fx.Provide(fx.Private, func(c *ent.Client) Directory { return Directory{ent: c} }),
	// The ways in ask it for the org of a verified domain and its policy (SPEC §26).
	fx.Provide(func(d *domains) identity.OrgDomains { return d }),
	// Deprovisioning reads the acting org's revokeMintedOnDeprovision (SPEC §27).
	fx.Provide(func(c *ent.Client) identity.OrgPolicies { return policies{ent: c} }),
	// SAML connections and SCIM directories provision the org's people (SPEC §27).
	fx.Provide(func(s *Service) identity.OrgRoster { return roster{svc: s} }),
	fx.Provide(func(s *Service) identity.OrgMemberships { return s }, func(s *Service) identity.OrgSetup { return s },
		func(d Directory) identity.Orgs { return d }),
	// An invitation's link is a secret of its own kind: revoked by whoever presents it
	// (RFC 7009) or reports it leaked.
	credential.AsKinds(func(s *Invitations) []credential.Kind {
		return []credential.Kind{{
			Name: "org_invitation", Prefix: secret.Prefix(invitationKind), Pattern: secret.Pattern(invitationKind),
			Revoke: s.revokePresented, Events: []string{actionInvite, actionInviteRevoke},
		}}
	}),
	apidoc.AsFragment(func() (apidoc.Fragment, error) { return apidoc.YAML("org", openAPI) }),
	httpserver.AsModuleRoutes("org", func(s *Service, inv *Invitations, d Directory, doms *domains, g *guard.Guard, l *ratelimit.Limiters) []httpserver.Route {
		return handler{svc: s, invites: inv, dir: d, doms: doms, guard: g, limits: l}.routes()
	}),
)

// params are the service's dependencies.
type params struct {
	fx.In
	Ent    *ent.Client
	DB     *database.DB
	Audit  *audit.Recorder
	Users  identity.ProvenUsers
	Emails identity.Directory
	Clock  clock.Clock
	Mail   mail.Sender
	Log    *slog.Logger
	Config config.Config
	// Endings are the other modules' parts of an org (SPEC §26, §27).
	Endings []identity.OrgEnding `group:"org_endings"`
}

func newService(p params) *Service {
	return &Service{ent: p.Ent, audit: p.Audit, users: p.Users, emails: p.Emails, storage: p.DB.Storage, clock: p.Clock,
		selfURL: p.Config.SelfURL(), endings: p.Endings}
}

func newInvitations(s *Service, p params) *Invitations {
	return &Invitations{org: s, clock: p.Clock, mail: p.Mail, log: p.Log, self: p.Config.SelfURL()}
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
