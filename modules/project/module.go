// Package project owns projects (each owning a tenant whose id is the project id) and
// memberships with roles viewer < developer < admin, and invitations to join by email. It supplies the guard's role lookup
// (identity.Memberships) and the account module's tenant check (identity.Tenants).
package project

import (
	"log/slog"

	"go.uber.org/fx"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/bearer"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/credential"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/invalidation"
	"github.com/authcore/authcore/platform/mail"
	"github.com/authcore/authcore/platform/oauth"
	"github.com/authcore/authcore/platform/policy"
	"github.com/authcore/authcore/platform/secret"
)

// Module wires the project service and its routes.
var Module = fx.Module("project",
	fx.Provide(fx.Annotate(NewService, fx.As(fx.Self()), fx.As(new(identity.Memberships)), fx.As(new(identity.Tenants)), fx.As(new(policy.Source)))),
	fx.Provide(newInvitations),
	credential.AsKinds(func(s *Invitations) []credential.Kind {
		return []credential.Kind{{
			Name: "project_invitation", Prefix: secret.Prefix(invitationKind), Pattern: secret.Pattern(invitationKind),
			Revoke: s.revokePresented,
			Events: []string{actionInvite, actionRevokeInvite},
		}}
	}),
	httpserver.AsModuleRoutes("project", func(s *Service, inv *Invitations, g *guard.Guard, rec *audit.Recorder) []httpserver.Route {
		return (&handler{svc: s, invites: inv, guard: g, audit: rec}).routes()
	}),
)

type invitationParams struct {
	fx.In
	Ent    *ent.Client
	Clock  clock.Clock
	Audit  *audit.Recorder
	Mail   mail.Sender
	Users  identity.Users
	Dir    identity.Directory
	Log    *slog.Logger
	Config config.Config
	// Projects is told of the membership an accepted invitation makes.
	Projects *Service
}

func newInvitations(p invitationParams) *Invitations {
	return &Invitations{ent: p.Ent, clock: p.Clock, audit: p.Audit, mail: p.Mail, users: p.Users, dir: p.Dir, log: p.Log, self: p.Config.SelfURL(),
		projects: p.Projects}
}

// Params are the project service's dependencies.
type Params struct {
	fx.In
	Ent   *ent.Client
	DB    *database.DB
	Dir   identity.Directory
	Audit *audit.Recorder
	// Grants ends the grants a removed member approved (SPEC §9b); absent without the
	// OAuth authorization module.
	Grants oauth.GrantEnder `optional:"true"`
	Bus    invalidation.Bus
}

// NewService returns the project service.
func NewService(p Params) *Service {
	s := &Service{ent: p.Ent, storage: p.DB.Storage, dir: p.Dir, audit: p.Audit, grants: p.Grants, bus: p.Bus,
		policies: bearer.NewCache[string, policy.Policy](policyCacheSize, policyCacheTTL),
		roles:    bearer.NewCache[string, standing](roleCacheSize, roleCacheTTL)}
	bearer.Follow(p.Bus, policyTopic, s.policies)
	bearer.Follow(p.Bus, roleTopic, s.roles)
	return s
}
