package account

import (
	"context"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/platform/identity"
)

var _ identity.ProvisionedUsers = (*Service)(nil)

// CreateUnverified creates a user a SCIM directory provisions for an address outside its
// org's verified domains (SPEC §27): no password, the address not proven. A mailed proof
// later adopts it the way it adopts any unverified account (AddressProofs.Proven).
func (s *Service) CreateUnverified(ctx context.Context, tx *ent.Tx, tenantID, email string, name *string) (identity.Account, error) {
	return s.createWithoutPassword(ctx, tx, tenantID, email, name, false)
}
