// Package kindschema turns the credential kinds' declared tables (lifecycle.Declare) into
// ent's migration tables by ent's own code generator, so that the migration generator and
// the test holding the migrations to the schema see a kind's table exactly as ent would
// see an entity's. Apart from platform/lifecycle so that the binary does not link ent's
// code generator.
package kindschema

import (
	"fmt"

	"entgo.io/ent/dialect/sql/schema"
	"entgo.io/ent/entc/gen"
	"entgo.io/ent/entc/load"

	"github.com/authcore/authcore/platform/lifecycle"
)

// Tables are ent's migration tables of the declared kinds' tables.
func Tables(declared []*lifecycle.Table) ([]*schema.Table, error) {
	storage, err := gen.NewStorage("sql")
	if err != nil {
		return nil, err
	}
	var out []*schema.Table
	for _, t := range declared {
		b, err := load.MarshalSchema(t.Schema())
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.Name, err)
		}
		s, err := load.UnmarshalSchema(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.Name, err)
		}
		s.Name = t.Entity()
		g, err := gen.NewGraph(&gen.Config{Package: "github.com/authcore/authcore/ent", Storage: storage}, s)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.Name, err)
		}
		tables, err := g.Tables()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.Name, err)
		}
		out = append(out, tables...)
	}
	return out, nil
}
