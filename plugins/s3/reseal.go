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
	if err != nil || len(rows) == batch {
		return n, len(rows) == batch, err
	}
	// Then the secret keys a roll replaced, still in their grace.
	prev, err := s.ent.S3Credential.Query().
		Where(s3credential.PreviousSecretSealedNotNil(), s3credential.PreviousAccessKeyIDNotNil(), s3credential.Not(s3credential.PreviousSecretSealedHasPrefix(s.ring.CurrentPrefix()))).
		Limit(batch).All(ctx)
	if err != nil {
		return n, false, err
	}
	m, err := s.ring.ResealEach(len(prev),
		func(i int) (string, []byte) {
			return *prev[i].PreviousSecretSealed, []byte(*prev[i].PreviousAccessKeyID)
		},
		func(i int, v string) (bool, error) {
			n, err := s.ent.S3Credential.Update().
				Where(s3credential.ID(prev[i].ID), s3credential.PreviousSecretSealed(*prev[i].PreviousSecretSealed)).
				SetPreviousSecretSealed(v).Save(ctx)
			return n == 1, err
		})
	return n + m, len(prev) == batch, err
}
