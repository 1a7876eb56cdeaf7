package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"go.uber.org/fx"

	"github.com/authcore/authcore/cmd/authcore/app"
	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/platform/bearer"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/logging"
	"github.com/authcore/authcore/platform/secret"
)

// benchCmd is the load command: it starts the real service in-process on a loopback port,
// seeds what each scenario needs through the API, and drives every scenario with the same
// closed-loop generator, reporting each as a ratio to /healthz measured in the same run.
type benchCmd struct {
	Duration       time.Duration `default:"5s" help:"How long each scenario runs."`
	Warmup         time.Duration `default:"1s" help:"Unmeasured run before each scenario."`
	Connections    int           `default:"64" help:"Concurrent keep-alive connections."`
	Only           string        `help:"Run only scenarios whose name contains this."`
	Store          string        `name:"bench-database-url" help:"Store for the benchmarked service (default: a fresh SQLite file in a temp dir)."`
	ReadStore      string        `name:"bench-database-read-url" help:"A streaming replica of --bench-database-url: adds a cold instance whose cache misses read it (SPEC §18)."`
	CPUProfile     string        `name:"cpuprofile" help:"Write a CPU profile of the measured runs to this file."`
	Tokens         int           `name:"tokens" default:"1000000" help:"How many agent tokens the large-store scenario seeds."`
	Wrk            bool          `name:"wrk" help:"Drive the scenarios with wrk (on PATH) instead of the in-process generator; scenarios whose requests change per call are skipped."`
	Pgbench        bool          `name:"pgbench" help:"With a PostgreSQL store: after each durable-write scenario, run pgbench (on PATH or under /usr/lib/postgresql) with the same statements at the same concurrency for as long, and print the ratio."`
	PgbenchClients int           `name:"pgbench-clients" help:"pgbench's clients (default: the service's pool size, pool_max_conns in the URL, 16 without it: the concurrency the store sees from the service)."`
	Populations    []int         `name:"populations" help:"Instead of the scenarios, measure ai/me over populations of this many live agent tokens, seeded in bulk (e.g. 10000,100000,1000000,10000000): throughput, p99, cache hit ratio, resident memory per cached credential, start-up time."`
	Mixes          []string      `name:"mixes" default:"uniform,zipf" enum:"uniform,zipf" help:"Request mixes of --populations: uniform, zipf (Zipf, s=1.1, over the population in a fixed random order)."`
	// A cache of 100k entries fills at the store's lookup rate; the rows are steady once it has.
	PopulationWarmup time.Duration `name:"population-warmup" default:"15s" help:"Unmeasured ai/me run before each --populations row, filling the caches."`
}

// benchEnv is what scenarios get to seed with. cold is a second instance of the service
// on the same store whose credential caches hold a single entry, so every verification
// is a store lookup.
type benchEnv struct {
	addr     string
	coldAddr string
	// replicaAddr is a cold instance whose misses read the replica ("" without one).
	replicaAddr string
	// coldDB and replicaDB count the SELECTs each cold instance sends to the primary;
	// replicaReads those the replica instance sends to the replica.
	coldDB, replicaDB *database.DB
	replicaReads      *database.Reads
	ent               *ent.Client
	db                *database.DB
	keys              *secret.Keyring
	cfg               config.Config
	tokens            int
	shared            map[string]any
	// spend is how long a scenario sends requests: its warm-up and its run.
	spend time.Duration
}

type scenario struct {
	name string
	// setup seeds the store and returns the request to repeat.
	setup func(ctx context.Context, env *benchEnv) (request, error)
	// flood, when set, is sent by floodConns other connections for the whole run (not
	// measured), to see what it does to the measured request.
	flood      func(ctx context.Context, env *benchEnv) (request, error)
	floodConns int
	// cold runs the request against the cache-less instance; replica against the
	// cache-less one whose misses read the replica (skipped without one).
	cold, replica bool
	// conns, when set, replaces --connections: latency targets of writes are read at a
	// modest concurrency, not behind a queue of 64.
	conns int
	// warmup, when set, replaces --warmup: a freshly seeded large store needs its pages
	// in the buffer cache before it shows its steady state.
	warmup time.Duration
	// custom, when set, measures the scenario itself (a flow of several requests, such as
	// an approval and the polls that collect its token) instead of repeating one request.
	custom func(ctx context.Context, env *benchEnv, d time.Duration, conns int) (result, error)
	// durable marks a scenario of one durable write per request: the store's flushes per
	// request are counted, and with --pgbench the store is measured running the same
	// statements at the same concurrency.
	durable bool
}

