package lifecycle

import (
	"context"
	stdsql "database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	entgo "entgo.io/ent"
	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql"
	"entgo.io/ent/schema/field"

	"github.com/authcore/authcore/ent/schema"
	"github.com/authcore/authcore/platform/config"
)

// A kind's table is read and written here through ent's SQL builder, not through the
// entity's generated client: the lifecycle is written once for every kind, and Go cannot
// name "the client of whatever entity this kind declared". The columns are the ones
// schema.KindMixin declares, and the kind's own fields as its ent schema declares them.

// column is one of the table's columns as the lifecycle reads and writes it.
type column struct {
	name     string
	typ      field.Type
	nullable bool
	// strings: a JSON column holding []string (the other JSON shapes are kept raw).
	strings bool
	// desc is an own field's declaration (validators, size, default), nil for the mixin's.
	desc *field.Descriptor
}

// table is a kind's table.
type table struct {
	name    string
	dialect string
	mixin   schema.KindMixin
	// own are the kind's own fields, in its schema's order; all is every column read.
	own []column
	all []string
	// lookup is the verification query by digest, as text for pgx (PostgreSQL only).
	lookup string
}

// Fixed positions of the mixin's columns in all and in a scanned row.
const (
	colID = iota
	colProject
	colCreatedBy
	colCreatedAt
	colExpires
	colLastUsed
	colHint
	colDigest
	colPrevious
	colPreviousExpires
	colRevoked
	nCommon
)

func newTable(name string, storage config.Storage, m schema.KindMixin, s entgo.Interface) (*table, error) {
	t := &table{name: name, dialect: dialect.SQLite, mixin: m}
	if storage == config.Postgres {
		t.dialect = dialect.Postgres
	}
	t.all = []string{schema.FieldID, schema.FieldProjectID, schema.FieldCreatedBy, schema.FieldCreatedAt, schema.FieldExpiresAt,
		schema.FieldLastUsedAt, m.HintColumn(), "digest", "previous_digest", "previous_expires_at", "revoked_at"}
	for _, f := range s.Fields() {
		d := f.Descriptor()
		if d.Err != nil {
			return nil, fmt.Errorf("%s: field %s: %w", name, d.Name, d.Err)
		}
		c := column{name: d.Name, typ: d.Info.Type, nullable: d.Optional, desc: d}
		switch c.typ {
		case field.TypeString, field.TypeEnum, field.TypeTime, field.TypeBool, field.TypeFloat64,
			field.TypeInt, field.TypeInt64, field.TypeInt32, field.TypeInt16, field.TypeInt8,
			field.TypeUint, field.TypeUint64, field.TypeUint32, field.TypeUint16, field.TypeUint8:
		case field.TypeJSON:
			c.strings = d.Info.Ident == "[]string"
		default:
			return nil, fmt.Errorf("%s: field %s: type %s is not one a credential kind's field may have", name, d.Name, c.typ)
		}
		t.own = append(t.own, c)
		t.all = append(t.all, c.name)
	}
	if t.dialect == dialect.Postgres {
		t.lookup, _ = sql.Dialect(dialect.Postgres).Select(t.all...).From(sql.Table(name)).
			Where(sql.Or(sql.EQ("digest", sql.Raw("$1")), sql.EQ("previous_digest", sql.Raw("$1")))).Query()
	}
	return t, nil
}

// Row is one credential: what every kind has, and its own fields.
type Row struct {
	ID         string
	ProjectID  string
	CreatedBy  *string
	CreatedAt  time.Time
	ExpiresAt  *time.Time // nil: never
	LastUsedAt *time.Time
	Hint       string
	// own are the kind's own fields' values, in its schema's order; Get reads one.
	own []any
	t   *table

	digest, previous         []byte
	previousExpires, revoked *time.Time
}

// Get is the value of the kind's own field named name (by its column): a string, a
// *string when optional, []string for a JSON []string, json.RawMessage for other JSON,
// time.Time, int64, float64 or bool. nil when the kind has no such field.
func (r *Row) Get(name string) any {
	for i, c := range r.t.own {
		if c.name == name {
			return r.own[i]
		}
	}
	return nil
}

// String is an own string field's value ("" when null or absent).
func (r *Row) String(name string) string {
	switch v := r.Get(name).(type) {
	case string:
		return v
	case *string:
		if v != nil {
			return *v
		}
	}
	return ""
}

// Strings is an own []string field's value, never nil.
func (r *Row) Strings(name string) []string {
	if v, ok := r.Get(name).([]string); ok && v != nil {
		return v
	}
	return []string{}
}

// Revoked reports whether the credential was revoked.
func (r *Row) Revoked() bool { return r.revoked != nil }

// scanner reads a row's columns into typed destinations that both database/sql and pgx
// fill (a pointer to a pointer for NULL).
type scanner struct {
	id, project, hint                 string
	createdBy                         *string
	createdAt                         time.Time
	expires, lastUsed, prevExp, revok *time.Time
	digest, previous                  []byte
	own                               []any
}

func (t *table) dests() (*scanner, []any) {
	s := &scanner{own: make([]any, len(t.own))}
	d := []any{&s.id, &s.project, &s.createdBy, &s.createdAt, &s.expires, &s.lastUsed, &s.hint, &s.digest, &s.previous, &s.prevExp, &s.revok}
	for i, c := range t.own {
		switch c.typ {
		case field.TypeString, field.TypeEnum:
			s.own[i] = new(*string)
		case field.TypeTime:
			s.own[i] = new(*time.Time)
		case field.TypeBool:
			s.own[i] = new(*bool)
		case field.TypeFloat64:
			s.own[i] = new(*float64)
		case field.TypeJSON:
			s.own[i] = new([]byte)
		default: // the integers
			s.own[i] = new(*int64)
		}
		d = append(d, s.own[i])
	}
	return s, d
}

