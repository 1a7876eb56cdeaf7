package auth

import (
	"context"
	"strings"
	"time"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/authclient"
	"github.com/authcore/authcore/ent/revokedaccesstoken"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/bearer"
	"github.com/authcore/authcore/platform/credential"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/invalidation"
	"github.com/authcore/authcore/platform/secret"
)

// The kinds this plugin owns (SPEC §15): auth-client secrets (ac_cs_…), whose leak
// revokes their badge, and the at+jwt access tokens the token endpoint issues, revoked by
// jti until they expire.
func kinds(p *Product, badges identity.Badges, agents identity.AgentTokens, jwts identity.JWTVerifier, denied *denylist) []credential.Kind {
	return []credential.Kind{
		{
			Name: "oauth_client_secret", Pattern: secret.Pattern(secretKind),
			Match:  func(t string) bool { return secret.CheckToken(secretKind, t) },
			Revoke: credential.RevokeBadgeOf(badges, p.badgeOfSecret),
		},
		{
			// No scanner pattern: a JWT looks like any other. Revocable by RFC 7009.
			Name:  "oauth_access_token",
			Match: func(t string) bool { typ, ok := credential.JWTType(t); return ok && typ == "at+jwt" },
			Introspect: func(ctx context.Context, t, project string) (map[string]any, error) {
				return introspectAccessToken(ctx, p, agents, jwts, denied, t, project)
			},
			Revoke: func(ctx context.Context, t string, r identity.Revocation) error {
				return denied.revoke(ctx, jwts, t, r)
			},
		},
	}
}

// introspectAccessToken answers for an at+jwt of project: active while the agent token
// or client it was issued to is live and its jti was not revoked.
func introspectAccessToken(ctx context.Context, p *Product, agents identity.AgentTokens, jwts identity.JWTVerifier, denied *denylist, token, project string) (map[string]any, error) {
	typ, claims, err := jwts.VerifyJWT(token)
	if err != nil || typ != "at+jwt" {
		return nil, nil
	}
	clientID, _ := claims["client_id"].(string)
	if pr, _ := claims["project_id"].(string); pr != project || clientID == "" {
		return nil, nil
	}
	// This server issues access tokens to two kinds of client: agent tokens (exchange)
	// and auth clients (client credentials); their ids say which.
	var live bool
	if strings.HasPrefix(clientID, "tok_") {
		live, err = agents.Live(ctx, clientID)
	} else {
		live, err = p.live(ctx, clientID)
	}
	if err != nil || !live {
		return nil, err
	}
	if jti, _ := claims["jti"].(string); jti != "" { // revoked by its jti (RFC 7009) before its exp
		if gone, err := denied.revoked(ctx, jti); err != nil || gone {
			return nil, err
		}
	}
	m := map[string]any{"kind": "oauth_access_token", "sub": claims["sub"], "exp": claims["exp"], "iat": claims["iat"],
		"client_id": clientID, "aud": claims["aud"], "scope": claims["scope"], "token_type": "Bearer"}
	if name, ok := claims["agent_name"]; ok {
		m["agent_name"] = name
	}
	return m, nil
}

// badgeOfSecret is the badge whose client holds this secret (current, or replaced and
// still in its grace).
func (p *Product) badgeOfSecret(ctx context.Context, sec string) (string, error) {
	d, now := secret.DigestOf(sec).Bytes(), p.clock.Now()
	c, err := p.ent.AuthClient.Query().Where(authclient.RevokedAtIsNil(), authclient.Or(
		authclient.SecretDigest(d),
		authclient.And(authclient.PreviousSecretDigest(d), authclient.PreviousExpiresAtGT(now)),
	)).Only(ctx)
	if err != nil {
		return "", err
	}
	return c.BadgeID, nil
}

// jtiTopic invalidates cached denylist answers when a jti is revoked.
const jtiTopic = "oauth_jti"

// denylist holds the jti of access tokens revoked before their exp. Answers are cached
// (a revoke anywhere drops the entry when it commits), so a warm introspection costs no
// store query; a cached "not revoked" lives at most 30 s and is dropped at once by a revoke.
type denylist struct {
	ent   *ent.Client
	audit *audit.Recorder
	bus   invalidation.Bus
	now   func() time.Time
	cache *bearer.Cache[string, bool]
}

func newDenylist(c *ent.Client, rec *audit.Recorder, bus invalidation.Bus, p *Product, l bearer.Limits) *denylist {
	d := &denylist{ent: c, audit: rec, bus: bus, now: p.clock.Now, cache: bearer.NewCache[string, bool](l.Size, l.NegativeTTL)}
	bearer.Follow(bus, jtiTopic, d.cache)
	return d
}

// revoked reports whether jti was revoked.
func (d *denylist) revoked(ctx context.Context, jti string) (bool, error) {
	return d.cache.Load(ctx, jti, func(ctx context.Context) (bool, error) {
		return d.ent.RevokedAccessToken.Query().Where(revokedaccesstoken.ID(jti)).Exist(ctx)
	})
}

// revoke denies a live access token until its exp, audited in its project; expired rows
// go in the same transaction, so the table holds only what can still be presented.
func (d *denylist) revoke(ctx context.Context, jwts identity.JWTVerifier, token string, r identity.Revocation) error {
	_, claims, err := jwts.VerifyJWT(token)
	if err != nil {
		return identity.ErrNotLive
	}
	jti, _ := claims["jti"].(string)
	project, _ := claims["project_id"].(string)
	exp, _ := claims["exp"].(float64)
	if jti == "" || len(jti) > 64 {
		return identity.ErrNotLive
	}
	now := d.now()
	return database.WithTx(ctx, d.ent, func(tx *ent.Tx) error {
		if _, err := tx.RevokedAccessToken.Delete().Where(revokedaccesstoken.ExpiresAtLT(now)).Exec(ctx); err != nil {
			return err
		}
		if err := tx.RevokedAccessToken.Create().SetID(jti).SetProjectID(project).SetExpiresAt(time.Unix(int64(exp), 0)).Exec(ctx); err != nil {
			if ent.IsConstraintError(err) { // revoked already: the jti is the key
				return identity.ErrNotLive
			}
			return err
		}
		action := r.Action
		if action == "" {
			action = "oauth_access_token.revoke"
		}
		md := map[string]any{"jti": jti}
		for k, v := range r.Metadata {
			md[k] = v
		}
		if sub, _ := claims["sub"].(string); sub != "" {
			md["sub"] = sub
		}
		if _, err := d.audit.Record(ctx, tx, audit.Event{ProjectID: project, Action: action, Metadata: md, Origin: r.Origin}); err != nil {
			return err
		}
		return d.bus.Publish(ctx, tx, jtiTopic, jti)
	})
}
