// Command authcore runs the authcore service and its operator commands. Settings come from
// AUTHCORE_* environment variables, overridden by flags of the same name (SPEC §8).
package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/alecthomas/kong"
	"go.uber.org/dig"
	"go.uber.org/fx"
	"golang.org/x/term"

	"github.com/authcore/authcore/cmd/authcore/app"
	"github.com/authcore/authcore/modules/account"
	"github.com/authcore/authcore/modules/project"
	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/credential"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/logging"
	"github.com/authcore/authcore/platform/secret"
	"github.com/authcore/authcore/platform/tracing"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = ""

type cli struct {
	config.Config `embed:""`

	Serve       serveCmd       `cmd:"" default:"withargs" help:"Run the server, migrating the store first (the default)."`
	Migrate     migrateCmd     `cmd:"" help:"Apply pending schema migrations and exit."`
	Version     versionCmd     `cmd:"" help:"Print the version and exit."`
	Users       usersCmd       `cmd:"" help:"Manage users without HTTP."`
	Projects    projectsCmd    `cmd:"" help:"Manage projects without HTTP."`
	Providers   providersCmd   `cmd:"" help:"Manage the dashboard tenant's sign-in providers and methods (SPEC §20)."`
	Keys        keysCmd        `cmd:"" help:"Manage the master keys."`
	Scanning    scanningCmd    `cmd:"" name:"secret-scanning" help:"Secret-scanning partner settings."`
	Bench       benchCmd       `cmd:"" help:"Load-test the service in-process on loopback and print requests/s, p50, p99 and ratios to /healthz."`
	Healthcheck healthcheckCmd `cmd:"" help:"Exit 0 when the server on AUTHCORE_ADDR answers /healthz (for container health checks)."`
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// exit is how kong's --help asks to stop; run turns it back into a return code.
type exit int

func run(args []string, stdout, stderr io.Writer) (code int) {
	defer func() {
		if v := recover(); v != nil {
			e, ok := v.(exit)
			if !ok {
				panic(v)
			}
			code = int(e)
		}
	}()
	var c cli
	// Each product's own settings are parsed here with the service's: one --help, one
	// set of environment variables and flags, checked before anything starts.
	opts := []kong.Option{}
	for _, p := range app.Products() {
		if p.Settings != nil {
			s := p.Settings()
			opts = append(opts, kong.Embed(s))
			c.Config.Plugins = append(c.Config.Plugins, s)
		}
	}
	parser, err := kong.New(&c, append(opts,
		kong.Name("authcore"),
		kong.Description("authcore: AI agent tokens, sessions and service badges. Every setting is an AUTHCORE_* environment variable; a flag of the same name overrides it."),
		kong.Writers(stdout, stderr),
		kong.Exit(func(code int) { panic(exit(code)) }),
	)...)
	if err != nil {
		fmt.Fprintln(stderr, "authcore:", err)
		return 2
	}
	kctx, err := parser.Parse(args)
	if err != nil {
		fmt.Fprintln(stderr, "authcore:", oneLine(err))
		return 2
	}
	if kctx.Command() == "version" {
		fmt.Fprintln(stdout, "authcore", versionString())
		return 0
	}
	if err := c.Config.Validate(); err != nil {
		fmt.Fprintln(stderr, "authcore:", oneLine(err))
		return 2
	}
	kctx.BindTo(stdout, (*io.Writer)(nil))
	if err := kctx.Run(&c.Config); err != nil {
		fmt.Fprintln(stderr, "authcore:", oneLine(err))
		return 1
	}
	return 0
}

type serveCmd struct{}

func (serveCmd) Run(cfg *config.Config) error {
	key, err := resolveKey(cfg)
	if err != nil {
		return err
	}
	a := fx.New(app.Options(*cfg, key, logging.Output{Writer: os.Stderr}), app.Listeners())
	if err := a.Err(); err != nil {
		// A setting only the graph can check (AUTHCORE_MODULES names a module) fails
		// inside a constructor: its own error is the one line to show, not fx's chain.
		return dig.RootCause(err)
	}
	startCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := a.Start(startCtx); err != nil {
		return err
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
	// In-flight requests get up to 10 s (httpserver.ShutdownTimeout); the rest of the
	// budget is for flushing batched writes and closing the store.
	stopCtx, cancelStop := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancelStop()
	return a.Stop(stopCtx)
}

type migrateCmd struct{}

func (migrateCmd) Run(cfg *config.Config, stdout io.Writer) error {
	log, err := logging.New(*cfg, logging.Output{Writer: os.Stderr})
	if err != nil {
		return err
	}
	db, err := database.Open(*cfg, log, tracing.Off)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := db.PrepareDir(); err != nil {
		return err
	}
	if err := database.Migrate(ctx, db.Storage, db.SQL, log); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "authcore: store migrated")
	return db.Close()
}

type versionCmd struct{}

func (versionCmd) Run() error { return nil }

// resolveKey loads AUTHCORE_MASTER_KEY, or a development key kept in the data directory.
func resolveKey(cfg *config.Config) (secret.MasterKeys, error) {
	raw, dev, err := cfg.ResolveMasterKey(secret.NewMasterKey)
	if err != nil {
		return nil, err
	}
	keys := make(secret.MasterKeys, len(raw))
	for i, k := range raw {
		keys[i] = k
	}
	if dev {
		fmt.Fprintf(os.Stderr, "authcore: WARNING: AUTHCORE_MASTER_KEY is not set; using the development key in %s. Set it in production: losing that file makes sealed secrets unreadable.\n", cfg.MasterKeyFile())
	}
	return keys, nil
}

func versionString() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "dev"
}

func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

type healthcheckCmd struct{}

