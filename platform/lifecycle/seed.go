package lifecycle

import (
	"context"
	"fmt"
	"time"

	"entgo.io/ent/dialect/sql"
	"entgo.io/ent/schema/field"
	"github.com/jackc/pgx/v5"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/schema"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/database"
)

// Read is the credential with id, read outside any kind's lifecycle, or nil when there is
// none: for a neighbour that needs an immutable field of a credential and cannot depend
// on the kind's lifecycle (the auth product shows its badge's name on approval cards, and
// the badges' lifecycle depends on every product).
func (t *Table) Read(ctx context.Context, db *database.DB, id string) (*Row, error) {
	tb, err := newTable(t.Name, db.Storage, t.Mixin, t.Schema())
	if err != nil {
		return nil, err
	}
	r, err := tb.one(ctx, db.Ent, sql.FieldEQ(schema.FieldID, id))
	if err == errNoRow {
		return nil, nil
	}
	return r, err
}

// Seeded is one credential written by Seed.
type Seeded struct {
	ProjectID string
	CreatedAt time.Time
	ExpiresAt *time.Time
	Hint      string
	Digest    []byte
	// Own are its own fields' values by column; a field left out is NULL.
	Own map[string]any
}

// Seed writes n credentials, row(i) each, straight to the table in bulk: PostgreSQL's
// COPY, else multi-row INSERTs, a transaction per 50,000. For the load command's
// populations (the API would take hours for a million): no audit record, event or
// cache is touched, which is right only for rows nothing has seen yet.
func (t *Table) Seed(ctx context.Context, db *database.DB, n int, row func(i int) Seeded) error {
	tb, err := newTable(t.Name, db.Storage, t.Mixin, t.Schema())
	if err != nil {
		return err
	}
	cols := []string{schema.FieldID, schema.FieldProjectID, schema.FieldCreatedAt, schema.FieldExpiresAt, t.Mixin.HintColumn(), "digest"}
	for _, c := range tb.own {
		cols = append(cols, c.name)
	}
	values := func(i int) ([]any, error) {
		s := row(i)
		v := []any{schema.NewID(t.Mixin.IDPrefix), s.ProjectID, s.CreatedAt, s.ExpiresAt, s.Hint, s.Digest}
		for _, c := range tb.own {
			stored, err := c.stored(s.Own[c.name])
			if err != nil {
				return nil, fmt.Errorf("%s.%s: %w", t.Name, c.name, err)
			}
			if b, ok := stored.([]byte); ok && c.typ == field.TypeJSON {
				stored = string(b) // COPY into jsonb, like both drivers, takes JSON as text
			}
			v = append(v, stored)
		}
		return v, nil
	}
	const perTx = 50_000
	for first := 0; first < n; first += perTx {
		last := min(first+perTx, n)
		if db.Storage == config.Postgres {
			i := first
			src := pgx.CopyFromFunc(func() ([]any, error) {
				if i == last {
					return nil, nil
				}
				i++
				return values(i - 1)
			})
			if _, err := db.Pool.CopyFrom(ctx, pgx.Identifier{t.Name}, cols, src); err != nil {
				return fmt.Errorf("seeding %s: %w", t.Name, err)
			}
			continue
		}
		err := database.WithTx(ctx, db.Ent, func(tx *ent.Tx) error {
			// Under SQLite's 32,766 variables a statement.
			batch := 30_000 / len(cols)
			for k := first; k < last; k += batch {
				ins := sql.Dialect(tb.dialect).Insert(t.Name).Columns(cols...)
				for i := k; i < min(k+batch, last); i++ {
					v, err := values(i)
					if err != nil {
						return err
					}
					ins.Values(v...)
				}
				text, args := ins.Query()
				if _, err := tx.ExecContext(ctx, text, args...); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("seeding %s: %w", t.Name, err)
		}
	}
	return nil
}