func (t *table) row(s *scanner) (*Row, error) {
	r := &Row{ID: s.id, ProjectID: s.project, CreatedBy: s.createdBy, CreatedAt: s.createdAt.UTC(), ExpiresAt: utc(s.expires),
		LastUsedAt: utc(s.lastUsed), Hint: s.hint, t: t, digest: s.digest, previous: s.previous, previousExpires: utc(s.prevExp),
		revoked: s.revok, own: make([]any, len(t.own))}
	for i, c := range t.own {
		v, err := c.value(s.own[i])
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %w", t.name, c.name, err)
		}
		r.own[i] = v
	}
	return r, nil
}

// value is what Row.Get answers for a scanned destination.
func (c column) value(dest any) (any, error) {
	switch d := dest.(type) {
	case **string:
		if c.nullable {
			return *d, nil
		}
		return deref(*d), nil
	case **time.Time:
		if c.nullable {
			return utc(*d), nil
		}
		return deref(utc(*d)), nil
	case **bool:
		return orNull(c, *d), nil
	case **float64:
		return orNull(c, *d), nil
	case **int64:
		return orNull(c, *d), nil
	case *[]byte:
		switch {
		case *d == nil:
			return nil, nil
		case c.strings:
			var ss []string
			return ss, json.Unmarshal(*d, &ss)
		default:
			return json.RawMessage(*d), nil
		}
	}
	return nil, fmt.Errorf("unexpected destination %T", dest)
}

// orNull is an optional field's NULL as nil, any other value as itself.
func orNull[T any](c column, p *T) any {
	if p == nil && c.nullable {
		return nil
	}
	return deref(p)
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// querier is what runs a query: the client, a transaction, or a read replica's client.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*stdsql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (stdsql.Result, error)
}

// errNoRow is a query that matched nothing.
var errNoRow = stdsql.ErrNoRows

// one reads the one row matching where; errNoRow when none does.
func (t *table) one(ctx context.Context, q querier, where ...func(*sql.Selector)) (*Row, error) {
	rows, err := t.query(ctx, q, 2, nil, where...)
	if err != nil {
		return nil, err
	}
	switch len(rows) {
	case 0:
		return nil, errNoRow
	case 1:
		return rows[0], nil
	}
	return nil, fmt.Errorf("%s: more than one row matched", t.name)
}

// query reads the rows matching where, newest first, at most limit (0: all).
func (t *table) query(ctx context.Context, q querier, limit int, order func(*sql.Selector), where ...func(*sql.Selector)) ([]*Row, error) {
	sel := sql.Dialect(t.dialect).Select().From(sql.Table(t.name))
	cols := make([]string, len(t.all))
	for i, c := range t.all {
		cols[i] = sel.C(c)
	}
	sel.Select(cols...)
	for _, w := range where {
		w(sel)
	}
	if order != nil {
		order(sel)
	}
	if limit > 0 {
		sel.Limit(limit)
	}
	text, args := sel.Query()
	rs, err := q.QueryContext(ctx, text, args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var out []*Row
	for rs.Next() {
		s, dest := t.dests()
		if err := rs.Scan(dest...); err != nil {
			return nil, err
		}
		r, err := t.row(s)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rs.Err()
}

// insert writes a new row.
func (t *table) insert(ctx context.Context, q querier, r *Row) error {
	cols := []string{schema.FieldID, schema.FieldProjectID, schema.FieldCreatedBy, schema.FieldCreatedAt, schema.FieldExpiresAt,
		t.mixin.HintColumn(), "digest"}
	vals := []any{r.ID, r.ProjectID, r.CreatedBy, r.CreatedAt, r.ExpiresAt, r.Hint, r.digest}
	for i, c := range t.own {
		v, err := c.stored(r.own[i])
		if err != nil {
			return fmt.Errorf("%s.%s: %w", t.name, c.name, err)
		}
		cols, vals = append(cols, c.name), append(vals, v)
	}
	text, args := sql.Dialect(t.dialect).Insert(t.name).Columns(cols...).Values(vals...).Query()
	_, err := q.ExecContext(ctx, text, args...)
	return err
}

// stored is v as the column stores it: JSON encoded for a JSON column, as is otherwise.
func (c column) stored(v any) (any, error) {
	if c.typ != field.TypeJSON || v == nil {
		return v, nil
	}
	if raw, ok := v.(json.RawMessage); ok {
		return []byte(raw), nil
	}
	return json.Marshal(v)
}

// update sets columns of the row with id (nil values: NULL) where it is not revoked, and
// says how many rows changed.
func (t *table) update(ctx context.Context, q querier, id string, set map[string]any) (int64, error) {
	return t.updateWhere(ctx, q, sql.And(sql.EQ(schema.FieldID, id), sql.IsNull("revoked_at")), set)
}

func (t *table) updateWhere(ctx context.Context, q querier, where *sql.Predicate, set map[string]any) (int64, error) {
	u := sql.Dialect(t.dialect).Update(t.name)
	for _, c := range slices.Sorted(maps.Keys(set)) { // sorted: a statement's text stays the same
		if v := set[c]; isNil(v) {
			u.SetNull(c)
		} else {
			u.Set(c, v)
		}
	}
	text, args := u.Where(where).Query()
	res, err := q.ExecContext(ctx, text, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func isNil(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case []byte:
		return v == nil
	case *time.Time:
		return v == nil
	}
	return false
}
