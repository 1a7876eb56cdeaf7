package secret

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"sync"

	entsql "entgo.io/ent/dialect/sql"
	"go.uber.org/fx"
)

// Declaration names one column of sealed values, so one routine can re-seal it under a
// new master key (`authcore keys reseal`) without code of its owner.
type Declaration struct {
	// Name names the values in the command's report ("webhook secrets"); columns that
	// share a name are counted together.
	Name string
	// Table and Column hold the sealed value; NULL and "" are no value.
	Table, Column string
	// ID is the column that keys the row ("id" if empty).
	ID string
	// AAD is the column of the same row whose value each value is sealed with (the ID
	// column if empty). A row whose AAD is NULL holds no value.
	AAD string
}

// Sealed is a declared column of sealed values: the only way to seal a value outside
// this package, so no column of sealed values can go undeclared. Declare one per column,
// in a package variable, and contribute it with AsSealed.
type Sealed struct{ d Declaration }

var (
	declaredMu sync.Mutex
	declared   = map[string]*Sealed{}
)

// Declare declares a column of sealed values. Each column is declared once: two owners
// of one column would seal it with two ideas of its AAD.
func Declare(d Declaration) *Sealed {
	if d.ID == "" {
		d.ID = "id"
	}
	if d.AAD == "" {
		d.AAD = d.ID
	}
	if d.Name == "" || d.Table == "" || d.Column == "" {
		panic(fmt.Sprintf("secret.Declare: a sealed column needs a name, a table and a column: %+v", d))
	}
	s := &Sealed{d: d}
	declaredMu.Lock()
	defer declaredMu.Unlock()
	if _, dup := declared[s.key()]; dup {
		panic("secret.Declare: " + s.key() + " is declared twice")
	}
	declared[s.key()] = s
	return s
}

// Declared is every column declared in the binary, for the test that holds each one
// contributed (an undeclared column cannot be sealed at all).
func Declared() []*Sealed {
	declaredMu.Lock()
	defer declaredMu.Unlock()
	out := make([]*Sealed, 0, len(declared))
	for _, s := range declared {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b *Sealed) int { return strings.Compare(a.key(), b.key()) })
	return out
}

// Declaration is what was declared, defaults filled in.
func (s *Sealed) Declaration() Declaration { return s.d }

func (s *Sealed) key() string { return s.d.Table + "." + s.d.Column }

// Seal seals plaintext for this column under the current key, bound to aad: the value of
// the row's AAD column the declaration names.
func (s *Sealed) Seal(k *Keyring, plaintext []byte, aad string) (string, error) {
	return k.seal(plaintext, []byte(aad))
}

// AsSealed contributes declared columns to `authcore keys reseal`; the only place that
// spells the group tag.
func AsSealed(cols ...*Sealed) fx.Option {
	opts := make([]fx.Option, len(cols))
	for i, c := range cols {
		opts[i] = fx.Supply(fx.Annotated{Group: "sealed", Target: c})
	}
	return fx.Options(opts...)
}

// Store is where the sealed columns live (database.DB): plain SQL, because the resealer
// knows tables only by their declarations.
type Store interface {
	// Dialect is ent's name of the store's SQL dialect.
	Dialect() string
	Query(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	Exec(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// Resealer re-seals every contributed column under the current master key.
type Resealer struct {
	fx.In
	Ring    *Keyring
	Store   Store
	Columns []*Sealed `group:"sealed"`
}

// ResealAll re-seals every column batch by batch and reports each name's count, in name
// order. Run it while every replica already lists the new key first and the old one after
// it; then the old key can be removed. Each row is swapped on its own, only if it still
// holds the value read, so a concurrent change is never overwritten and the command is
// safe while servers run; a value that does not open stops it.
func (r Resealer) ResealAll(ctx context.Context, batch int, report func(name string, resealed int)) error {
	cols := slices.Clone(r.Columns)
	slices.SortFunc(cols, func(a, b *Sealed) int {
		return strings.Compare(a.d.Name+"\x00"+a.key(), b.d.Name+"\x00"+b.key())
	})
	for i := 0; i < len(cols); {
		name, total := cols[i].d.Name, 0
		for ; i < len(cols) && cols[i].d.Name == name; i++ {
			for {
				n, more, err := r.resealBatch(ctx, cols[i].d, batch)
				total += n
				if err != nil {
					return fmt.Errorf("resealing %s (%s): %w", name, cols[i].key(), err)
				}
				if !more {
					break
				}
			}
		}
		report(name, total)
	}
	return nil
}

// resealBatch re-seals at most batch values of d not sealed under the current key; more
// reports that the batch was full: there may be others.
func (r Resealer) resealBatch(ctx context.Context, d Declaration, batch int) (resealed int, more bool, err error) {
	dialect := r.Store.Dialect()
	query, args := entsql.Dialect(dialect).Select(d.ID, d.Column, d.AAD).From(entsql.Table(d.Table)).
		Where(entsql.And(entsql.NotNull(d.Column), entsql.NEQ(d.Column, ""), entsql.NotNull(d.AAD),
			entsql.Not(entsql.HasPrefix(d.Column, r.Ring.currentPrefix())))).
		Limit(batch).Query()
	rows, err := r.Store.Query(ctx, query, args...)
	if err != nil {
		return 0, false, err
	}
	type row struct{ id, sealed, aad string }
	var found []row
	for rows.Next() {
		var x row
		if err := rows.Scan(&x.id, &x.sealed, &x.aad); err != nil {
			rows.Close()
			return 0, false, err
		}
		found = append(found, x)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, false, err
	}
	for _, x := range found {
		v, err := r.Ring.reseal(x.sealed, []byte(x.aad))
		if err != nil {
			return resealed, false, fmt.Errorf("row %s: %w", x.id, err)
		}
		// The swap matches only the value read: a change racing the re-seal wins.
		update, args := entsql.Dialect(dialect).Update(d.Table).Set(d.Column, v).
			Where(entsql.And(entsql.EQ(d.ID, x.id), entsql.EQ(d.Column, x.sealed))).Query()
		res, err := r.Store.Exec(ctx, update, args...)
		if err != nil {
			return resealed, false, err
		}
		if n, err := res.RowsAffected(); err != nil {
			return resealed, false, err
		} else if n == 1 {
			resealed++
		}
	}
	return resealed, len(found) == batch, nil
}

// currentPrefix is how every value sealed under the current key begins.
func (k *Keyring) currentPrefix() string { return "v2." + k.sealing.id + "." }
