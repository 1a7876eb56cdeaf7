// Package testkit boots an fx graph of authcore in-process for tests: a real listener on a
// random loopback port and a real store — a fresh SQLite file per app, and, when
// AUTHCORE_TEST_DATABASE_URL is set, a PostgreSQL database made for the test binary and
// dropped after it. Every store test runs on both through ForEachStore. Test packages that
// use it call testkit.Main from TestMain. It imports only platform packages, so platform
// tests build small graphs of their own with it; internal/apptest boots the whole app.
package testkit

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the admin connection that creates test databases

	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/database"
)

// EnvDatabaseURL names the PostgreSQL server tests may create databases on.
const EnvDatabaseURL = "AUTHCORE_TEST_DATABASE_URL"

// Store is one store to run a test against.
type Store struct {
	Name string // "sqlite" or "postgres"
	// url returns the database URL for one app; SQLite makes a new file per app.
	url func(t testing.TB) string
}

// URL returns a database URL for a new app of this store.
func (s Store) URL(t testing.TB) string { return s.url(t) }

var (
	mainCalled bool
	pgOnce     sync.Once
	pgURL      string
	pgErr      error
	pgAdmin    string
	pgName     string
)

// Main runs the package's tests, then the package's own after funcs (a shared browser to
// stop), then drops the PostgreSQL database they used.
func Main(m *testing.M, after ...func()) {
	mainCalled = true
	code := m.Run()
	for _, f := range after {
		f()
	}
	if sqliteTemplateDir != "" {
		_ = os.RemoveAll(sqliteTemplateDir)
	}
	if pgName != "" {
		if err := dropDatabase(pgAdmin, pgName); err != nil {
			fmt.Fprintln(os.Stderr, "testkit: dropping", pgName+":", err)
		}
	}
	os.Exit(code)
}

// Stores lists the stores this run tests against: SQLite always, PostgreSQL when
// AUTHCORE_TEST_DATABASE_URL is set. In CI (CI=true) a missing PostgreSQL is an error, so
// its half never silently skips.
func Stores(t testing.TB) []Store {
	stores := []Store{{Name: "sqlite", url: func(t testing.TB) string { return "sqlite:" + sqliteFile(t) }}}
	admin := os.Getenv(EnvDatabaseURL)
	if admin == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set in CI: the PostgreSQL half of the tests would not run", EnvDatabaseURL)
		}
		return stores
	}
	if !mainCalled {
		t.Fatalf("testkit: call Main(m) from TestMain so the PostgreSQL test database is dropped")
	}
	pgOnce.Do(func() { pgURL, pgErr = createDatabase(admin) })
	if pgErr != nil {
		t.Fatalf("testkit: PostgreSQL at %s: %v", EnvDatabaseURL, pgErr)
	}
	return append(stores, Store{Name: "postgres", url: func(testing.TB) string { return pgURL }})
}

// ForEachStore runs fn as a subtest on each store.
func ForEachStore(t *testing.T, fn func(t *testing.T, st Store)) {
	t.Helper()
	for _, st := range Stores(t) {
		t.Run(st.Name, func(t *testing.T) { fn(t, st) })
	}
}

// PostgresAdminURL is AUTHCORE_TEST_DATABASE_URL, or "" when PostgreSQL tests are off.
func PostgresAdminURL() string { return os.Getenv(EnvDatabaseURL) }

func createDatabase(admin string) (string, error) {
	u, name, err := newDatabase(admin)
	if err != nil {
		return "", err
	}
	pgAdmin, pgName = admin, name
	return u, nil
}

// newDatabase creates an empty database and returns its URL and name.
func newDatabase(admin string) (string, string, error) {
	db, err := sql.Open("pgx", admin)
	if err != nil {
		return "", "", err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	name := fmt.Sprintf("authcore_test_%d_%d", time.Now().UnixNano(), os.Getpid())
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		return "", "", err
	}
	u, err := url.Parse(admin)
	if err != nil {
		return "", "", err
	}
	u.Path = "/" + name
	return u.String(), name, nil
}

