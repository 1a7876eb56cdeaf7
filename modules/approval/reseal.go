package approval

import (
	"context"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/backchannelclient"
	"github.com/authcore/authcore/ent/backchannelrequest"
	"github.com/authcore/authcore/platform/secret"
)

// sealed re-seals ping signing secrets and what pending pings carry under the current
// master key (authcore keys reseal).
type sealed struct {
	ent  *ent.Client
	ring *secret.Keyring
}

var _ secret.Resealer = sealed{}

func (sealed) Name() string { return "backchannel ping secrets" }

func (s sealed) Reseal(ctx context.Context, batch int) (int, bool, error) {
	prefix := s.ring.CurrentPrefix()
	cs, err := s.ent.BackchannelClient.Query().Where(backchannelclient.SecretSealedNEQ(""), backchannelclient.Not(backchannelclient.SecretSealedHasPrefix(prefix))).
		Limit(batch).All(ctx)
	if err != nil {
		return 0, false, err
	}
	n, err := s.ring.ResealEach(len(cs),
		func(i int) (string, []byte) { return cs[i].SecretSealed, []byte(cs[i].ID) },
		func(i int, v string) (bool, error) {
			n, err := s.ent.BackchannelClient.Update().Where(backchannelclient.ID(cs[i].ID), backchannelclient.SecretSealed(cs[i].SecretSealed)).
				SetSecretSealed(v).Save(ctx)
			return n == 1, err
		})
	if err != nil {
		return n, false, err
	}
	rs, err := s.ent.BackchannelRequest.Query().Where(backchannelrequest.PingSealedNEQ(""), backchannelrequest.Not(backchannelrequest.PingSealedHasPrefix(prefix))).
		Limit(batch).All(ctx)
	if err != nil {
		return n, false, err
	}
	m, err := s.ring.ResealEach(len(rs),
		func(i int) (string, []byte) { return rs[i].PingSealed, []byte(rs[i].ID) },
		func(i int, v string) (bool, error) {
			n, err := s.ent.BackchannelRequest.Update().Where(backchannelrequest.ID(rs[i].ID), backchannelrequest.PingSealed(rs[i].PingSealed)).
				SetPingSealed(v).Save(ctx)
			return n == 1, err
		})
	return n + m, len(cs) == batch || len(rs) == batch, err
}
