package vault

import (
	"context"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/vaultconnection"
	"github.com/authcore/authcore/platform/secret"
)

// sealed re-seals connections' upstream tokens under the current master key (authcore
// keys reseal).
type sealed struct {
	ent  *ent.Client
	ring *secret.Keyring
}

var _ secret.Resealer = sealed{}

func (sealed) Name() string { return "vault connections' upstream tokens" }

func (s sealed) Reseal(ctx context.Context, batch int) (int, bool, error) {
	rows, err := s.ent.VaultConnection.Query().Where(vaultconnection.Not(vaultconnection.TokensSealedHasPrefix(s.ring.CurrentPrefix()))).
		Limit(batch).All(ctx)
	if err != nil {
		return 0, false, err
	}
	// A refresh racing the re-seal wins: the update matches only the value it read.
	n, err := s.ring.ResealEach(len(rows),
		func(i int) (string, []byte) { return rows[i].TokensSealed, []byte(rows[i].ID) },
		func(i int, v string) (bool, error) {
			n, err := s.ent.VaultConnection.Update().Where(vaultconnection.ID(rows[i].ID), vaultconnection.TokensSealed(rows[i].TokensSealed)).
				SetTokensSealed(v).Save(ctx)
			return n == 1, err
		})
	return n, len(rows) == batch, err
}
