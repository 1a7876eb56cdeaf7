package app_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"entgo.io/ent/dialect/sql/schema"

	"github.com/authcore/authcore/ent/migrate"
	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/platform/lifecycle"
	"github.com/authcore/authcore/platform/lifecycle/kindschema"
)

// The embedded migrations must build exactly the schema declared — ent's entities and
// the credential kinds' tables, each declared in its kind's folder: after applying them,
// nothing is left to change. This fails when someone changes either and forgets to
// generate a migration (see docs/extending.md). Here, where the composition root links
// every kind (and the tests the kind template).
func TestMigrationsMatchSchema(t *testing.T) {
	kinds, err := kindschema.Tables(lifecycle.Tables())
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, k := range kinds {
		names[k.Name] = true
	}
	if !names["agent_tokens"] || !names["badges"] || !names["deploy_keys"] {
		t.Fatalf("declared kinds' tables: %v", names)
	}
	tables := append(append([]*schema.Table{}, migrate.Tables...), kinds...)
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a := apptest.Start(t, st)
		d := dialect.SQLite
		if st.Name == "postgres" {
			d = dialect.Postgres
		}
		var plan bytes.Buffer
		drv := &schema.WriteDriver{Writer: &plan, Driver: entsql.OpenDB(d, a.DB.SQL)}
		if err := migrate.Create(context.Background(), migrate.NewSchema(drv), tables, schema.WithDropColumn(true), schema.WithDropIndex(true)); err != nil {
			t.Fatal(err)
		}
		var changes []string
		for _, l := range strings.Split(plan.String(), "\n") {
			l = strings.TrimSpace(l)
			if l == "" || l == "BEGIN;" || l == "COMMIT;" || strings.HasPrefix(l, "--") {
				continue
			}
			changes = append(changes, l)
		}
		if len(changes) > 0 {
			t.Fatalf("the migrations lag the schema; run platform/database/migrations/gen.go. Pending:\n%s", strings.Join(changes, "\n"))
		}
	})
}
