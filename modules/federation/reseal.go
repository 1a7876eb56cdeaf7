package federation

import (
	"context"

	"github.com/authcore/authcore/ent"
	entidentity "github.com/authcore/authcore/ent/identity"
	"github.com/authcore/authcore/ent/signinprovider"
	"github.com/authcore/authcore/platform/secret"
)

// sealed re-seals providers' client secrets and identities' upstream tokens under the
// current master key (authcore keys reseal).
type sealed struct {
	ent  *ent.Client
	ring *secret.Keyring
}

var _ secret.Resealer = sealed{}

func (sealed) Name() string { return "sign-in provider secrets and upstream tokens" }

func (s sealed) Reseal(ctx context.Context, batch int) (int, bool, error) {
	prefix := s.ring.CurrentPrefix()
	ps, err := s.ent.SignInProvider.Query().Where(signinprovider.Not(signinprovider.ClientSecretSealedHasPrefix(prefix))).Limit(batch).All(ctx)
	if err != nil {
		return 0, false, err
	}
	n, err := s.ring.ResealEach(len(ps),
		func(i int) (string, []byte) { return ps[i].ClientSecretSealed, []byte(ps[i].ID) },
		func(i int, v string) (bool, error) {
			n, err := s.ent.SignInProvider.Update().Where(signinprovider.ID(ps[i].ID), signinprovider.ClientSecretSealed(ps[i].ClientSecretSealed)).
				SetClientSecretSealed(v).Save(ctx)
			return n == 1, err
		})
	if err != nil {
		return n, false, err
	}
	ids, err := s.ent.Identity.Query().Where(entidentity.TokensSealedNEQ(""), entidentity.Not(entidentity.TokensSealedHasPrefix(prefix))).
		Limit(batch).All(ctx)
	if err != nil {
		return n, false, err
	}
	m, err := s.ring.ResealEach(len(ids),
		func(i int) (string, []byte) { return ids[i].TokensSealed, []byte(ids[i].ID) },
		func(i int, v string) (bool, error) {
			n, err := s.ent.Identity.Update().Where(entidentity.ID(ids[i].ID), entidentity.TokensSealed(ids[i].TokensSealed)).
				SetTokensSealed(v).Save(ctx)
			return n == 1, err
		})
	return n + m, len(ps) == batch || len(ids) == batch, err
}
