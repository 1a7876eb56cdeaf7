package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/authcore/authcore/platform/config"
)

// flushes is how many times the store has flushed its log to the disk so far, as the store
// counts it: on SQLite the group commit's commits (each one fsync of the WAL under
// synchronous=FULL; a checkpoint adds two more, not counted), on PostgreSQL pg_stat_wal's
// wal_sync (the whole cluster's, so another client of it shows up here too).
func flushes(ctx context.Context, env *benchEnv) (writes, syncs int64, err error) {
	if env.db.Storage == config.SQLite {
		writes, syncs = env.db.GroupCommits()
		return writes, syncs, nil
	}
	err = env.db.Pool.QueryRow(ctx, "SELECT wal_sync FROM pg_stat_wal").Scan(&syncs)
	return 0, syncs, err
}

// flushProbe counts flushes from now; the note it returns says how many each request took.
func flushProbe(ctx context.Context, env *benchEnv) func(result) string {
	writes0, syncs0, err := flushes(ctx, env)
	if err != nil {
		return func(result) string { return "fsyncs not counted: " + err.Error() }
	}
	return func(r result) string {
		writes1, syncs1, err := flushes(ctx, env)
		if err != nil {
			return "fsyncs not counted: " + err.Error()
		}
		syncs := syncs1 - syncs0
		if env.db.Storage == config.SQLite {
			writes := writes1 - writes0
			return fmt.Sprintf("fsyncs per request %.3f: %d group commits (synchronous=%s) for %d requests, %.1f writes each",
				float64(syncs)/float64(max(r.Requests, 1)), syncs, strings.ToUpper(cmpOr(env.cfg.SQLiteSync, "full")), r.Requests, float64(writes)/float64(max(syncs, 1)))
		}
		return fmt.Sprintf("fsyncs per request %.3f: %d WAL syncs (pg_stat_wal, the whole cluster) for %d requests",
			float64(syncs)/float64(max(r.Requests, 1)), syncs, r.Requests)
	}
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// pgbenchScript is a refresh-token rotation as the service sends it to PostgreSQL (the
// statements ent generates, read from the server's log): the lookup by digest outside a
// transaction, then the conditional update and the insert of the next token in one. Each
// pgbench client rotates a chain of its own, token i's digest being the SHA-256 of
// "run-client-i" (computed by the server: about a microsecond, where the service sends
// the digest it computed), so every transaction finds an unrotated token as the service's
// requests do. The service's access-token signing has no counterpart: it is not the
// store's work.
const pgbenchScript = `\set j :i + 1
SELECT "grant_refresh_tokens"."id", "grant_refresh_tokens"."created_at", "grant_refresh_tokens"."digest", "grant_refresh_tokens"."grant_id", "grant_refresh_tokens"."client_id", "grant_refresh_tokens"."scopes", "grant_refresh_tokens"."resources", "grant_refresh_tokens"."expires_at", "grant_refresh_tokens"."family_expires_at", "grant_refresh_tokens"."rotated_at" FROM "grant_refresh_tokens" WHERE "grant_refresh_tokens"."digest" = sha256(convert_to(:run || '-' || :client_id || '-' || :i, 'UTF8')) LIMIT 2 \gset r_
BEGIN;
UPDATE "grant_refresh_tokens" SET "rotated_at" = now() WHERE "grant_refresh_tokens"."id" = :r_id AND "grant_refresh_tokens"."rotated_at" IS NULL;
INSERT INTO "grant_refresh_tokens" ("created_at", "digest", "grant_id", "client_id", "scopes", "resources", "expires_at", "family_expires_at", "id") VALUES (now(), sha256(convert_to(:run || '-' || :client_id || '-' || :j, 'UTF8')), :r_grant_id, :r_client_id, :r_scopes, :r_resources, now() + interval '30 days', :r_family_expires_at, 'grk_' || :run || '-' || :client_id || '-' || :j);
COMMIT;
\set i :j
`

// pgbenchRow measures the store alone: pgbench running the rotation's statements with as
// many clients as the service keeps connections to the store (its pool: the concurrency the
// store saw), or --pgbench-clients, for as long, after a warm-up as long as the service's;
// the row's note compares the service's rate with it.
func pgbenchRow(ctx context.Context, env *benchEnv, b benchCmd, app result) result {
	const name = "  └ pgbench, the same statements"
	if env.db.Storage != config.Postgres {
		return result{Name: name, Note: "skipped: --pgbench needs --bench-database-url postgres://…"}
	}
	bin, err := pgbenchBinary()
	if err != nil {
		return result{Name: name, Note: "skipped: " + err.Error()}
	}
	clients := b.PgbenchClients
	if clients == 0 {
		clients = int(env.db.Pool.Config().MaxConns)
	}
	script, err := os.CreateTemp("", "authcore-pgbench-*.sql")
	if err != nil {
		return result{Name: name, Note: "skipped: " + err.Error()}
	}
	defer os.Remove(script.Name())
	if _, err := script.WriteString(pgbenchScript); err != nil {
		return result{Name: name, Note: "skipped: " + err.Error()}
	}
	script.Close()
	if _, _, err := runPgbench(ctx, env, bin, script.Name(), clients, b.Warmup); err != nil {
		return result{Name: name, Note: "skipped: " + err.Error()}
	}
	_, syncs0, _ := flushes(ctx, env)
	tps, latency, err := runPgbench(ctx, env, bin, script.Name(), clients, b.Duration)
	if err != nil {
		return result{Name: name, Note: "skipped: " + err.Error()}
	}
	_, syncs1, _ := flushes(ctx, env)
	r := result{Name: name, Requests: int(tps * b.Duration.Seconds()), Elapsed: b.Duration}
	r.Note = fmt.Sprintf("%d clients (the service's pool: %d connections), %.0f transactions/s, mean latency %s (pgbench reports no percentiles); fsyncs per transaction %.3f; the service runs at %.2f of it",
		clients, env.db.Pool.Config().MaxConns, tps, latency, float64(syncs1-syncs0)/float64(max(r.Requests, 1)), app.RPS()/tps)
	return r
}

// runPgbench seeds each client's first token for a fresh run and runs pgbench for d.
func runPgbench(ctx context.Context, env *benchEnv, bin, script string, clients int, d time.Duration) (tps float64, latency time.Duration, err error) {
	run := make([]byte, 6)
	if _, err := rand.Read(run); err != nil {
		return 0, 0, err
	}
	runID := hex.EncodeToString(run)
	now := time.Now()
	batch := &pgx.Batch{}
	for c := range clients {
		digest := sha256.Sum256([]byte(fmt.Sprintf("%s-%d-1", runID, c)))
		batch.Queue(`INSERT INTO grant_refresh_tokens (created_at, digest, grant_id, client_id, scopes, resources, expires_at, family_expires_at, id)
			VALUES ($1, $2, 'grt_pgbench', 'dcr_pgbench', '["tools:call"]', '[]', $3, $4, $5)`,
			now, digest[:], now.Add(30*24*time.Hour), now.Add(90*24*time.Hour), fmt.Sprintf("grk_%s-%d-1", runID, c))
	}
	if err := env.db.Pool.SendBatch(ctx, batch).Close(); err != nil {
		return 0, 0, fmt.Errorf("seeding pgbench's tokens: %w", err)
	}
	cc, err := pgx.ParseConfig(env.cfg.DatabaseURL)
	if err != nil {
		return 0, 0, err
	}
	secs := max(1, int(d.Round(time.Second)/time.Second))
	cmd := exec.CommandContext(ctx, bin, "-n", "-M", "prepared", "-c", strconv.Itoa(clients), "-j", "2", "-T", strconv.Itoa(secs),
		"-D", "run="+runID, "-D", "i=1", "-f", script)
	// The password goes by environment, not argv, where anyone on the machine could read it.
	cmd.Env = append(os.Environ(), "PGHOST="+cc.Host, "PGPORT="+strconv.Itoa(int(cc.Port)), "PGUSER="+cc.User,
		"PGPASSWORD="+cc.Password, "PGDATABASE="+cc.Database)
	if cc.TLSConfig == nil {
		cmd.Env = append(cmd.Env, "PGSSLMODE=disable")
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return 0, 0, fmt.Errorf("pgbench: %v: %s", err, lastLines(string(out), 3))
	}
	return parsePgbench(string(out))
}

var (
	pgbenchTPS     = regexp.MustCompile(`tps = ([0-9.]+) \(without initial connection time\)`)
	pgbenchLatency = regexp.MustCompile(`latency average = ([0-9.]+) ms`)
	pgbenchFailed  = regexp.MustCompile(`number of failed transactions: (\d+)`)
)

// parsePgbench reads pgbench's summary: transactions per second and the mean latency; a
// run with failed transactions is an error (a chain broke: the figures would be wrong).
func parsePgbench(out string) (float64, time.Duration, error) {
	m := pgbenchTPS.FindStringSubmatch(out)
	if m == nil {
		return 0, 0, fmt.Errorf("pgbench printed no tps: %s", lastLines(out, 3))
	}
	if f := pgbenchFailed.FindStringSubmatch(out); f != nil && f[1] != "0" {
		return 0, 0, fmt.Errorf("pgbench: %s failed transactions", f[1])
	}
	tps, _ := strconv.ParseFloat(m[1], 64)
	var latency time.Duration
	if l := pgbenchLatency.FindStringSubmatch(out); l != nil {
		ms, _ := strconv.ParseFloat(l[1], 64)
		latency = time.Duration(ms * float64(time.Millisecond))
	}
	return tps, latency, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], " / ")
}

// pgbenchBinary is pgbench on PATH, or the newest under /usr/lib/postgresql (Debian's
// postgresql-contrib puts it there).
func pgbenchBinary() (string, error) {
	if p, err := exec.LookPath("pgbench"); err == nil {
		return p, nil
	}
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pgbench")
	if len(found) == 0 {
		return "", fmt.Errorf("pgbench is neither on PATH nor under /usr/lib/postgresql (apt-get install postgresql-contrib)")
	}
	return found[len(found)-1], nil
}
