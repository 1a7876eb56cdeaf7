package oauth

import (
	"context"
	"time"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/revokedaccesstoken"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/bearer"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/credential"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/invalidation"
	"github.com/authcore/authcore/platform/oauth"
)

// accessTokenType is the JWT typ of the access tokens grants issue (RFC 9068).
const accessTokenType = "at+jwt"

// accessTokenKind is the kind this module owns (SPEC §15): the at+jwt access tokens every
// grant issues, active while the client they were issued to is live — whichever grant's
// client that is — and revocable by jti until they expire. No scanner pattern: a JWT
// looks like any other.
type accessTokens struct {
	jwts   oauth.Verifier
	denied *denylist
	grants *grants
}

func (s *accessTokens) kind() credential.Kind {
	return credential.Kind{
		Name:       "oauth_access_token",
		JWTType:    accessTokenType,
		Introspect: s.introspect,
		Revoke: func(ctx context.Context, t string, r credential.Revocation) error {
			return s.denied.revoke(ctx, s.jwts, t, r)
		},
	}
}

// introspectAccessToken answers for an at+jwt of project: active while its client is
// live for the grant that issued it and its jti was not revoked.
func (s *accessTokens) introspect(ctx context.Context, token, project string) (map[string]any, error) {
	typ, claims, err := s.jwts.VerifyJWT(token)
	if err != nil || typ != accessTokenType {
		return nil, nil
	}
	clientID, _ := claims["client_id"].(string)
	if pr, _ := claims["project_id"].(string); pr != project || clientID == "" {
		return nil, nil
	}
	grantID, _ := claims["grant_id"].(string)
	if live, err := s.live(ctx, oauth.Issued{ClientID: clientID, GrantID: grantID}); err != nil || !live {
		return nil, err
	}
	if jti, _ := claims["jti"].(string); jti != "" { // revoked by its jti (RFC 7009) before its exp
		if gone, err := s.denied.revoked(ctx, jti); err != nil || gone {
			return nil, err
		}
	}
	m := map[string]any{"sub": claims["sub"], "exp": claims["exp"], "iat": claims["iat"],
		"client_id": clientID, "aud": claims["aud"], "scope": claims["scope"], "token_type": "Bearer"}
	if name, ok := claims["agent_name"]; ok {
		m["agent_name"] = name
	}
	if grantID != "" {
		m["grant_id"] = grantID
	}
	if cnf, ok := claims["cnf"].(map[string]any); ok { // DPoP-bound (RFC 9449 §6.2)
		m["cnf"] = cnf
		m["token_type"] = "DPoP"
	}
	if details, ok := claims["authorization_details"]; ok { // RFC 9396 §9.2 (SPEC §23)
		m["authorization_details"] = details
	}
	return m, nil
}

// live asks every grant whether the token's client (or person's grant) is one of its own
// and live: each knows its own ids, so nothing here reads one.
func (s *accessTokens) live(ctx context.Context, from oauth.Issued) (bool, error) {
	for _, t := range s.grants.types {
		if live, err := s.grants.byType[t].Live(ctx, from); err != nil || live {
			return live, err
		}
	}
	return false, nil
}

// jtiTopic invalidates cached denylist answers when a jti is revoked.
const jtiTopic = "oauth_jti"

// denylist holds the jti of access tokens revoked before their exp. Answers are cached
// (a revoke anywhere drops the entry when it commits), so a warm introspection costs no
// store query; a cached "not revoked" lives at most 30 s and is dropped at once by a revoke.
type denylist struct {
	ent   *ent.Client
	reads *database.Reads
	audit *audit.Recorder
	bus   invalidation.Bus
	clock clock.Clock
	cache *bearer.Cache[string, bool]
}

func newDenylist(c *ent.Client, reads *database.Reads, rec *audit.Recorder, bus invalidation.Bus, clk clock.Clock, l bearer.Limits) *denylist {
	d := &denylist{ent: c, reads: reads, audit: rec, bus: bus, clock: clk, cache: bearer.NewCache[string, bool](l.Size, l.NegativeTTL)}
	bearer.Follow(bus, jtiTopic, d.cache)
	return d
}

// revoked reports whether jti was revoked.
func (d *denylist) revoked(ctx context.Context, jti string) (bool, error) {
	return d.cache.Load(ctx, jti, func(ctx context.Context) (bool, error) {
		return database.Read(ctx, d.reads, jtiTopic, jti, func(ctx context.Context, h database.Handle) (bool, error) {
			return h.Ent.RevokedAccessToken.Query().Where(revokedaccesstoken.ID(jti)).Exist(ctx)
		})
	})
}

// revoke denies a live access token until its exp, audited in its project; expired rows
// go in the same transaction, so the table holds only what can still be presented.
func (d *denylist) revoke(ctx context.Context, jwts oauth.Verifier, token string, r credential.Revocation) error {
	_, claims, err := jwts.VerifyJWT(token)
	if err != nil {
		return credential.ErrNotLive
	}
	jti, _ := claims["jti"].(string)
	project, _ := claims["project_id"].(string)
	exp, _ := claims["exp"].(float64)
	if jti == "" || len(jti) > 64 {
		return credential.ErrNotLive
	}
	now := d.clock.Now()
	return database.WithTx(ctx, d.ent, func(tx *ent.Tx) error {
		if _, err := tx.RevokedAccessToken.Delete().Where(revokedaccesstoken.ExpiresAtLT(now)).Exec(ctx); err != nil {
			return err
		}
		if err := tx.RevokedAccessToken.Create().SetID(jti).SetProjectID(project).SetExpiresAt(time.Unix(int64(exp), 0)).Exec(ctx); err != nil {
			if ent.IsConstraintError(err) { // revoked already: the jti is the key
				return credential.ErrNotLive
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
		client, _ := claims["client_id"].(string)
		actor, actorType := r.By(audit.ClientActor(client), client)
		if _, err := d.audit.Record(ctx, tx, audit.Event{ActorID: actor, ActorType: actorType, ProjectID: project, Action: action, Metadata: md,
			Origin: r.Origin}); err != nil {
			return err
		}
		return d.bus.Publish(ctx, tx, jtiTopic, jti)
	})
}
