package session

import (
	"context"
	"errors"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/predicate"
	"github.com/authcore/authcore/ent/refreshtoken"
	entsession "github.com/authcore/authcore/ent/session"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/credential"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/secret"
)

// refreshKind prefixes refresh tokens: ac_rt_….
const refreshKind = "rt"

// kinds: refresh tokens (SPEC §9a). A leaked one — current or already rotated — ends its
// whole session, with every access token of it.
func (e *Engine) kinds() []credential.Kind {
	return []credential.Kind{{
		Name: "session_refresh_token", Prefix: secret.Prefix(refreshKind), Pattern: secret.Pattern(refreshKind),
		Revoke: e.revokePresented,
		Events: []string{"session.revoke", "session.revoke_all", "session.theft_detected"},
	}, e.accessKind()}
}

// revokePresented revokes the live session a refresh token belongs to. An end user's
// project hears of it (audit record and event); a dashboard user's session has no project.
func (e *Engine) revokePresented(ctx context.Context, token string, r credential.Revocation) error {
	rt, err := e.ent.RefreshToken.Query().Where(refreshtoken.Digest(secret.DigestOf(token).Bytes())).Only(ctx)
	if ent.IsNotFound(err) {
		return credential.ErrNotLive
	}
	if err != nil {
		return err
	}
	s, err := e.ent.Session.Get(ctx, rt.SessionID)
	if ent.IsNotFound(err) {
		return credential.ErrNotLive
	}
	if err != nil {
		return err
	}
	var event func(int) audit.Event
	if s.TenantID != identity.PublicTenant {
		action := r.Action
		if action == "" {
			action = "session.revoke"
		}
		md := map[string]any{"sessionHandle": s.ID, "userId": s.UserID}
		for k, v := range r.Metadata {
			md[k] = v
		}
		event = func(int) audit.Event {
			actor, actorType := r.By(audit.ActorUser, s.UserID)
			return audit.Event{ActorID: actor, ActorType: actorType, ProjectID: s.TenantID, Action: action, Metadata: md, Origin: r.Origin}
		}
	}
	n, err := e.revokeWhere(ctx, []predicate.Session{entsession.ID(s.ID), entsession.ExpiresAtGT(e.clock.Now())}, event)
	if err == nil && n == 0 {
		return credential.ErrNotLive
	}
	return err
}

// accessKind: session access tokens (JWTs with typ JWT and aud authcore:session) are
// introspectable by the project whose tenant they belong to; they end with their session,
// so there is nothing to revoke by presenting one.
func (e *Engine) accessKind() credential.Kind {
	return credential.Kind{
		Name: "session_access_token", IntrospectedAs: "session", JWTType: "JWT",
		Introspect: func(ctx context.Context, token, project string) (map[string]any, error) {
			_, claims, err := e.issuer.VerifyJWT(token)
			if err != nil {
				return nil, nil
			}
			// Tokens signed before sessions carried an aud have none.
			if aud, ok := claims["aud"]; ok && !sessionAudience(aud) {
				return nil, nil
			}
			p, err := e.Authenticate(ctx, token)
			var ve *identity.VerifyError
			if errors.As(err, &ve) || (err == nil && p.TenantID != project) {
				return nil, nil
			}
			if err != nil {
				return nil, err
			}
			return map[string]any{"sub": claims["sub"], "exp": claims["exp"], "iat": claims["iat"],
				"user_id": p.UserID, "session_handle": p.SessionHandle}, nil
		},
	}
}
