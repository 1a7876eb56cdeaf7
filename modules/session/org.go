package session

import (
	"context"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/jsonbody"
)

// errNoSuchOrg answers an org the person is not a member of: whether it exists is not
// theirs to learn (SPEC §26, nothing of another org is visible).
var errNoSuchOrg = apperr.New(apperr.KindNotFound, "org_not_found", "you are not a member of that organization")

// SwitchOrg makes orgID the active organisation of live session sid (nil: none) and signs
// an access token that says so; the session's refresh token carries it on.
func (e *Engine) SwitchOrg(ctx context.Context, sid string, orgID *string) (identity.Tokens, *identity.OrgMembership, error) {
	if !e.Ready() {
		return identity.Tokens{}, nil, errNotReady
	}
	now := e.clock.Now()
	var s *ent.Session
	var m *identity.OrgMembership
	err := database.WithTx(ctx, e.ent, func(tx *ent.Tx) error {
		var err error
		if s, err = tx.Session.Get(ctx, sid); err != nil {
			return err
		}
		if s.RevokedAt != nil || !now.Before(s.ExpiresAt) {
			return verifyFailed(identity.ReasonSessionRevoked)
		}
		if orgID != nil {
			if e.orgs == nil || s.TenantID == identity.PublicTenant {
				return errNoSuchOrg
			}
			got, ok, err := e.orgs.Membership(ctx, s.TenantID, *orgID, s.UserID)
			if err != nil {
				return err
			}
			if !ok {
				return errNoSuchOrg
			}
			m = &got
		}
		u := tx.Session.UpdateOne(s).ClearOrgID()
		if orgID != nil {
			u = tx.Session.UpdateOne(s).SetOrgID(*orgID)
		}
		s, err = u.Save(ctx)
		return err
	})
	if ent.IsNotFound(err) {
		return identity.Tokens{}, nil, verifyFailed(identity.ReasonInvalidToken)
	}
	if err != nil {
		return identity.Tokens{}, nil, err
	}
	access, exp, err := e.sign(ctx, s, now)
	if err != nil {
		return identity.Tokens{}, nil, err
	}
	return identity.Tokens{SessionHandle: s.ID, AccessToken: access, AccessTokenExpiresAt: exp}, m, nil
}

func (h *handler) orgRoutes() []httpserver.Route {
	return []httpserver.Route{{Method: http.MethodPost, Path: "/v1/auth-core/session/org", Handlers: []fiber.Handler{h.requireReady, h.guard.Session(), h.switchOrg}}}
}

// switchOrg is POST /v1/auth-core/session/org { orgId: "org_…" | null } (SPEC §26): the
// session's active organisation, and a new access token carrying it (cookie too, for a
// browser session).
func (h *handler) switchOrg(c *fiber.Ctx) error {
	p, _ := guard.PrincipalOf(c)
	f := jsonbody.Read(c.Body())
	var orgID *string
	switch v, st := f.String("orgId"); st {
	case jsonbody.OK:
		if v == "" || len(v) > 64 {
			f.Fail("orgId", "must be an organization id (org_…), or null for none")
		}
		v = string([]byte(v))
		orgID = &v
	case jsonbody.Absent:
		f.Fail("orgId", "required: an organization id (org_…), or null for none")
	case jsonbody.Null:
	default:
		f.Fail("orgId", "must be a string or null")
	}
	if err := f.Err(); err != nil {
		return err
	}
	t, m, err := h.engine.SwitchOrg(httpserver.WithIssuer(c, h.cfg), p.SessionHandle, orgID)
	if err != nil {
		return err
	}
	if cred, _ := guard.CredentialOf(c); cred.FromCookie {
		guard.SetSessionCookies(c, h.cfg, t, h.engine.clock.Now())
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.JSON(fiber.Map{
		"org": m,
		"session": fiber.Map{"sessionHandle": t.SessionHandle, "accessToken": t.AccessToken,
			"accessTokenExpiresAt": t.AccessTokenExpiresAt.UTC().Format(time.RFC3339)},
	})
}
