package database_test

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/fx"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/auditevent"
	"github.com/authcore/authcore/internal/testkit"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/health"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/logging"
	"github.com/authcore/authcore/platform/secret"
	"github.com/authcore/authcore/platform/tracing"
	"github.com/gofiber/fiber/v2"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// graph is the store with the probes and one route that reads it.
func graph(cfg config.Config, keys secret.MasterKeys, out logging.Output) fx.Option {
	return fx.Options(testkit.Core(cfg, keys, out), health.Module, httpserver.AsRoutes(storeRoutes))
}

func storeRoutes(client *ent.Client) []httpserver.Route {
	count := func(c *fiber.Ctx) error {
		n, err := client.AuditEvent.Query().Count(c.UserContext())
		if err != nil {
			return err
		}
		return c.JSON(fiber.Map{"events": n})
	}
	return []httpserver.Route{{Method: fiber.MethodGet, Path: "/test/store", Handlers: []fiber.Handler{count}}}
}

func TestMigrateIsIdempotent(t *testing.T) {
	testkit.ForEachStore(t, func(t *testing.T, st testkit.Store) {
		a := testkit.Start(t, st, graph)
		if err := database.Migrate(context.Background(), a.DB.Storage, a.DB.SQL, a.Logs2()); err != nil {
			t.Fatal(err)
		}
	})
}

func TestWithTxRollsBackOnError(t *testing.T) {
	testkit.ForEachStore(t, func(t *testing.T, st testkit.Store) {
		a := testkit.Start(t, st, graph)
		ctx := context.Background()
		project := "prj_" + t.Name()
		boom := errors.New("boom")
		err := database.WithTx(ctx, a.Ent, func(tx *ent.Tx) error {
			if _, err := tx.AuditEvent.Create().SetProjectID(project).SetAction("x").SetMetadata(map[string]any{}).Save(ctx); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("err = %v", err)
		}
		n, err := a.Ent.AuditEvent.Query().Where(auditevent.ProjectID(project)).Count(ctx)
		if err != nil || n != 0 {
			t.Fatalf("rows after rollback = %d, %v", n, err)
		}
		if err := database.WithTx(ctx, a.Ent, func(tx *ent.Tx) error {
			_, err := tx.AuditEvent.Create().SetProjectID(project).SetAction("x").SetMetadata(map[string]any{}).Save(ctx)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if n, _ := a.Ent.AuditEvent.Query().Where(auditevent.ProjectID(project)).Count(ctx); n != 1 {
			t.Fatalf("rows after commit = %d", n)
		}
	})
}

// A store that is down at start-up must not stop the process: /healthz answers, /readyz
// and store routes answer 503, and the process becomes ready by itself once the store
// answers. The "store" here is a port that refuses connections until a proxy to the real
// PostgreSQL starts listening on it.
func TestUnreachableStoreAtStartRecovers(t *testing.T) {
	admin := testkit.PostgresAdminURL()
	if admin == "" {
		t.Skip("needs PostgreSQL (" + testkit.EnvDatabaseURL + ")")
	}
	real := testkit.Stores(t)[1].URL(t)
	ru, _ := url.Parse(real)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().String()
	ln.Close() // closed: connections are refused until the proxy starts

	du := *ru
	du.Host = port
	a := testkit.StartURL(t, "postgres", du.String(), graph)

	a.Get("/healthz").Expect(t, 200, map[string]any{"status": "ok"})
	a.Get("/readyz").Expect(t, 503, map[string]any{"code": "unavailable"})
	// A route that needs the store answers 503 unavailable, not 500.
	a.Get("/test/store").Expect(t, 503, map[string]any{"code": "unavailable"})

	stop := proxy(t, port, ru.Host)
	defer stop()
	opened := time.Now()
	for a.Get("/readyz").Status != 200 {
		if time.Since(opened) > 5*time.Second {
			t.Fatalf("not ready 5 s after the store came back:\n%s", a.Logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("ready %v after the store came back", time.Since(opened).Round(time.Millisecond))
	a.Get("/test/store").Expect(t, 200, nil)
}

// proxy forwards TCP connections from listen to target until stopped.
func proxy(t *testing.T, listen, target string) func() {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, c, u)
			mu.Unlock()
			go func() { _, _ = io.Copy(u, c); u.Close() }()
			go func() { _, _ = io.Copy(c, u); c.Close() }()
		}
	}()
	return func() {
		ln.Close()
		wg.Wait()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	}
}

// The SQLite file and its -wal and -shm companions hold digests and sealed secrets: only
// their owner may read them, whatever the umask.
func TestSQLiteFilesAreOwnerOnly(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/authcore.db"
	a := testkit.StartURL(t, "sqlite", "sqlite:"+path, graph)
	a.Get("/test/store").Expect(t, 200, nil)
	for _, f := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if mode := fi.Mode().Perm(); mode != 0o600 {
			t.Errorf("%s has mode %o, want 600", filepath.Base(f), mode)
		}
	}
}

// startStore opens and migrates the store of cfg, logging to out, until the test ends.
func startStore(t *testing.T, cfg config.Config, out io.Writer) *database.DB {
	t.Helper()
	log, err := logging.New(cfg, logging.Output{Writer: out})
	if err != nil {
		t.Fatal(err)
	}
	db, err := database.Open(cfg, log, tracing.Off)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// A SQLite path is the file's, whatever characters it holds.
func TestSQLitePathIsTaken(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a#b?c%20d.db")
	startStore(t, testkit.Config("sqlite:"+path, dir), io.Discard)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries { // the file, its -wal and -shm, nothing beside
		if !strings.HasPrefix(e.Name(), filepath.Base(path)) {
			t.Fatalf("the store made %s beside %s", e.Name(), path)
		}
	}
}

// A relaxed AUTHCORE_SQLITE_SYNC is said at start; the durable default says nothing.
func TestRelaxedSyncIsWarnedAbout(t *testing.T) {
	for _, c := range []struct {
		setting string
		warned  bool
	}{{"", false}, {"full", false}, {"normal", true}, {"off", true}} {
		// A named subtest: "" would be #00, and a # in the file's URL cuts its path short.
		t.Run(cmp.Or(c.setting, "default"), func(t *testing.T) {
			dir := t.TempDir()
			cfg := testkit.Config("sqlite:"+filepath.Join(dir, "s.db"), dir)
			cfg.SQLiteSync = c.setting
			var out bytes.Buffer
			startStore(t, cfg, &out)
			if warned := strings.Contains(out.String(), "AUTHCORE_SQLITE_SYNC relaxes durability"); warned != c.warned {
				t.Fatalf("warned %v, want %v:\n%s", warned, c.warned, out.String())
			}
		})
	}
}
