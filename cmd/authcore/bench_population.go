package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/fx"

	"github.com/authcore/authcore/cmd/authcore/app"
	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/modules/agenttoken"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/httpserver"
	"github.com/authcore/authcore/platform/invalidation"
	"github.com/authcore/authcore/platform/lifecycle"
	"github.com/authcore/authcore/platform/logging"
	"github.com/authcore/authcore/platform/secret"
)

// population is a project's agent tokens, seeded in bulk straight into the store, whose
// plaintexts are recomputed from their index instead of kept: token i's random part is the
// run's prefix and i in base62.
type population struct {
	project string
	prefix  string // RandomLen/2 random base62 characters, fresh per run
	stored  int
}

func newPopulation(project string) (*population, error) {
	b := make([]byte, secret.RandomLen/2)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	for i := range b {
		b[i] = base62[int(b[i])%len(base62)] // a bias of no consequence: these need only differ per run
	}
	return &population{project: project, prefix: string(b)}, nil
}

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// token is the plaintext of token i.
func (p *population) token(i int) string {
	var tail [secret.RandomLen / 2]byte
	for k := len(tail) - 1; k >= 0; k-- {
		tail[k] = base62[i%62]
		i /= 62
	}
	return secret.TokenOf("ai", p.prefix+string(tail[:]))
}

// grow seeds tokens until the population holds total, through the agent tokens' table
// (COPY on PostgreSQL, multi-row INSERTs on SQLite).
func (p *population) grow(ctx context.Context, db *database.DB, total int) error {
	now := time.Now().UTC()
	expires := now.Add(720 * time.Hour)
	first := p.stored
	err := agenttoken.Table.Seed(ctx, db, total-first, func(i int) lifecycle.Seeded {
		tok := p.token(first + i)
		return lifecycle.Seeded{ProjectID: p.project, CreatedAt: now, ExpiresAt: &expires, Hint: secret.Hint(tok),
			Digest: secret.DigestOf(tok).Bytes(), Own: map[string]any{"agent_name": "bench", "scopes": []string{}}}
	})
	if err != nil {
		return err
	}
	p.stored = total
	return nil
}

// requests draws ai/me requests over the population: uniformly, or by Zipf's law (s=1.1,
// rank r's probability ∝ (r+1)^-1.1) over the tokens in a fixed pseudo-random order, so
// that the popular ones are spread over the table as a real population's would be.
func (p *population) requests(mix string, conns int) func(worker, i int) (string, map[string]string) {
	n := p.stored
	draw := make([]func() int, conns)
	for w := range draw {
		r := mrand.New(mrand.NewPCG(uint64(w), uint64(n)))
		if mix == "zipf" {
			z := mrand.NewZipf(r, 1.1, 1, uint64(n-1))
			// A multiplier prime to n spreads the ranks over the table: a permutation.
			mult := 1_000_003
			for gcd(mult, n) != 1 {
				mult += 2
			}
			draw[w] = func() int { return int((z.Uint64() * uint64(mult)) % uint64(n)) }
		} else {
			draw[w] = func() int { return r.IntN(n) }
		}
	}
	return func(worker, i int) (string, map[string]string) {
		return "/v1/auth-core/ai/me", map[string]string{"Authorization": "Bearer " + p.token(draw[worker]())}
	}
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// populationRow is what one population and mix measured.
type populationRow struct {
	tokens                int
	mix                   string
	me, healthz           result
	hitRatio              float64
	cached                int
	rssPerEntry, heapPer  float64
	rssGrowth             float64
	startup               time.Duration
	storeLookupsPerSecond float64
}

// populations runs the population table: for each size, the tokens are seeded in bulk,
// then for each mix a fresh instance of the service (its caches empty, sized by
// AUTHCORE_CACHE_SIZE) starts on the store — its start-up time is measured —, /healthz is
// measured on it, and ai/me is warmed up and measured with the mix.
func (b benchCmd) populations(ctx context.Context, env *benchEnv, key []byte, stdout io.Writer) error {
	_, prj, err := benchProject(env)
	if err != nil {
		return err
	}
	pop, err := newPopulation(prj)
	if err != nil {
		return err
	}
	sizes := slices.Clone(b.Populations)
	slices.Sort(sizes)
	size := env.cfg.CacheSize
	if size == 0 {
		size = 100_000
	}
	fmt.Fprintf(stdout, "populations: ai/me over live agent tokens seeded in bulk; caches of %d entries (AUTHCORE_CACHE_SIZE); %s warm-up per row\n\n", size, b.PopulationWarmup)
	var rows []populationRow
	for _, n := range sizes {
		start := time.Now()
		if err := pop.grow(ctx, env.db, n); err != nil {
			return err
		}
		if err := settle(ctx, env); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "seeded %d tokens in %s\n", pop.stored, time.Since(start).Round(time.Second))
		for _, mix := range b.Mixes {
			row, err := b.populationRow(ctx, env, key, pop, mix)
			if err != nil {
				return fmt.Errorf("%d tokens, %s: %w", n, mix, err)
			}
			rows = append(rows, row)
			fmt.Fprintf(os.Stderr, "measured %d tokens, %s\n", n, mix)
		}
	}
	fmt.Fprintf(stdout, "%11s %-8s %11s %7s %10s %9s %9s %9s %10s %10s %10s %9s\n", "tokens", "mix", "requests/s", "ratio", "p99", "hit ratio",
		"misses/s", "cached", "RSS/entry", "heap/entry", "RSS growth", "start-up")
	for _, r := range rows {
		fmt.Fprintf(stdout, "%11d %-8s %11.0f %7.2f %10s %9.3f %9.0f %9d %9.0fB %9.0fB %9.0fB %9s\n", r.tokens, r.mix, r.me.RPS(), r.me.RPS()/r.healthz.RPS(),
			latency(r.me.P99), r.hitRatio, r.storeLookupsPerSecond, r.cached, r.rssPerEntry, r.heapPer, r.rssGrowth, r.startup.Round(time.Millisecond))
		if r.me.Errors > 0 {
			fmt.Fprintf(stdout, "  └ %d errors\n", r.me.Errors)
		}
	}
	fmt.Fprintln(stdout, "\nratio = ai/me requests/s over /healthz's on the same instance just before; hit ratio = 1 − cache misses/verifications;")
	fmt.Fprintln(stdout, "RSS and heap per entry = resident set and Go heap (after a GC) given back by dropping every cached agent token, over the entries cached;")
	fmt.Fprintln(stdout, "RSS growth = the process's resident set from before the warm-up to after the run over the entries cached (SQLite's page cache, usage and last-used counts pending a flush included);")
	fmt.Fprintln(stdout, "start-up = from building the instance to its /readyz answering 200")
	return nil
}

