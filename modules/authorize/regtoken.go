package authorize

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	entsql "entgo.io/ent/dialect/sql"
	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/registrationtoken"
	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/credential"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/jsonbody"
	"github.com/authcore/authcore/platform/oauth"
	"github.com/authcore/authcore/platform/secret"
)

// Initial access tokens (RFC 7591 §3, SPEC §25): a project admin mints one and hands it
// to a third party, whose dynamic registration then makes a third-party app of the
// project. ac_iat_…, kept as a digest, spent one use per registration.

// registrationTokenKind prefixes initial access tokens: ac_iat_….
const registrationTokenKind = "iat"

const (
	actionRegistrationTokenCreate = "app.registration_token_create"
	actionRegistrationTokenDelete = "app.registration_token_delete"
	maxTokenHours                 = 720
	maxTokenUses                  = 1000
	defaultTokenHours             = 24
	defaultTokenUses              = 1
)

var errTokenNotFound = apperr.NotFound("no such registration token in this project")

// errInitialAccess is RFC 6750 §3.1's answer to an initial access token that is unknown,
// expired or used up (RFC 7591 §3: the registration endpoint is its protected resource).
var errInitialAccess = oauth.Error(apperr.KindUnauthenticated, "invalid_token",
	"the initial access token is unknown, expired or used up").WithHeader("WWW-Authenticate", `Bearer realm="authcore", error="invalid_token"`)

// registrationTokenView is a token as a list shows it: never the token.
type registrationTokenView struct {
	ID        string    `json:"id"`
	Hint      string    `json:"hint"`
	ExpiresAt time.Time `json:"expiresAt"`
	MaxUses   int       `json:"maxUses"`
	Uses      int       `json:"uses"`
	CreatedAt time.Time `json:"createdAt"`
}

func viewOfToken(r *ent.RegistrationToken) registrationTokenView {
	return registrationTokenView{ID: r.ID, Hint: r.Hint, ExpiresAt: r.ExpiresAt.UTC(), MaxUses: r.MaxUses, Uses: r.Uses, CreatedAt: r.CreatedAt.UTC()}
}

func (h appAdmin) createRegistrationToken(c *fiber.Ctx) error {
	f := jsonbody.Read(c.Body())
	for name := range f.Object {
		if name != "expiresInHours" && name != "maxUses" {
			f.Fail(name, "not a field of a registration token")
		}
	}
	whole := func(name string, def, hi int64) int64 {
		switch v, whole, st := f.Integer(name); {
		case st == jsonbody.Absent || st == jsonbody.Null:
			return def
		case st == jsonbody.WrongType || !whole || v < 1 || v > hi:
			f.Fail(name, fmt.Sprintf("a whole number, 1 to %d", hi))
		default:
			return v
		}
		return def
	}
	hours := whole("expiresInHours", defaultTokenHours, maxTokenHours)
	uses := whole("maxUses", defaultTokenUses, maxTokenUses)
	if err := f.Err(); err != nil {
		return err
	}
	token, err := secret.NewToken(registrationTokenKind)
	if err != nil {
		return err
	}
	var row *ent.RegistrationToken
	err = database.WithTx(c.UserContext(), h.ent, func(tx *ent.Tx) error {
		row, err = tx.RegistrationToken.Create().SetProjectID(guard.ProjectOf(c)).SetDigest(secret.DigestOf(token).Bytes()).
			SetHint(secret.Hint(token)).SetExpiresAt(h.clock.Now().Add(time.Duration(hours) * time.Hour)).SetMaxUses(int(uses)).
			SetNillableCreatedBy(guard.ActorOf(c)).Save(c.UserContext())
		if err != nil {
			return err
		}
		_, err = h.grants.audit.Record(c.UserContext(), tx, audit.Event{ActorID: guard.ActorOf(c), ProjectID: guard.ProjectOf(c),
			Action: actionRegistrationTokenCreate, Origin: httpserver.Origin(c),
			Metadata: map[string]any{"registrationTokenId": row.ID, "expiresInHours": hours, "maxUses": uses}})
		return err
	})
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Status(http.StatusCreated).JSON(fiber.Map{"registrationToken": viewOfToken(row), "token": token})
}

func (h appAdmin) listRegistrationTokens(c *fiber.Ctx) error {
	rows, err := h.ent.RegistrationToken.Query().Where(registrationtoken.ProjectID(guard.ProjectOf(c))).
		Order(ent.Desc(registrationtoken.FieldCreatedAt), ent.Desc(registrationtoken.FieldID)).All(c.UserContext())
	if err != nil {
		return err
	}
	out := make([]registrationTokenView, len(rows))
	for i, r := range rows {
		out[i] = viewOfToken(r)
	}
	return c.JSON(fiber.Map{"registrationTokens": out})
}

