package auth

import (
	"context"

	"github.com/authcore/authcore/ent/authclient"
	"github.com/authcore/authcore/ent/predicate"
	"github.com/authcore/authcore/ent/schema"
	"github.com/authcore/authcore/platform/credential"
	"github.com/authcore/authcore/platform/secret"
)

// The kind this plugin owns (SPEC §15): auth-client secrets (ac_cs_…), whose leak revokes
// their badge.
func kinds(p *Product, badges credential.Badges) []credential.Kind {
	return []credential.Kind{
		{
			Name: "oauth_client_secret", Prefix: secret.Prefix(secretKind), Pattern: secret.Pattern(secretKind),
			Revoke: credential.RevokeBadgeOf(badges, p.badgeOfSecret),
		},
	}
}

// badgeOfSecret is the badge whose client holds this secret (current, or replaced and
// still in its grace).
func (p *Product) badgeOfSecret(ctx context.Context, sec string) (string, error) {
	d, now := secret.DigestOf(sec).Bytes(), p.clock.Now()
	c, err := p.ent.AuthClient.Query().Where(authclient.RevokedAtIsNil(),
		schema.Presented[predicate.AuthClient](schema.AuthClientLifecycle, d, now)).Only(ctx)
	if err != nil {
		return "", err
	}
	return c.BadgeID, nil
}
