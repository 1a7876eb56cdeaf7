//go:build ignore

// Command gen writes a new versioned migration for each dialect: the difference between
// what the existing migration files build and what the ent schema and the credential
// kinds' declared tables (lifecycle.Declare) say. It replays the
// files on an empty development database (an in-memory SQLite, and a scratch database on
// the PostgreSQL server named by -pg, created and dropped here).
//
//	go run ./platform/database/migrations/gen.go -pg postgres://user:pass@127.0.0.1:5432/postgres NAME
//
// With -check it writes nothing and exits 1 when the schema and the files disagree.
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	atlasmigrate "ariga.io/atlas/sql/migrate"
	"ariga.io/atlas/sql/sqltool"
	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"entgo.io/ent/dialect/sql/schema"
	_ "github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"

	"github.com/authcore/authcore/ent/migrate"
	"github.com/authcore/authcore/platform/lifecycle"
	"github.com/authcore/authcore/platform/lifecycle/kindschema"

	// The kinds declare their tables where they live: everything the binary links, and
	// the kind template, which tests mount.
	_ "github.com/authcore/authcore/cmd/authcore/app"
	_ "github.com/authcore/authcore/internal/template/deploykey"
)

func main() {
	pg := flag.String("pg", os.Getenv("AUTHCORE_TEST_DATABASE_URL"), "PostgreSQL server to make a scratch development database on")
	check := flag.Bool("check", false, "write nothing; exit 1 when a migration would be generated")
	flag.Parse()
	name := flag.Arg(0)
	if name == "" && !*check {
		fmt.Fprintln(os.Stderr, "usage: gen.go [-pg URL] [-check] NAME")
		os.Exit(2)
	}
	if name == "" {
		name = "check"
	}
	ctx := context.Background()
	kinds, err := kindschema.Tables(lifecycle.Tables())
	must(err)
	tables := append(migrate.Tables, kinds...)
	here := filepath.Join("platform", "database", "migrations")
	var pending []string
	for _, d := range []string{"sqlite", "postgres"} {
		target := filepath.Join(here, d)
		if *check {
			tmp, err := os.MkdirTemp("", "authcore-migrations-*")
			must(err)
			defer os.RemoveAll(tmp)
			must(os.CopyFS(tmp, os.DirFS(target)))
			target = tmp
		}
		before, err := os.ReadDir(target)
		must(err)
		drv, done := devDriver(ctx, d, *pg)
		dir, err := sqltool.NewGooseDir(target)
		must(err)
		m, err := schema.NewMigrate(drv,
			schema.WithDir(dir),
			schema.WithMigrationMode(schema.ModeReplay),
			schema.WithFormatter(sqltool.GooseFormatter),
			schema.WithDropColumn(true),
			schema.WithDropIndex(true),
		)
		must(err)
		must(m.NamedDiff(ctx, name, tables...))
		done()
		after, err := os.ReadDir(target)
		must(err)
		if len(after) != len(before) {
			pending = append(pending, d)
		}
	}
	if *check && len(pending) > 0 {
		fmt.Fprintf(os.Stderr, "the schema and the migrations disagree for %v: run gen.go NAME and commit the result\n", pending)
		os.Exit(1)
	}
	if *check {
		fmt.Println("migrations match the schema")
	}
}

func devDriver(ctx context.Context, d, pg string) (dialect.Driver, func()) {
	if d == "sqlite" {
		db, err := sql.Open("sqlite", "file:dev?mode=memory&_pragma=foreign_keys(1)")
		must(err)
		db.SetMaxOpenConns(1)
		return entsql.OpenDB(dialect.SQLite, db), func() { db.Close() }
	}
	if pg == "" {
		fmt.Fprintln(os.Stderr, "-pg (or AUTHCORE_TEST_DATABASE_URL) is required to diff the PostgreSQL migrations")
		os.Exit(2)
	}
	admin, err := sql.Open("pgx", pg)
	must(err)
	scratch := fmt.Sprintf("authcore_dev_%d", time.Now().UnixNano())
	_, err = admin.ExecContext(ctx, "CREATE DATABASE "+scratch)
	must(err)
	u, err := url.Parse(pg)
	must(err)
	u.Path = "/" + scratch
	db, err := sql.Open("pgx", u.String())
	must(err)
	return entsql.OpenDB(dialect.Postgres, db), func() {
		db.Close()
		_, _ = admin.ExecContext(ctx, "DROP DATABASE "+scratch+" WITH (FORCE)")
		admin.Close()
	}
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

var _ atlasmigrate.Dir = (*sqltool.GooseDir)(nil)
