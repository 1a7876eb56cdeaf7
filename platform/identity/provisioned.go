package identity

import (
	"context"

	"github.com/authcore/authcore/ent"
)

// ProvisionedUsers is supplied by the account module to SCIM directories (SPEC §27): a
// directory whose org has not verified an address's domain vouches for nothing, so the
// person it provisions is created with the address unverified (they prove it by mail, as
// anyone who signs up does); a domain the org verified goes through ProvenUsers.
type ProvisionedUsers interface {
	// CreateUnverified creates a user without a password whose address is not proven.
	// An address taken meanwhile is ErrEmailTaken.
	CreateUnverified(ctx context.Context, tx *ent.Tx, tenantID, email string, name *string) (Account, error)
}
