package s3

import (
	"context"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/s3credential"
	"github.com/authcore/authcore/platform/secret"
)

// secretKeys re-seals the s3 secret access keys under the current master key.
type secretKeys struct {
	ent  *ent.Client
	ring *secret.Keyring
}

var _ secret.Resealer = secretKeys{}

func (secretKeys) Name() string { return "s3 secret keys" }

func (s secretKeys) Reseal(ctx context.Context, batch int) (int, bool, error) {
	rows, err := s.ent.S3Credential.Query().
		Where(s3credential.Not(s3credential.SecretSealedHasPrefix(s.ring.CurrentPrefix()))).
		Limit(batch).All(ctx)
	if err != nil {
		return 0, false, err
	}
	n, err := s.ring.ResealEach(len(rows),
		func(i int) (string, []byte) { return rows[i].SecretSealed, []byte(rows[i].AccessKeyID) },
		func(i int, v string) (bool, error) {
			n, err := s.ent.S3Credential.Update().
				Where(s3credential.ID(rows[i].ID), s3credential.SecretSealed(rows[i].SecretSealed)).
				SetSecretSealed(v).Save(ctx)
			return n == 1, err
		})
	return n, len(rows) == batch, err
}