func (b benchCmd) populationRow(ctx context.Context, env *benchEnv, key []byte, pop *population, mix string) (populationRow, error) {
	row := populationRow{tokens: pop.stored, mix: mix}
	var (
		srv    *httpserver.Server
		reg    prometheus.Gatherer
		bus    invalidation.Bus
		client *ent.Client
	)
	started := time.Now()
	inst := fx.New(app.Options(env.cfg, secret.MasterKeys{key}, logging.Output{Writer: io.Discard}), app.Listeners(),
		fx.Populate(&srv, &reg, &bus, &client), fx.NopLogger)
	if err := inst.Start(ctx); err != nil {
		return row, err
	}
	defer inst.Stop(context.Background())
	addr := srv.Addr().String()
	for {
		res, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Since(started) > time.Minute {
			return row, fmt.Errorf("the instance was not ready within a minute")
		}
		time.Sleep(time.Millisecond)
	}
	row.startup = time.Since(started)

	healthz := request{Method: http.MethodGet, Path: "/healthz", Expect: 200}
	load(ctx, addr, healthz, b.Connections, b.Warmup)
	row.healthz = load(ctx, addr, healthz, b.Connections, b.Duration)

	rss0, _ := memory()
	req := request{Method: http.MethodGet, Next: pop.requests(mix, b.Connections), Expect: 200}
	load(ctx, addr, req, b.Connections, b.PopulationWarmup)
	misses0, verified0 := cacheCounts(reg)
	row.me = load(ctx, addr, req, b.Connections, b.Duration)
	misses1, verified1 := cacheCounts(reg)
	row.hitRatio = 1 - (misses1-misses0)/max(verified1-verified0, 1)
	row.storeLookupsPerSecond = (misses1 - misses0) / row.me.Elapsed.Seconds()
	row.cached = int(gauge(reg, "authcore_credential_cache_entries", "ai_agent"))
	rss1, heap1 := memory()
	// What the cached credentials themselves hold: the memory dropping them gives back (an
	// invalidation of every agent token, as a reconnected listener makes).
	if err := database.WithTx(ctx, client, func(tx *ent.Tx) error { return bus.Publish(ctx, tx, "ai_agent", "") }); err != nil {
		return row, err
	}
	rss2, heap2 := memory()
	if left := int(gauge(reg, "authcore_credential_cache_entries", "ai_agent")); left != 0 {
		return row, fmt.Errorf("%d entries left in the cache after dropping them all", left)
	}
	if row.cached > 0 {
		row.rssGrowth = float64(rss1-rss0) / float64(row.cached)
		row.rssPerEntry = float64(rss1-rss2) / float64(row.cached)
		row.heapPer = float64(heap1-heap2) / float64(row.cached)
	}
	return row, nil
}

// memory is the process's resident set (VmRSS) and live Go heap, after a collection that
// also returns freed memory to the system.
func memory() (rss, heap int64) {
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return residentSet(), int64(ms.HeapAlloc)
}

// residentSet reads VmRSS from /proc/self/status (Linux); 0 elsewhere.
func residentSet() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb * 1024
		}
	}
	return 0
}

// cacheCounts reads the agent-token cache misses and the ai/me verifications answered.
func cacheCounts(reg prometheus.Gatherer) (misses, verified float64) {
	return gauge(reg, "authcore_credential_cache_misses_total", "ai_agent"), gauge(reg, "authcore_verifications_total", "ai_agent")
}

// gauge sums the samples of a metric whose label values include want.
func gauge(reg prometheus.Gatherer, name, want string) float64 {
	families, err := reg.Gather()
	if err != nil {
		return 0
	}
	var sum float64
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if !hasLabelValue(m, want) {
				continue
			}
			switch {
			case m.GetCounter() != nil:
				sum += m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				sum += m.GetGauge().GetValue()
			}
		}
	}
	return sum
}

func hasLabelValue(m *dto.Metric, v string) bool {
	for _, l := range m.GetLabel() {
		if l.GetValue() == v {
			return true
		}
	}
	return false
}

// settle puts a freshly seeded store in its steady state: on PostgreSQL, VACUUM ANALYZE
// (else autovacuum runs during the measurement). SQLite is left unanalyzed, as the service
// leaves it: modernc.org/sqlite is built with STAT4, and with STAT4 statistics on
// agent_tokens SQLite compiles the lookup anew for every digest bound to it (the plan of
// "previous_digest = ?" may depend on the value), which doubled a lookup's cost.
func settle(ctx context.Context, env *benchEnv) error {
	if env.db.Storage != config.Postgres {
		return nil
	}
	_, err := env.db.SQL.ExecContext(ctx, "VACUUM ANALYZE agent_tokens")
	return err
}