// FreshURL returns the URL of a store no other test uses: a new SQLite file, or a new
// PostgreSQL database dropped when the test ends. For tests that change what every other
// test relies on (the master key the sealed values open with).
func (s Store) FreshURL(t testing.TB) string {
	if s.Name != "postgres" {
		return s.URL(t)
	}
	u, name, err := newDatabase(PostgresAdminURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := dropDatabase(PostgresAdminURL(), name); err != nil {
			t.Error(err)
		}
	})
	return u
}

func dropDatabase(admin, name string) error {
	db, err := sql.Open("pgx", admin)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// FORCE ends the backends still on it; one it may not end (a role without
	// pg_signal_backend meeting an autovacuum worker) is gone a moment later, so try again.
	for attempt := 0; ; attempt++ {
		_, err = db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		if err == nil || attempt == 4 || ctx.Err() != nil {
			return err
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// TestMasterKey is the fixed master key of test apps.
var TestMasterKey = bytes.Repeat([]byte{7}, 32)

// Config returns the settings of a test app on databaseURL.
func Config(databaseURL string, dataDir string) config.Config {
	return config.Config{
		Addr:            "127.0.0.1:0",
		DatabaseURL:     databaseURL,
		DataDir:         dataDir,
		MasterKey:       base64.StdEncoding.EncodeToString(TestMasterKey),
		Signup:          "open",
		RateLimit:       0,
		InsecureCookies: true,
		AccessTTL:       15 * time.Minute,
		RefreshTTL:      720 * time.Hour,
		ReadMaxLag:      time.Second,
		LogLevel:        "debug",
		AllowedOrigins:  []string{"https://dashboard.example.com"},
		// Tests start many apps in one process and several test binaries at once: a fixed
		// metrics port (the default 127.0.0.1:9090) would clash. They read /metrics on the
		// app's own port; a test of the separate listener sets an address with port 0 and
		// reads App.MetricsBase.
		MetricsAddr: config.MetricsPublic,
	}
}

// LogBuffer collects an app's log lines; safe for the server's goroutines.
type LogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything logged so far.
func (b *LogBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Contains reports whether any log line holds s.
func (b *LogBuffer) Contains(s string) bool { return strings.Contains(b.String(), s) }

var seq atomic.Int64

// UniqueEmail returns an address no other test in this binary uses.
func UniqueEmail(t testing.TB) string {
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, strings.ToLower(t.Name()))
	if len(name) > 40 {
		name = name[:40]
	}
	return fmt.Sprintf("u%d-%s@example.com", seq.Add(1), name)
}

var (
	sqliteTemplate    = sync.OnceValues(migratedSQLite)
	sqliteTemplateDir string // removed by Main
)

// sqliteFile is a new SQLite file for one app: a copy of a file this process migrated once.
// Migrating a fresh file per app (goose parsing every migration, SQLite parsing every
// statement, under the race detector) was a tenth of the CPU of a store-heavy test package;
// the app still runs its migrations on the copy, and finds none pending.
func sqliteFile(t testing.TB) string {
	t.Helper()
	tmpl, err := sqliteTemplate()
	if err != nil {
		t.Fatalf("testkit: migrating the SQLite template: %v", err)
	}
	b, err := os.ReadFile(tmpl)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "authcore.db")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// migratedSQLite migrates a new SQLite file and closes it, its WAL folded into the file, so
// the one file is the whole database.
func migratedSQLite() (string, error) {
	dir, err := os.MkdirTemp("", "authcore-sqlite-template-")
	if err != nil {
		return "", err
	}
	sqliteTemplateDir = dir
	path := filepath.Join(dir, "authcore.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=foreign_keys(1)")
	if err != nil {
		return "", err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := database.Migrate(ctx, config.SQLite, db, slog.New(slog.DiscardHandler)); err != nil {
		return "", err
	}
	return path, db.Close()
}
