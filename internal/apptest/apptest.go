// Package apptest boots the whole authcore application — the composition root of
// cmd/authcore/app, every module and plugin — for integration tests, on the stores and
// with the HTTP helpers of internal/testkit, and adds what only the whole app can do (sign
// up, create projects). Test packages that use it call apptest.Main from TestMain.
package apptest

import (
	"sync"
	"testing"
	"time"

	"github.com/alexedwards/argon2id"
	"go.uber.org/fx"

	"github.com/authcore/authcore/cmd/authcore/app"
	"github.com/authcore/authcore/internal/testkit"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/invalidation"
	"github.com/authcore/authcore/platform/logging"
	"github.com/authcore/authcore/platform/product"
	"github.com/authcore/authcore/platform/secret"
)

// The store and HTTP vocabulary of testkit, under the names module tests use.
type (
	Store    = testkit.Store
	Option   = testkit.Option
	Req      = testkit.Req
	Response = testkit.Response
)

var (
	Main             = testkit.Main
	Stores           = testkit.Stores
	ForEachStore     = testkit.ForEachStore
	PostgresAdminURL = testkit.PostgresAdminURL
	WithConfig       = testkit.WithConfig
	WithFx           = testkit.WithFx
	Config           = testkit.Config
	UniqueEmail      = testkit.UniqueEmail
	TestMasterKey    = testkit.TestMasterKey
)

// EnvDatabaseURL names the PostgreSQL server tests may create databases on.
const EnvDatabaseURL = testkit.EnvDatabaseURL

// App is the whole application running for one test.
type App struct {
	*testkit.App
	bus *invalidation.PG

	servedOnce sync.Once
	served     *document
}

// CheapHashing swaps argon2id's OWASP cost for a tiny one. Every test app uses it: the
// algorithm and code path are the real ones, only the memory and time cost shrink, which
// keeps the race-detector run of hundreds of sign-ins fast. TestOWASPParams in the account
// module checks what production uses.
var CheapHashing = fx.Decorate(func(argon2id.Params) argon2id.Params {
	return argon2id.Params{Memory: 64, Iterations: 1, Parallelism: 1, SaltLength: 16, KeyLength: 32}
})

// Graph is the whole application, as cmd/authcore runs it, with cheap hashing.
func Graph(cfg config.Config, keys secret.MasterKeys, out logging.Output) fx.Option {
	return fx.Options(app.Options(cfg, keys, out), app.Workers(), CheapHashing)
}

// WithProducts runs the whole application with products instead of the binary's own:
// app.Products() plus a test-only one, or with one left out.
func WithProducts(products ...product.Plugin) Option {
	return testkit.WithGraph(func(cfg config.Config, keys secret.MasterKeys, out logging.Output) fx.Option {
		return fx.Options(app.With(cfg, keys, out, products...), app.Workers(), CheapHashing)
	})
}

// Start boots the application on store st and stops it when the test ends.
func Start(t testing.TB, st Store, opts ...Option) *App {
	t.Helper()
	return StartURL(t, st.Name, st.URL(t), opts...)
}

// StartURL boots the application on an explicit database URL. It returns once the app
// hears invalidations from other replicas (PostgreSQL's LISTEN is in place): a test that
// starts a second replica and revokes on the first must not race the listener.
func StartURL(t testing.TB, storeName, databaseURL string, opts ...Option) *App {
	t.Helper()
	a := StartUnready(t, storeName, databaseURL, opts...)
	select {
	case <-a.bus.Listening():
	case <-time.After(10 * time.Second):
		t.Fatal("the invalidation listener did not start within 10 s")
	}
	return a
}

// StartUnready boots the application without waiting for its store: for tests of a store
// that is down at start.
func StartUnready(t testing.TB, storeName, databaseURL string, opts ...Option) *App {
	t.Helper()
	var bus *invalidation.PG
	a := &App{App: testkit.StartURL(t, storeName, databaseURL, Graph, append(opts, testkit.WithFx(fx.Populate(&bus)))...), bus: bus}
	a.Check = a.conform
	return a
}

// BuildErr builds (without starting) the application with opts and returns the graph's error.
func BuildErr(t testing.TB, opts ...Option) error {
	t.Helper()
	return testkit.BuildErr(t, Graph, opts...)
}
