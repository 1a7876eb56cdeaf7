package identity

import (
	"context"
	"errors"

	"go.uber.org/fx"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/platform/audit"
)

// Deprovisioning is supplied by the account module to SCIM directories (SPEC §27): a
// person the org's directory deactivates or deletes stops signing in, and within a second
// on every replica what they hold ends.
type Deprovisioning interface {
	// Deprovision stops d.UserID signing in and ends their sessions and refresh tokens
	// (with back-channel logout), OAuth grants and the tokens issued on them, vault
	// connections (upstream too) and pending approvals; the agent tokens and badges they
	// minted are listed to the org's admins (event org.member_deprovisioned) and revoked
	// when the org's policy says revokeMintedOnDeprovision. Doing it again changes nothing.
	// A user who is not one of d.TenantID's is ErrNoSuchPerson.
	Deprovision(ctx context.Context, d Deprovision) error
	// Reprovision lets d.UserID sign in again; nothing that ended comes back.
	Reprovision(ctx context.Context, d Deprovision) error
}

// Deprovision names who is deprovisioned, by whom and why.
type Deprovision struct {
	TenantID string
	UserID   string
	// OrgID is the org whose directory acts; its policy decides about minted tokens.
	OrgID string
	// Actor is the audit actor, such as "directory:<id>".
	Actor string
	// ActorType is what Actor names; empty is a SCIM directory.
	ActorType audit.ActorType
	Origin    audit.Origin
}

// ErrNoSuchPerson is a Deprovision of a user who is not one of the tenant's.
var ErrNoSuchPerson = errors.New("no such user in this tenant")

// PersonEnding is supplied, in group "person_endings" (AsPersonEnding), by each module
// that keeps something a person holds beyond their sign-in, sessions and OAuth grants
// (which the account module ends itself): vault connections, pending approvals, the agent
// tokens and badges they minted. Deprovisioning asks each in its one transaction, so the
// person's row, what every module ends, the invalidations every replica hears and the
// audit records commit together.
type PersonEnding interface {
	// EndPerson ends, in tx, what e.UserID holds of this kind and publishes the
	// invalidations of what it ended. Called again it finds nothing left to end.
	EndPerson(ctx context.Context, tx *ent.Tx, e PersonEnd) (PersonEnded, error)
}

// AsPersonEnding contributes the PersonEnding returned by constructor f.
func AsPersonEnding(f any) fx.Option {
	return fx.Provide(fx.Annotate(f, fx.As(new(PersonEnding)), fx.ResultTags(`group:"person_endings"`)))
}

// PersonEnd is the person whose credentials end, and why.
type PersonEnd struct {
	TenantID, UserID, OrgID string
	// Actor and ActorType are the audit actor of the records written.
	Actor     string
	ActorType audit.ActorType
	Origin    audit.Origin
	// RevokeMinted: the org's policy says revokeMintedOnDeprovision, so the credentials
	// the person minted are revoked, not only listed.
	RevokeMinted bool
}

// PersonEnded is what one PersonEnding ended.
type PersonEnded struct {
	// Kind names what ended ("vault_connections", "approvals", …), as the audit record
	// of the deprovisioning counts them.
	Kind  string
	Ended int
	// Minted are the live credentials the person minted (with Revoked set when
	// PersonEnd.RevokeMinted revoked them now), listed to the org's admins.
	Minted []MintedCredential
	// After, when not nil, runs once tx has committed: work beyond the store, such as an
	// upstream's revocation. Its failures are the module's to log; nothing undoes the commit.
	After func(ctx context.Context)
}

// MintedCredential is one credential a deprovisioned person minted.
type MintedCredential struct {
	Kind    string `json:"kind"`
	ID      string `json:"id"`
	Name    string `json:"name,omitempty"`
	Revoked bool   `json:"revoked"`
}

// OrgPolicies is supplied by the org module: an org's policy by its id (SPEC §26), for
// deprovisioning, which reads revokeMintedOnDeprovision.
type OrgPolicies interface {
	// OrgPolicy is orgID's policy within projectID; an org that never set one has every
	// rule off. found is false when projectID has no such org.
	OrgPolicy(ctx context.Context, projectID, orgID string) (p OrgPolicy, found bool, err error)
}
