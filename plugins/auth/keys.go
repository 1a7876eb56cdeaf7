package auth

import (
	"context"
	"crypto"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"github.com/go-jose/go-jose/v4"
	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/authclient"
	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/assertion"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/jsonbody"
	"github.com/authcore/authcore/platform/oauth"
	"github.com/authcore/authcore/platform/scope"
)

// An auth badge's client may register public keys and authenticate with private_key_jwt
// instead of its secret, and may be granted agent scopes for the project's resources
// (SPEC §21): what a stock machine client (the MCP SDK's) needs to reach an MCP server
// that requires a scope such as mcp:tools.

var (
	_ oauth.KeyedClients   = (*Product)(nil)
	_ oauth.ClientMethods  = (*Product)(nil)
	_ oauth.ProjectClients = (*Product)(nil)
)

// ClientOfProject: a live auth client whose badge is the project's.
func (p *Product) ClientOfProject(ctx context.Context, projectID, id string) (bool, error) {
	if !strings.HasPrefix(id, clientIDPrefix) {
		return false, nil
	}
	c, err := p.lookup(ctx, id)
	if err != nil || c == nil || c.ProjectID != projectID {
		return false, err
	}
	return p.live(ctx, id)
}

// AuthMethods: secret or key; auth clients belong to a project, so they introspect.
func (*Product) AuthMethods() ([]string, bool) {
	return []string{oauth.AuthSecretBasic, oauth.AuthSecretPost, oauth.AuthPrivateKeyJWT}, true
}

// ClientKeys is the key set of a live auth client that registered keys.
func (p *Product) ClientKeys(ctx context.Context, id string) (oauth.Client, assertion.KeySet, bool, error) {
	if !strings.HasPrefix(id, clientIDPrefix) {
		return oauth.Client{}, nil, false, nil
	}
	c, err := p.lookup(ctx, id)
	if err != nil || c == nil || len(c.keys.Keys) == 0 {
		return oauth.Client{}, nil, false, err
	}
	if live, err := p.live(ctx, id); !live || err != nil {
		return oauth.Client{}, nil, false, err
	}
	return c.Client, assertion.Static{Set: c.keys}, true, nil
}

// maxKeys bounds the keys one client may hold (one current, one next, a few spare).
const maxKeys = 5

// keyRoutes are the routes of a badge's keys and scopes: admins, with a recent
// authentication, as every route that widens what a credential may do.
func (p *Product) keyRoutes(g *guard.Guard) []httpserver.Route {
	admin := []fiber.Handler{g.Dashboard(), g.ProjectRole(identity.RoleAdmin, guard.FromPath, nil)}
	const base = "/v1/projects/:id/service-badges/:badgeId"
	return []httpserver.Route{
		{Method: http.MethodPost, Path: base + "/keys", Handlers: append(slices.Clone(admin), g.Recently(p.addKey))},
		{Method: http.MethodDelete, Path: base + "/keys/:kid", Handlers: append(slices.Clone(admin), g.Recently(p.removeKey))},
		{Method: http.MethodPut, Path: base + "/scopes", Handlers: append(slices.Clone(admin), g.Recently(p.setScopes))},
	}
}

var errNoClient = apperr.NotFound("no live auth badge with this id in this project")

// clientOfBadge is the live client of the route's auth badge, in tx.
func (p *Product) clientOfBadge(ctx context.Context, tx *ent.Tx, project, badge string) (*ent.AuthClient, error) {
	c, err := tx.AuthClient.Query().Where(authclient.BadgeID(badge), authclient.ProjectID(project), authclient.RevokedAtIsNil()).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, errNoClient
	}
	if err == nil && c.ExpiresAt != nil && !p.clock.Now().Before(*c.ExpiresAt) {
		return nil, errNoClient
	}
	return c, err
}

// addKey registers a public key: { jwk } → 201 { kid }.
func (p *Product) addKey(c *fiber.Ctx) error {
	body, ok := jsonbody.Parse(c.Body())
	raw, st := body.RawObject("jwk")
	if !ok || st != jsonbody.OK {
		return apperr.Validation(apperr.Issue{Field: "jwk", Reason: "required: a public JSON Web Key (RFC 7517) for signing"})
	}
	var key jose.JSONWebKey
	if err := json.Unmarshal(raw, &key); err != nil || !key.IsPublic() || !key.Valid() || (key.Use != "" && key.Use != "sig") {
		return apperr.Validation(apperr.Issue{Field: "jwk", Reason: "must be a public signing key (RSA, EC or Ed25519) without private parts"})
	}
	if key.Algorithm != "" && !slices.Contains(assertion.Algorithms, jose.SignatureAlgorithm(key.Algorithm)) {
		return apperr.Validation(apperr.Issue{Field: "jwk", Reason: "alg must be an asymmetric signature algorithm"})
	}
	if key.KeyID == "" { // RFC 7638: the key's own thumbprint names it
		tp, err := key.Thumbprint(crypto.SHA256)
		if err != nil {
			return apperr.Validation(apperr.Issue{Field: "jwk", Reason: "cannot be named by its thumbprint"})
		}
		key.KeyID = base64.RawURLEncoding.EncodeToString(tp)
	}
	if len(key.KeyID) > 128 {
		return apperr.Validation(apperr.Issue{Field: "jwk", Reason: "kid must be at most 128 characters"})
	}
	stored, err := json.Marshal(key)
	if err != nil {
		return err
	}
	var asMap map[string]any
	if err := json.Unmarshal(stored, &asMap); err != nil {
		return err
	}
	project, badge := guard.ProjectOf(c), strings.Clone(c.Params("badgeId"))
	err = p.change(c, project, badge, "service_badge.key_add", map[string]any{"badgeId": badge, "kid": key.KeyID},
		func(cl *ent.AuthClient, u *ent.AuthClientUpdateOne) error {
			for _, k := range cl.Keys {
				if k["kid"] == key.KeyID {
					return apperr.New(apperr.KindConflict, "key_exists", "the client has a key with this kid already")
				}
			}
			if len(cl.Keys) >= maxKeys {
				return apperr.Validation(apperr.Issue{Field: "jwk", Reason: "a client holds at most 5 keys: remove one first"})
			}
			u.SetKeys(append(slices.Clone(cl.Keys), asMap))
			return nil
		})
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(fiber.Map{"badgeId": badge, "kid": key.KeyID})
}