func (b benchCmd) Run(cfg *config.Config, stdout io.Writer) error {
	dir, err := os.MkdirTemp("", "authcore-bench-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	c := *cfg
	c.Addr = "127.0.0.1:0"
	c.DataDir = dir
	c.DatabaseURL = "sqlite:" + filepath.Join(dir, "bench.db")
	if b.Store != "" {
		c.DatabaseURL = b.Store
	}
	c.RateLimit = 0           // the generator is one client IP sending thousands of requests a second
	c.WebhookAllowHTTP = true // the audit streams' receiver is in this process, on loopback
	// Two or three servers run in this process beside whatever serves on this machine: no
	// metrics listener of their own, which would all want 127.0.0.1:9090.
	c.MetricsAddr = config.MetricsPublic
	c.LogLevel = "info"
	// Agents poll for a person's approval every second (SPEC §23's figures are for that).
	c.BackchannelInterval = time.Second
	key, err := secret.NewMasterKey()
	if err != nil {
		return err
	}
	var srv, coldSrv *httpserver.Server
	env := &benchEnv{cfg: c, tokens: b.Tokens, shared: map[string]any{}, spend: b.Warmup + b.Duration}
	ctx := context.Background()
	a := fx.New(app.Options(c, secret.MasterKeys{key}, logging.Output{Writer: io.Discard}), app.Listeners(), fx.Populate(&srv, &env.ent, &env.db, &env.keys), fx.NopLogger)
	if err := a.Start(ctx); err != nil {
		return err
	}
	defer a.Stop(context.Background())
	env.addr = srv.Addr().String()
	if len(b.Populations) > 0 {
		stop, err := b.profile()
		if err != nil {
			return err
		}
		defer stop()
		return b.populations(ctx, env, key, stdout)
	}
	oneEntry := fx.Decorate(func(l bearer.Limits) bearer.Limits { l.Size = 1; return l })
	cold := fx.New(app.Options(c, secret.MasterKeys{key}, logging.Output{Writer: io.Discard}), app.Listeners(), fx.Populate(&coldSrv, &env.coldDB), fx.NopLogger, oneEntry)
	if err := cold.Start(ctx); err != nil {
		return err
	}
	defer cold.Stop(context.Background())
	env.coldAddr = coldSrv.Addr().String()
	if b.ReadStore != "" {
		rc := c
		rc.DatabaseReadURL = b.ReadStore
		var replicaSrv *httpserver.Server
		ra := fx.New(app.Options(rc, secret.MasterKeys{key}, logging.Output{Writer: io.Discard}), app.Listeners(),
			fx.Populate(&replicaSrv, &env.replicaDB, &env.replicaReads), fx.NopLogger, oneEntry)
		if err := ra.Start(ctx); err != nil {
			return err
		}
		defer ra.Stop(context.Background())
		env.replicaAddr = replicaSrv.Addr().String()
	}

	storeName, _ := config.StorageOf(c.DatabaseURL)
	generator := "in-process generator"
	if b.Wrk {
		generator = "wrk -t2"
	}
	fmt.Fprintf(stdout, "authcore bench: store %s, %s, %d connections, %s per scenario (after %s warm-up)\n\n", storeName, generator, b.Connections, b.Duration, b.Warmup)

	stop, err := b.profile()
	if err != nil {
		return err
	}
	defer stop()
	// runOn warms up, then measures; probe, when set, starts counting just before the
	// measured run and returns what it counted to print under the row.
	runOn := func(addr, name string, req request, warmup time.Duration, conns int, probe func() func(result) string) result {
		if warmup == 0 {
			warmup = b.Warmup
		}
		if conns == 0 {
			conns = b.Connections
		}
		var r result
		if b.Wrk {
			if _, err := wrkLoad(ctx, addr, req, conns, warmup); err != nil {
				return result{Name: name, Note: "skipped: " + strings.SplitN(err.Error(), "\n", 2)[0]}
			}
			var counted func(result) string
			if probe != nil {
				counted = probe()
			}
			var err error
			if r, err = wrkLoad(ctx, addr, req, conns, b.Duration); err != nil {
				return result{Name: name, Note: "skipped: " + strings.SplitN(err.Error(), "\n", 2)[0]}
			}
			if counted != nil {
				r.Note = counted(r)
			}
		} else {
			load(ctx, addr, req, conns, warmup)
			var counted func(result) string
			if probe != nil {
				counted = probe()
			}
			r = load(ctx, addr, req, conns, b.Duration)
			if counted != nil {
				r.Note = counted(r)
			}
		}
		r.Name = name
		return r
	}
	run := func(name string, req request) result { return runOn(env.addr, name, req, 0, 0, nil) }
	healthz := request{Method: http.MethodGet, Path: "/healthz", Expect: 200}
	before := run("/healthz (baseline, before)", healthz)
	var rows []result
	for _, s := range slices.Concat(benchScenarios(), productScenarios(), grantScenarios(), trustScenarios(), peopleScenarios(), streamScenarios(), ssoScenarios()) {
		if b.Only != "" && !strings.Contains(s.name, b.Only) {
			continue
		}
		if s.custom != nil {
			r, err := s.custom(ctx, env, b.Duration, b.Connections)
			if err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
			rows = append(rows, r)
			continue
		}
		if s.replica && env.replicaAddr == "" {
			continue
		}
		req, err := s.setup(ctx, env)
		if err != nil {
			return fmt.Errorf("%s: setup: %w", s.name, err)
		}
		if s.cold || s.replica {
			addr, db := env.coldAddr, env.coldDB
			if s.replica {
				addr, db = env.replicaAddr, env.replicaDB
			}
			// The counts cover the warm-up and the measured run together.
			primary, replica := db.Queries(), env.replicaQueries()
			r := runOn(addr, s.name, req, s.warmup, s.conns, nil)
			primary, replica = db.Queries()-primary, env.replicaQueries()-replica
			r.Note = fmt.Sprintf("store SELECTs during warm-up and run: primary %d, replica %d", primary, replica)
			rows = append(rows, r)
			continue
		}
		if s.durable {
			r := runOn(env.addr, s.name, req, 0, s.conns, func() func(result) string { return flushProbe(ctx, env) })
			rows = append(rows, r)
			if b.Pgbench {
				rows = append(rows, pgbenchRow(ctx, env, b, r))
			}
			continue
		}
		if s.flood == nil {
			rows = append(rows, runOn(env.addr, s.name, req, 0, s.conns, nil))
			continue
		}
		freq, err := s.flood(ctx, env)
		if err != nil {
			return fmt.Errorf("%s: flood setup: %w", s.name, err)
		}
		floodDone := make(chan result, 1)
		go func() { floodDone <- load(ctx, env.addr, freq, s.floodConns, b.Warmup+b.Duration) }()
		r := run(s.name, req)
		f := <-floodDone
		f.Name = "  └ the flood itself"
		rows = append(rows, r, f)
	}
	after := run("/healthz (baseline, after)", healthz)
	baseline := before
	baseline.Requests = (before.Requests + after.Requests) / 2
	baseline.Elapsed = (before.Elapsed + after.Elapsed) / 2
	printTable(stdout, baseline, append([]result{before, after}, rows...))
	fmt.Fprintln(stdout, "\nratio = requests/s over the mean of the two /healthz runs")
	// A scenario whose answers are not the ones it expects measures something else (a
	// refusal is cheap): say so in the exit status, not only in a column.
	var wrong []string
	for _, r := range append([]result{before, after}, rows...) {
		if r.Errors > 0 {
			wrong = append(wrong, fmt.Sprintf("%s (%d)", strings.TrimSpace(r.Name), r.Errors))
		}
	}
	if len(wrong) > 0 {
		return fmt.Errorf("answers other than expected in: %s", strings.Join(wrong, "; "))
	}
	return nil
}

// profile starts the CPU profile of --cpuprofile; stop ends it.
func (b benchCmd) profile() (stop func(), err error) {
	if b.CPUProfile == "" {
		return func() {}, nil
	}
	f, err := os.Create(b.CPUProfile)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// replicaQueries is how many SELECTs the replica instance sent to the replica.
func (env *benchEnv) replicaQueries() int64 {
	if env.replicaReads == nil {
		return 0
	}
	return env.replicaReads.ReplicaQueries()
}

// benchScenarios is every scenario; each feature adds its own.
func benchScenarios() []scenario {
	return []scenario{
		{name: "GET /v1/auth-core/session/me (warm cache)", setup: func(ctx context.Context, env *benchEnv) (request, error) {
			s, err := benchSignUp(env)
			if err != nil {
				return request{}, err
			}
			return request{Method: http.MethodGet, Path: "/v1/auth-core/session/me", Header: map[string]string{"Authorization": "Bearer " + s.AccessToken}, Expect: 200}, nil
		}},
		{
			name: "session/me during a sign-in flood (32 conns)",
			setup: func(ctx context.Context, env *benchEnv) (request, error) {
				s, err := benchSignUp(env)
				if err != nil {
					return request{}, err
				}
				return request{Method: http.MethodGet, Path: "/v1/auth-core/session/me", Header: map[string]string{"Authorization": "Bearer " + s.AccessToken}, Expect: 200}, nil
			},
			flood: func(ctx context.Context, env *benchEnv) (request, error) {
				body, _ := json.Marshal(map[string]string{"email": "bench1@example.com", "password": "bench password"})
				return request{Method: http.MethodPost, Path: "/v1/auth-core/signin", Body: body, Expect: 200}, nil
			},
			floodConns: 32,
		},
		{name: "GET /v1/auth-core/ai/me (warm cache)", setup: func(ctx context.Context, env *benchEnv) (request, error) {
			tok, err := benchAgentToken(env)
			if err != nil {
				return request{}, err
			}
			return request{Method: http.MethodGet, Path: "/v1/auth-core/ai/me", Header: map[string]string{"Authorization": "Bearer " + tok}, Expect: 200}, nil
		}},
		{name: "GET /v1/service-badges/me (warm cache)", setup: func(ctx context.Context, env *benchEnv) (request, error) {
			admin, prj, err := benchProject(env)
			if err != nil {
				return request{}, err
			}
			var out struct{ Plaintext string }
			if err := benchCall(env, http.MethodPost, "/v1/projects/"+prj+"/service-badges", admin.AccessToken, []byte(`{"name":"bench","product":"db"}`), http.StatusCreated, &out); err != nil {
				return request{}, err
			}
			return request{Method: http.MethodGet, Path: "/v1/service-badges/me", Header: map[string]string{"Authorization": "Bearer " + out.Plaintext}, Expect: 200}, nil
		}},
		{name: "POST service-badges (create db, 4 conns)", conns: 4, setup: func(ctx context.Context, env *benchEnv) (request, error) {
			admin, prj, err := benchProject(env)
			if err != nil {
				return request{}, err
			}
			return request{Method: http.MethodPost, Path: "/v1/projects/" + prj + "/service-badges", Body: []byte(`{"name":"bench","product":"db"}`),
				Header: map[string]string{"Authorization": "Bearer " + admin.AccessToken}, Expect: 201}, nil
		}},
		{name: "ai/me cold cache, 10k tokens stored", cold: true, setup: func(ctx context.Context, env *benchEnv) (request, error) {
			admin, prj, err := benchProject(env)
			if err != nil {
				return request{}, err
			}
			ts := &tokenSet{project: prj, admin: admin}
			env.shared["tokens"] = ts
			if err := ts.grow(ctx, env.db, 10_000); err != nil {
				return request{}, err
			}
			if strings.HasPrefix(env.cfg.DatabaseURL, "postgres") {
				if _, err := env.db.SQL.ExecContext(ctx, "VACUUM ANALYZE agent_tokens"); err != nil {
					return request{}, err
				}
			}
			return request{Method: http.MethodGet, Next: ts.randomToken(), Expect: 200}, nil
		}},
		{name: "ai/me cold cache, 10k tokens, misses on replica", replica: true, setup: func(ctx context.Context, env *benchEnv) (request, error) {
			ts, ok := env.shared["tokens"].(*tokenSet)
			if !ok {
				return request{}, fmt.Errorf("run together with the 10k scenario")
			}
			return request{Method: http.MethodGet, Next: ts.randomToken(), Expect: 200}, nil
		}},
		{name: "ai/me cold cache, large token store", cold: true, warmup: 15 * time.Second, setup: func(ctx context.Context, env *benchEnv) (request, error) {
			ts, ok := env.shared["tokens"].(*tokenSet)
			if !ok {
				return request{}, fmt.Errorf("run together with the 10k scenario")
			}
			start := time.Now()
			if err := ts.grow(ctx, env.db, env.tokens); err != nil {
				return request{}, err
			}
			if err := settle(ctx, env); err != nil {
				return request{}, err
			}
			fmt.Fprintf(os.Stderr, "seeded %d tokens in %s\n", ts.stored, time.Since(start).Round(time.Second))
			return request{Method: http.MethodGet, Next: ts.randomToken(), Expect: 200}, nil
		}},
	}
}

type benchSession struct {
	UserID      string
	AccessToken string
}

var benchUsers int

// benchSignUp signs up a fresh dashboard user through the API.
func benchSignUp(env *benchEnv) (benchSession, error) {
	benchUsers++
	body, _ := json.Marshal(map[string]string{"email": fmt.Sprintf("bench%d@example.com", benchUsers), "password": "bench password"})
	var out struct {
		User    struct{ ID string }
		Session struct{ AccessToken string }
	}
	if err := benchCall(env, http.MethodPost, "/v1/auth-core/signup", "", body, http.StatusCreated, &out); err != nil {
		return benchSession{}, err
	}
	return benchSession{UserID: out.User.ID, AccessToken: out.Session.AccessToken}, nil
}

// benchCall makes one API call during seeding and decodes its answer.
func benchCall(env *benchEnv, method, path, bearer string, body []byte, want int, out any) error {
	req, err := http.NewRequest(method, "http://"+env.addr+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != want {
		return fmt.Errorf("%s %s: %d %s", method, path, res.StatusCode, b)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}