// Run probes the local server; distroless images have no curl to do it.
func (healthcheckCmd) Run(cfg *config.Config) error {
	_, port, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return err
	}
	c := &http.Client{Timeout: 2 * time.Second}
	res, err := c.Get("http://127.0.0.1:" + port + "/healthz")
	if err != nil {
		return err
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("/healthz answered %d", res.StatusCode)
	}
	return nil
}

type usersCmd struct {
	Create usersCreateCmd `cmd:"" help:"Create a dashboard user (tenant public)."`
}

type usersCreateCmd struct {
	Email    string  `required:"" help:"Email address."`
	Password *string `help:"Password, 8 to 256 characters. When absent it is read from standard input (prompted without echo on a terminal), so it need not appear in argv or shell history."`
	Name     *string `help:"Display name."`
}

// stdin is where users create reads a password given on no flag; tests replace it.
var stdin io.Reader = os.Stdin

func (u usersCreateCmd) Run(cfg *config.Config, stdout io.Writer) error {
	password := ""
	if u.Password != nil {
		password = *u.Password
	} else {
		p, err := readPassword(stdin)
		if err != nil {
			return fmt.Errorf("reading the password from standard input: %w", err)
		}
		password = p
	}
	in, err := account.NewSignUp(u.Email, password, u.Name)
	if err != nil {
		return describe(err)
	}
	return withApp(cfg, func(ctx context.Context, accounts account.Accounts) error {
		created, err := accounts.Create(ctx, in)
		if err != nil {
			return describe(err)
		}
		fmt.Fprintf(stdout, "created user %s (%s)\n", created.ID, created.Email)
		return nil
	})
}

// withApp starts the application graph without a listener, hands fn what it asks for,
// and stops it again: operator commands share every rule with the HTTP routes.
func withApp[T any](cfg *config.Config, fn func(context.Context, T) error) error {
	key, err := resolveKey(cfg)
	if err != nil {
		return err
	}
	var dep T
	a := fx.New(app.Options(*cfg, key, logging.Output{Writer: os.Stderr}), fx.Populate(&dep), fx.NopLogger)
	if err := a.Err(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := a.Start(ctx); err != nil {
		return err
	}
	runErr := fn(ctx, dep)
	if err := a.Stop(ctx); err != nil && runErr == nil {
		runErr = err
	}
	return runErr
}

// describe turns a client-facing error into a line for the terminal.
func describe(err error) error {
	e, ok := apperr.As(err)
	if !ok {
		return err
	}
	msg := e.Code + ": " + e.Message
	if issues, ok := e.Fields["issues"]; ok {
		msg += fmt.Sprintf(" %v", issues)
	}
	return errors.New(msg)
}

type projectsCmd struct {
	Create projectsCreateCmd `cmd:"" help:"Create a project owned (as admin) by an existing dashboard user."`
}

type projectsCreateCmd struct {
	Name  string `required:"" help:"Project name, 1 to 80 characters."`
	Owner string `required:"" help:"Email of the dashboard user who becomes its admin."`
}

type projectDeps struct {
	fx.In
	Projects  *project.Service
	Directory identity.Directory
}

func (p projectsCreateCmd) Run(cfg *config.Config, stdout io.Writer) error {
	if reason := project.ValidName(p.Name); reason != "" {
		return fmt.Errorf("--name: %s", reason)
	}
	return withApp(cfg, func(ctx context.Context, d projectDeps) error {
		owner, ok, err := d.Directory.FindDashboardUser(ctx, "", p.Owner)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("--owner: no dashboard user with email %q", p.Owner)
		}
		created, err := d.Projects.Create(ctx, p.Name, owner.ID)
		if err != nil {
			return describe(err)
		}
		fmt.Fprintf(stdout, "created project %s (%s), admin %s\n", created.ID, created.Name, owner.Email)
		return nil
	})
}

// readPassword reads one line from r: without echo after a prompt when r is a terminal,
// else as it comes (a pipe, a file, a secret store's output).
func readPassword(r io.Reader) (string, error) {
	if f, ok := r.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprint(os.Stderr, "Password: ")
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(os.Stderr)
		return string(b), err
	}
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil && !(errors.Is(err, io.EOF) && line != "") {
		return "", err
	}
	return strings.TrimRight(line, "\r\n"), nil
}

type scanningCmd struct {
	Pattern scanningPatternCmd `cmd:"" help:"Print the regular expression that matches every kind of authcore secret, to register with a secret scanner."`
}

type scanningPatternCmd struct{}

// Run prints the pattern the registry builds from every contributed kind, so a product
// or kind added as a plugin is in it with nothing else to change.
func (scanningPatternCmd) Run(cfg *config.Config, stdout io.Writer) error {
	return withApp(cfg, func(_ context.Context, kinds *credential.Registry) error {
		_, err := fmt.Fprintln(stdout, kinds.ScanPattern())
		return err
	})
}

type keysCmd struct {
	Reseal keysResealCmd `cmd:"" help:"Re-seal every sealed value (signing keys, s3 secret keys, …) under the first AUTHCORE_MASTER_KEY, in batches; idempotent and safe while servers run. Afterwards the older keys can be removed."`
}

type keysResealCmd struct {
	Batch int `default:"500" help:"Values re-sealed per query (default ${default})."`
}

func (k keysResealCmd) Run(cfg *config.Config, stdout io.Writer) error {
	if k.Batch < 1 {
		return errors.New("--batch: must be at least 1")
	}
	return withApp(cfg, func(ctx context.Context, r secret.Resealer) error {
		return r.ResealAll(ctx, k.Batch, func(name string, n int) {
			fmt.Fprintf(stdout, "re-sealed %d %s\n", n, name)
		})
	})
}
