package identity

import (
	"context"
	"errors"
	"time"

	"go.uber.org/fx"

	"github.com/authcore/authcore/ent"
)

// OrgPolicy is what an organisation asks of the addresses in its verified domains
// (SPEC §26).
type OrgPolicy struct {
	OrgID string
	// SSORequired: such an address signs in only through one of the org's connections.
	SSORequired bool
	MFARequired bool
	// SessionMaxHours bounds a member's sessions; 0 leaves the project's own lifetime.
	SessionMaxHours int
	// AutoJoinRole is the role a person who proves such an address is given; "" is off.
	AutoJoinRole              string
	RevokeMintedOnDeprovision bool
}

// OrgDomains is supplied by the org module to every way in (SPEC §26): a project's
// verified domains each belong to at most one org, whose policy then governs the
// addresses there, and home-realm discovery sends them to its connection.
type OrgDomains interface {
	// DomainOrg is the org of the project that verified domain (lower case), if any.
	DomainOrg(ctx context.Context, projectID, domain string) (OrgPolicy, bool, error)
	// AutoJoin makes userID, who has just proven address email, a member of the org that
	// verified its domain, in tx, when that org's policy says autoJoin; nothing otherwise,
	// nor when they are a member already.
	AutoJoin(ctx context.Context, tx *ent.Tx, projectID, userID, email string) error
}

// OrgMembership is a person's place in one org, as tokens and session payloads carry it
// (org_id, org_role, org_permissions).
type OrgMembership struct {
	OrgID       string   `json:"orgId"`
	OrgName     string   `json:"orgName"`
	Role        string   `json:"role"`
	Permissions []string `json:"permissions"`
}

// OrgMemberships is supplied by the org module to those that put an org into a token or
// a session (SPEC §26).
type OrgMemberships interface {
	// Membership is userID's membership of orgID in project, if they have one.
	Membership(ctx context.Context, projectID, orgID, userID string) (OrgMembership, bool, error)
	// MembershipsOf are all of userID's memberships in project, oldest first.
	MembershipsOf(ctx context.Context, projectID, userID string) ([]OrgMembership, error)
}

// SetupGrant is what a live setup session may do (SPEC §26): set up one org of a project,
// for the intents its link named (domains, sso, directory, audit).
type SetupGrant struct {
	LinkID    string
	ProjectID string
	OrgID     string
	Intents   []string
	ExpiresAt time.Time
}

// OrgSetup is supplied by the org module to the guard: the setup session a bearer token
// of kind SetupSessionKind is, if it is live.
type OrgSetup interface {
	SetupSession(ctx context.Context, token string) (SetupGrant, bool, error)
}

// SetupSessionKind is the token kind of setup sessions (ac_sts_…), which the guard tells
// from session access tokens by it.
const SetupSessionKind = "sts"

// OrgRoster is supplied by the org module to those that provision people into an org
// without an admin's hand (SPEC §27): a SAML connection's first sign-in, a SCIM directory.
// Writes run in the caller's transaction, with an audit record naming actor (such as
// "directory:<id>" or "saml:<connectionId>").
type OrgRoster interface {
	// Enroll makes userID a member of orgID with role, or gives a member role. An empty
	// role gives a new member the org's default role (member) and leaves a member's alone.
	// A role that is neither built in nor defined for the project is ErrNoOrgRole. The owner
	// role is never given nor taken this way: an owner stays an owner.
	Enroll(ctx context.Context, tx *ent.Tx, projectID, orgID, userID, role, actor string) error
	// Leave ends userID's membership of orgID, if any; an org's last owner stays.
	Leave(ctx context.Context, tx *ent.Tx, projectID, orgID, userID, actor string) error
	// RoleExists is whether role is built in or defined for the project's orgs.
	RoleExists(ctx context.Context, projectID, role string) (bool, error)
}

// ErrNoOrgRole is a role OrgRoster.Enroll does not know.
var ErrNoOrgRole = errors.New("not a role of this project's orgs")

// OrgEnding is supplied, in group "org_endings" (AsOrgEnding), by each module that keeps
// something of an org's beside the org module's own rows: connections (federation),
// directories (SCIM). Deleting an org asks each to drop its own in the deleting
// transaction, so nothing of a deleted org goes on letting people in or provisioning them.
type OrgEnding interface {
	// OrgDeleted drops, in tx, what it keeps of orgID; kind and n name it for the audit record.
	OrgDeleted(ctx context.Context, tx *ent.Tx, projectID, orgID string) (kind string, n int, err error)
}

// AsOrgEnding contributes the OrgEnding returned by constructor f.
func AsOrgEnding(f any) fx.Option {
	return fx.Provide(fx.Annotate(f, fx.As(new(OrgEnding)), fx.ResultTags(`group:"org_endings"`)))
}
