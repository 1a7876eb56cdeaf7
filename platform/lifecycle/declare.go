package lifecycle

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	entgo "entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"

	entschema "github.com/authcore/authcore/ent/schema"
)

// Table is a kind's table, declared in the kind's own folder: the lifecycle owns it end
// to end. No ent client is generated for it — the lifecycle reads and writes it with
// ent's SQL builder, so nothing reaches a kind's rows around its caches, audit records
// and events — and the migration generator takes it from Tables (see kindschema).
type Table struct {
	// Name is the table's name: the kind's name in plural snake case (deploy_keys).
	Name string
	// Mixin is what every kind's table has; its IDPrefix begins the ids.
	Mixin entschema.KindMixin
	// Fields are the kind's own: strings, string lists, numbers, booleans and times,
	// required unless Optional, checked by their validators.
	Fields []entgo.Field
}

var (
	declaredMu sync.Mutex
	declared   = map[string]*Table{}
)

// Declare declares a kind's table, in a package variable of the kind's folder, so that
// the migration generator finds it in every binary that links the kind. A table is
// declared once: two kinds on one table would be two ideas of its rows.
func Declare(t Table) *Table {
	if t.Name == "" || t.Mixin.IDPrefix == "" || !strings.HasSuffix(t.Name, "s") {
		panic(fmt.Sprintf("lifecycle.Declare: a kind's table needs a plural name and an id prefix: %q, %q", t.Name, t.Mixin.IDPrefix))
	}
	declaredMu.Lock()
	defer declaredMu.Unlock()
	if _, dup := declared[t.Name]; dup {
		panic("lifecycle.Declare: table " + t.Name + " is declared twice")
	}
	p := &t
	declared[t.Name] = p
	return p
}

// Tables are the kinds' tables declared in this binary, by name.
func Tables() []*Table {
	declaredMu.Lock()
	defer declaredMu.Unlock()
	out := make([]*Table, 0, len(declared))
	for _, t := range declared {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b *Table) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Entity is the table's entity as ent names entities (deploy_keys: DeployKey), which
// names its indexes in the migrations.
func (t *Table) Entity() string {
	e := camel(strings.TrimSuffix(t.Name, "s"))
	return strings.ToUpper(e[:1]) + e[1:]
}

// Schema is the table as an ent schema: what the migration generator and the lifecycle's
// column list read.
func (t *Table) Schema() entgo.Interface { return kindSchema{t: t} }

type kindSchema struct {
	entgo.Schema
	t *Table
}

func (s kindSchema) Mixin() []entgo.Mixin  { return []entgo.Mixin{s.t.Mixin} }
func (s kindSchema) Fields() []entgo.Field { return s.t.Fields }
func (s kindSchema) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Annotation{Table: s.t.Name}}
}