func (h appAdmin) deleteRegistrationToken(c *fiber.Ctx) error {
	id := strings.Clone(c.Params("tokenId"))
	err := database.WithTx(c.UserContext(), h.ent, func(tx *ent.Tx) error {
		n, err := tx.RegistrationToken.Delete().Where(registrationtoken.ID(id), registrationtoken.ProjectID(guard.ProjectOf(c))).Exec(c.UserContext())
		if err != nil {
			return err
		}
		if n == 0 {
			return errTokenNotFound
		}
		_, err = h.grants.audit.Record(c.UserContext(), tx, audit.Event{ActorID: guard.ActorOf(c), ProjectID: guard.ProjectOf(c),
			Action: actionRegistrationTokenDelete, Origin: httpserver.Origin(c), Metadata: map[string]any{"registrationTokenId": id}})
		return err
	})
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"ok": true, "id": id})
}

// initialAccess is the initial access token a registration presents ("" without an
// Authorization header: an open registration, as before). A header that is there but is
// no live token is refused before anything else is read.
func (h appAdmin) initialAccess(c *fiber.Ctx) (string, error) {
	header := c.Get(fiber.HeaderAuthorization)
	if header == "" {
		return "", nil
	}
	scheme, token, _ := strings.Cut(header, " ")
	token = strings.TrimSpace(token)
	if !strings.EqualFold(scheme, "Bearer") || !secret.CheckToken(registrationTokenKind, token) {
		return "", errInitialAccess
	}
	live, err := h.ent.RegistrationToken.Query().Where(registrationtoken.Digest(secret.DigestOf(token).Bytes()),
		registrationtoken.ExpiresAtGT(h.clock.Now())).Only(c.UserContext())
	if ent.IsNotFound(err) || (err == nil && live.Uses >= live.MaxUses) {
		return "", errInitialAccess
	}
	return token, err
}

// spendInitialAccess spends one use of token in tx and returns its project. The guard is
// in the UPDATE (uses < max_uses, not expired), so of two registrations racing for the
// last use one updates a row and the other none: the database decides, not a read.
func (h appAdmin) spendInitialAccess(ctx context.Context, tx *ent.Tx, token string) (string, string, error) {
	digest := secret.DigestOf(token).Bytes()
	n, err := tx.RegistrationToken.Update().Where(registrationtoken.Digest(digest), registrationtoken.ExpiresAtGT(h.clock.Now()),
		func(s *entsql.Selector) {
			s.Where(entsql.ColumnsLT(s.C(registrationtoken.FieldUses), s.C(registrationtoken.FieldMaxUses)))
		}).
		AddUses(1).Save(ctx)
	if err != nil {
		return "", "", err
	}
	if n == 0 {
		return "", "", errInitialAccess
	}
	row, err := tx.RegistrationToken.Query().Where(registrationtoken.Digest(digest)).Only(ctx)
	if err != nil {
		return "", "", err
	}
	return row.ProjectID, row.ID, nil
}

// registrationTokenKinds: a leaked initial access token (a secret-scanning report, or
// RFC 7009 by its holder) is deleted, so nobody can register with it.
func registrationTokenKinds(c *ent.Client, g *grants) []credential.Kind {
	return []credential.Kind{{
		Name: "oauth_initial_access_token", Prefix: secret.Prefix(registrationTokenKind), Pattern: secret.Pattern(registrationTokenKind),
		Revoke: func(ctx context.Context, token string, r credential.Revocation) error {
			return database.WithTx(ctx, c, func(tx *ent.Tx) error {
				row, err := tx.RegistrationToken.Query().Where(registrationtoken.Digest(secret.DigestOf(token).Bytes())).Only(ctx)
				if ent.IsNotFound(err) {
					return credential.ErrNotLive
				}
				if err != nil {
					return err
				}
				if err := tx.RegistrationToken.DeleteOne(row).Exec(ctx); err != nil {
					return err
				}
				actor, actorType := r.By(audit.ActorSystem, "")
				_, err = g.audit.Record(ctx, tx, audit.Event{ActorID: actor, ActorType: actorType, ProjectID: row.ProjectID,
					Action: cmp.Or(r.Action, actionRegistrationTokenDelete), Origin: r.Origin,
					Metadata: mergeMeta(map[string]any{"registrationTokenId": row.ID, "reason": "token_presented"}, r.Metadata)})
				return err
			})
		},
	}}
}

func mergeMeta(into, more map[string]any) map[string]any {
	for k, v := range more {
		into[k] = v
	}
	return into
}