// removeKey withdraws a key: assertions it signs fail from the commit on, everywhere.
func (p *Product) removeKey(c *fiber.Ctx) error {
	project, badge, kid := guard.ProjectOf(c), strings.Clone(c.Params("badgeId")), strings.Clone(c.Params("kid"))
	err := p.change(c, project, badge, "service_badge.key_remove", map[string]any{"badgeId": badge, "kid": kid},
		func(cl *ent.AuthClient, u *ent.AuthClientUpdateOne) error {
			keys := slices.DeleteFunc(slices.Clone(cl.Keys), func(k map[string]any) bool { return k["kid"] == kid })
			if len(keys) == len(cl.Keys) {
				return apperr.NotFound("the client has no key with this kid")
			}
			u.SetKeys(keys)
			return nil
		})
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"ok": true, "badgeId": badge, "kid": kid})
}

// setScopes grants the client agent scopes: { scopes } → 200 { badgeId, scopes }. Each
// must be within the project's policy (allowedScopes).
func (p *Product) setScopes(c *fiber.Ctx) error {
	project, badge := guard.ProjectOf(c), strings.Clone(c.Params("badgeId"))
	scopes, err := p.scopesOf(c.UserContext(), project, c.Body())
	if err != nil {
		return err
	}
	err = p.change(c, project, badge, "service_badge.scopes_update", map[string]any{"badgeId": badge, "scopes": scopes},
		func(_ *ent.AuthClient, u *ent.AuthClientUpdateOne) error {
			u.SetScopes(scopes)
			return nil
		})
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"badgeId": badge, "scopes": scopes})
}

// scopesOf reads and checks body's scopes, as the scopes route and a mint take them:
// an array of at most 32 agent scopes, none a role name, each within the project's
// policy; sorted, without duplicates.
func (p *Product) scopesOf(ctx context.Context, project string, raw []byte) ([]string, error) {
	f := jsonbody.Read(raw)
	body, _ := jsonbody.Parse(raw)
	scopes, st := body.Strings("scopes")
	switch {
	case st != jsonbody.OK:
		f.Fail("scopes", "required: an array of scopes")
	case len(scopes) > 32:
		f.Fail("scopes", "at most 32")
	}
	for _, s := range scopes {
		if !scope.Valid(s) || identity.RoleRank(s) > 0 {
			f.Fail("scopes", "each must match "+scope.Pattern.String()+" and not be a role name (the badge's role is its own)")
			break
		}
	}
	if err := f.Err(); err != nil {
		return nil, err
	}
	pol, err := p.policies.Policy(ctx, project)
	if err != nil {
		return nil, err
	}
	for _, s := range scopes {
		if !pol.Allows(s) {
			return nil, apperr.Validation(apperr.Issue{Field: "scopes", Reason: "exceeds_policy: the project's policy does not allow " + s})
		}
	}
	return slices.Compact(slices.Sorted(slices.Values(scopes))), nil
}

// change edits the route badge's client with edit, audited as action, and drops the
// cached client on every replica as it commits.
func (p *Product) change(c *fiber.Ctx, project, badge, action string, md map[string]any, edit func(*ent.AuthClient, *ent.AuthClientUpdateOne) error) error {
	ctx := c.UserContext()
	return database.WithTx(ctx, p.ent, func(tx *ent.Tx) error {
		cl, err := p.clientOfBadge(ctx, tx, project, badge)
		if err != nil {
			return err
		}
		u := tx.AuthClient.UpdateOne(cl)
		if err := edit(cl, u); err != nil {
			return err
		}
		if err := u.Exec(ctx); err != nil {
			return err
		}
		if _, err := p.audit.Record(ctx, tx, audit.Event{ActorID: guard.ActorOf(c), ProjectID: project, Action: action,
			Metadata: md, Origin: httpserver.Origin(c)}); err != nil {
			return err
		}
		return p.bus.Publish(ctx, tx, clientTopic, cl.ID)
	})
}
