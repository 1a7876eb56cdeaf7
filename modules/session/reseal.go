package session

import (
	"context"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/signingkey"
	"github.com/authcore/authcore/platform/secret"
)

// signingKeys re-seals the signing keys' private halves under the current master key.
type signingKeys struct {
	ent  *ent.Client
	ring *secret.Keyring
}

var _ secret.Resealer = signingKeys{}

func (signingKeys) Name() string { return "signing keys" }

func (s signingKeys) Reseal(ctx context.Context, batch int) (int, bool, error) {
	rows, err := s.ent.SigningKey.Query().
		Where(signingkey.Not(signingkey.PrivateSealedHasPrefix(s.ring.CurrentPrefix()))).
		Limit(batch).All(ctx)
	if err != nil {
		return 0, false, err
	}
	n, err := s.ring.ResealEach(len(rows),
		func(i int) (string, []byte) { return rows[i].PrivateSealed, []byte(rows[i].ID) },
		func(i int, v string) (bool, error) {
			n, err := s.ent.SigningKey.Update().
				Where(signingkey.ID(rows[i].ID), signingkey.PrivateSealed(rows[i].PrivateSealed)).
				SetPrivateSealed(v).Save(ctx)
			return n == 1, err
		})
	return n, len(rows) == batch, err
}
