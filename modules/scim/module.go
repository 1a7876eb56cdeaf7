// Package scim is SPEC §27's SCIM 2.0 server (RFC 7643, RFC 7644): an org's directories,
// each with a token of its own kind (ac_scim_…), and at /scim/v2/{directoryId} the
// endpoints an IdP's provisioning client (Okta, Microsoft Entra) calls to create, change
// and remove the org's people and groups. A User is a user of the project's tenant, made a
// member of the org through identity.OrgRoster; deactivating or deleting one
// deprovisions the person through identity.Deprovisioning; groups map to org roles. It
// reaches accounts and orgs only through platform/identity.
package scim

import (
	"context"
	_ "embed"
	"log/slog"
	"time"

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
	"github.com/authcore/authcore/platform/secret"
	"github.com/authcore/authcore/platform/usage"
)

// openAPI documents the directories' routes and the SCIM endpoints.
//
//go:embed scim.yaml
var openAPI []byte

// Module serves the directories and their SCIM endpoints, and contributes the directory
// token's credential kind.
var Module = fx.Module("scim",
	fx.Provide(fx.Private, newSyncMarks, newDirectories, newResources),
	fx.Invoke(func(lc fx.Lifecycle, log *slog.Logger, m *syncMarks, c *ent.Client) {
		database.FlushEvery(lc, log, "directories' lastSyncAt", time.Second, func(ctx context.Context) error { return m.flush(ctx, c) })
	}),
	// The token is a secret of its own kind: revoked by whoever presents it (RFC 7009) or
	// reports it leaked, found by the secret-scanning pattern, its uses counted.
	credential.AsKinds(func(d *Directories) []credential.Kind {
		return []credential.Kind{{
			Name: kindName, Prefix: secret.Prefix(tokenKind), Pattern: secret.Pattern(tokenKind),
			Revoke: d.revokePresented, Events: []string{actionDirectoryCreate, actionDirectoryRoll, actionTokenRevoke, actionDirectoryDelete},
		}}
	}),
	identity.AsOrgEnding(func() orgDirectories { return orgDirectories{} }),
	apidoc.AsFragment(func() (apidoc.Fragment, error) { return apidoc.YAML("scim", openAPI) }),
	httpserver.AsModuleRoutes("scim", func(d *Directories, r *Resources, g *guard.Guard) []httpserver.Route {
		return handler{dirs: d, res: r, guard: g}.routes()
	}),
)

type params struct {
	fx.In
	Ent    *ent.Client
	Audit  *audit.Recorder
	Clock  clock.Clock
	Config config.Config
	Orgs   identity.Orgs
	Roster identity.OrgRoster
	Usage  usage.Counter `optional:"true"`
	Reader usage.Reader  `optional:"true"`
}

func newDirectories(p params, m *syncMarks) *Directories {
	u := p.Usage
	if u == nil {
		u = usage.Discard
	}
	return &Directories{ent: p.Ent, audit: p.Audit, orgs: p.Orgs, roster: p.Roster, clock: p.Clock, selfURL: p.Config.SelfURL(),
		usage: u, reader: p.Reader, marks: m}
}

type resourceParams struct {
	fx.In
	Ent         *ent.Client
	Audit       *audit.Recorder
	Clock       clock.Clock
	Config      config.Config
	Roster      identity.OrgRoster
	Domains     identity.OrgDomains
	Proven      identity.ProvenUsers
	Provisioned identity.ProvisionedUsers
	// Required: a directory that could not deprovision would only pretend to.
	Deprovisioning identity.Deprovisioning
}

func newResources(p resourceParams, m *syncMarks) *Resources {
	return &Resources{ent: p.Ent, audit: p.Audit, roster: p.Roster, domains: p.Domains, proven: p.Proven, provisioned: p.Provisioned,
		deprov: p.Deprovisioning, clock: p.Clock, selfURL: p.Config.SelfURL(), marks: m}
}
