package identity

import (
	"context"

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
	Actor  string
	Origin audit.Origin
}
