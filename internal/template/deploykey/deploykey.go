// Package deploykey is the template of a new credential kind (docs/extending.md): deploy
// keys a project admin mints for a CI system. It is one module — its route, its store, its
// kind contributed to the registry — and one line where the app is composed; introspection,
// RFC 7009, leak reports, the secret-scanning pattern, webhook event types and the API
// document's enums then know it. The extension test adds it with that one line.
//
// Its table is created here with plain SQL so the template stays inside its folder; a real
// kind declares it under ent/schema and gets a migration (docs/extending.md).
package deploykey

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"net/http"
	"sync"

	"github.com/gofiber/fiber/v2"
	"go.uber.org/fx"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/schema"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/credential"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/secret"
)

// Module is the kind: the one line to add is `deploykey.Module,`.
var Module = fx.Module("deploykey",
	fx.Provide(newStore),
	credential.AsKinds(func(s *store) []credential.Kind {
		return []credential.Kind{{
			Name: "deploy_key", Prefix: secret.Prefix(prefix), Pattern: secret.Pattern(prefix),
			Revoke:     s.revokePresented,
			Introspect: s.introspect,
			Events:     []string{"deploy_key.create", "deploy_key.revoke"},
		}}
	}),
	httpserver.AsModuleRoutes("badge", func(s *store, g *guard.Guard) []httpserver.Route {
		admin := []fiber.Handler{g.Dashboard(), g.ProjectRole(identity.RoleAdmin, guard.FromPath, nil)}
		return []httpserver.Route{{Method: http.MethodPost, Path: "/test/projects/:id/deploy-keys", Handlers: append(admin, s.mint)}}
	}),
)

// prefix makes its secrets ac_dk_….
const prefix = "dk"

type store struct {
	db    *database.DB
	audit *audit.Recorder
	once  sync.Once
	err   error
}

func newStore(db *database.DB, rec *audit.Recorder) *store { return &store{db: db, audit: rec} }

func (s *store) table(ctx context.Context) error {
	s.once.Do(func() {
		_, s.err = s.db.SQL.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS template_deploy_keys (
			id TEXT PRIMARY KEY, project_id TEXT NOT NULL, digest TEXT NOT NULL UNIQUE, revoked INTEGER NOT NULL DEFAULT 0)`)
	})
	return s.err
}

// mint creates a key; its secret is answered once and stored only as its digest.
func (s *store) mint(c *fiber.Ctx) error {
	ctx := c.UserContext()
	if err := s.table(ctx); err != nil {
		return err
	}
	token, err := secret.NewToken(prefix)
	if err != nil {
		return err
	}
	id, project := schema.NewID("dk_"), guard.ProjectOf(c)
	err = database.WithTx(ctx, s.db.Ent, func(tx *ent.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO template_deploy_keys (id, project_id, digest) VALUES ($1, $2, $3)`,
			id, project, digestOf(token)); err != nil {
			return err
		}
		_, err := s.audit.Record(ctx, tx, audit.Event{ProjectID: project, ActorID: guard.ActorOf(c), Action: "deploy_key.create",
			Metadata: map[string]any{"deployKeyId": id}, Origin: httpserver.Origin(c)})
		return err
	})
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(fiber.Map{"id": id, "plaintext": token})
}

func digestOf(token string) string { return hex.EncodeToString(secret.DigestOf(token).Bytes()) }

// live is the live key a secret belongs to.
func (s *store) live(ctx context.Context, token string) (id, project string, err error) {
	if err := s.table(ctx); err != nil {
		return "", "", err
	}
	err = s.db.SQL.QueryRowContext(ctx, `SELECT id, project_id FROM template_deploy_keys WHERE digest = $1 AND revoked = 0`,
		digestOf(token)).Scan(&id, &project)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", credential.ErrNotLive
	}
	return id, project, err
}

func (s *store) introspect(ctx context.Context, token, project string) (map[string]any, error) {
	id, owner, err := s.live(ctx, token)
	if errors.Is(err, credential.ErrNotLive) || (err == nil && owner != project) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return map[string]any{"sub": id, "token_type": "Bearer"}, nil
}

// revokePresented revokes the key a presented secret belongs to, audited as r says.
func (s *store) revokePresented(ctx context.Context, token string, r credential.Revocation) error {
	id, project, err := s.live(ctx, token)
	if err != nil {
		return err
	}
	return database.WithTx(ctx, s.db.Ent, func(tx *ent.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE template_deploy_keys SET revoked = 1 WHERE id = $1 AND revoked = 0`, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return credential.ErrNotLive
		}
		action := r.Action
		if action == "" {
			action = "deploy_key.revoke"
		}
		md := map[string]any{"deployKeyId": id}
		for k, v := range r.Metadata {
			md[k] = v
		}
		_, err = s.audit.Record(ctx, tx, audit.Event{ProjectID: project, Action: action, Metadata: md, Origin: r.Origin})
		return err
	})
}
