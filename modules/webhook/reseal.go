package webhook

import (
	"context"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/webhook"
	"github.com/authcore/authcore/platform/secret"
)

// secrets re-seals the webhooks' signing secrets under the current master key.
type secrets struct {
	ent  *ent.Client
	ring *secret.Keyring
}

var _ secret.Resealer = secrets{}

func (secrets) Name() string { return "webhook secrets" }

func (s secrets) Reseal(ctx context.Context, batch int) (int, bool, error) {
	rows, err := s.ent.Webhook.Query().
		Where(webhook.Not(webhook.SecretSealedHasPrefix(s.ring.CurrentPrefix()))).
		Limit(batch).All(ctx)
	if err != nil {
		return 0, false, err
	}
	n, err := s.ring.ResealEach(len(rows),
		func(i int) (string, []byte) { return rows[i].SecretSealed, []byte(rows[i].ID) },
		func(i int, v string) (bool, error) {
			n, err := s.ent.Webhook.Update().
				Where(webhook.ID(rows[i].ID), webhook.SecretSealed(rows[i].SecretSealed)).
				SetSecretSealed(v).Save(ctx)
			return n == 1, err
		})
	return n, len(rows) == batch, err
}
