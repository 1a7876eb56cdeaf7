package testkit

import (
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// EnvRequireReplica, when set (CI sets it), makes a test that needs a streaming replica
// fail instead of skipping when one cannot be made here.
const EnvRequireReplica = "AUTHCORE_TEST_REQUIRE_REPLICA"

// pgBin is where Debian puts the PostgreSQL 15 server programs.
const pgBin = "/usr/lib/postgresql/15/bin"

// primarySocket is the Debian cluster's socket directory: the replica connects there as
// the postgres OS user (peer authentication), so the test role needs no REPLICATION.
const primarySocket = "/var/run/postgresql"

// Replica is a real streaming replica of the test PostgreSQL cluster, made with
// pg_basebackup -R and run as a second postmaster on a loopback port. Its WAL replay is
// held back by ApplyDelay (recovery_min_apply_delay, which holds every commit record), so
// a test can make it lag by a known amount.
type Replica struct {
	Port       int
	ApplyDelay time.Duration
	dir        string
	slot       string
	t          testing.TB
}

// StartReplica starts a replica of the whole test cluster (every database in it, the
// caller's included) and stops it when the test ends.
func StartReplica(t testing.TB, applyDelay time.Duration) *Replica {
	t.Helper()
	return startCopy(t, true, applyDelay)
}

// StartPrimary starts a cluster of its own, a copy of the whole test cluster as it is now
// (every database, the caller's included), that a test may crash and restart (Stop,
// Start) without disturbing the other tests, which share the test cluster. It is stopped
// when the test ends.
func StartPrimary(t testing.TB) *Replica {
	t.Helper()
	return startCopy(t, false, 0)
}

func startCopy(t testing.TB, standby bool, applyDelay time.Duration) *Replica {
	t.Helper()
	if PostgresAdminURL() == "" {
		replicaUnavailable(t, EnvDatabaseURL+" is not set")
	}
	if _, err := os.Stat(filepath.Join(pgBin, "pg_basebackup")); err != nil {
		replicaUnavailable(t, "no PostgreSQL 15 server programs in "+pgBin)
	}
	if os.Geteuid() != 0 {
		replicaUnavailable(t, "a replica runs as the postgres OS user: the tests must run as root")
	}
	pg, err := user.Lookup("postgres")
	if err != nil {
		replicaUnavailable(t, "no postgres OS user")
	}
	uid, _ := strconv.Atoi(pg.Uid)
	gid, _ := strconv.Atoi(pg.Gid)

	dir, err := os.MkdirTemp("", "authcore-replica-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, uid, gid); err != nil {
		t.Fatal(err)
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	r := &Replica{Port: port, ApplyDelay: applyDelay, dir: dir, t: t}
	t.Cleanup(r.remove)

	if standby {
		// The slot keeps the WAL a stopped replica needs to catch up when it starts again.
		r.slot = fmt.Sprintf("authcore_test_%d", port)
		r.asPostgres(filepath.Join(pgBin, "pg_basebackup"), "-D", r.data(), "-R", "-X", "stream", "-C", "-S", r.slot,
			"-c", "fast", "-h", primarySocket, "-p", "5432")
	} else {
		r.asPostgres(filepath.Join(pgBin, "pg_basebackup"), "-D", r.data(), "-X", "stream", "-c", "fast", "-h", primarySocket, "-p", "5432")
	}
	hba := "local all postgres peer\nhost all all 127.0.0.1/32 scram-sha-256\n"
	// The port was free when picked, but anything may take it before the postmaster binds
	// it (any outgoing connection's local port comes from the same range): then another.
	for attempt := 1; ; attempt++ {
		settings := []string{
			"listen_addresses = '127.0.0.1'",
			fmt.Sprintf("port = %d", r.Port),
			fmt.Sprintf("unix_socket_directories = '%s'", dir),
			"shared_buffers = 16MB",
			"fsync = off",
			"logging_collector = off",
		}
		if standby {
			settings = append(settings, "hot_standby = on", fmt.Sprintf("recovery_min_apply_delay = '%dms'", applyDelay.Milliseconds()))
		}
		conf := strings.Join(settings, "\n") + "\n"
		for name, body := range map[string]string{"postgresql.conf": conf, "pg_hba.conf": hba, "pg_ident.conf": ""} {
			p := filepath.Join(r.data(), name)
			if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(p, uid, gid); err != nil {
				t.Fatal(err)
			}
		}
		err := r.start()
		if err == nil {
			return r
		}
		if attempt == 3 || !strings.Contains(err.Error(), "Address already in use") {
			t.Fatal(err)
		}
		t.Logf("replica port %d was taken meanwhile; another", r.Port)
		if r.Port, err = freePort(); err != nil {
			t.Fatal(err)
		}
	}
}

func replicaUnavailable(t testing.TB, why string) {
	t.Helper()
	if os.Getenv(EnvRequireReplica) != "" {
		t.Fatalf("cannot start a streaming replica: %s", why)
	}
	t.Skipf("no streaming replica here (%s); CI runs this with %s=1", why, EnvRequireReplica)
}

func (r *Replica) data() string { return filepath.Join(r.dir, "data") }

func (r *Replica) asPostgres(name string, args ...string) {
	r.t.Helper()
	cmd := exec.Command("runuser", append([]string{"-u", "postgres", "--", name}, args...)...)
	cmd.Dir = r.dir
	if out, err := cmd.CombinedOutput(); err != nil {
		r.t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
}

// Start starts the replica's postmaster and waits until it accepts read-only connections.
func (r *Replica) Start() {
	r.t.Helper()
	if err := r.start(); err != nil {
		r.t.Fatal(err)
	}
}

// start is Start's work; a failure says why in the postmaster's own words (its log is
// removed with the test).
func (r *Replica) start() error {
	log := filepath.Join(r.dir, "log")
	cmd := exec.Command("runuser", "-u", "postgres", "--", filepath.Join(pgBin, "pg_ctl"), "-D", r.data(), "-l", log, "-w", "-t", "60", "start")
	cmd.Dir = r.dir
	out, err := cmd.CombinedOutput()
	if err == nil {
		return nil
	}
	logged, _ := os.ReadFile(log)
	if len(logged) > 4000 {
		logged = logged[len(logged)-4000:]
	}
	return fmt.Errorf("pg_ctl start (replica on port %d): %v\n%s\nits log:\n%s", r.Port, err, out, logged)
}

// Stop stops the cluster at once (connections are cut, as when it crashes or its host goes).
func (r *Replica) Stop() {
	r.t.Helper()
	r.asPostgres(filepath.Join(pgBin, "pg_ctl"), "-D", r.data(), "-m", "immediate", "-w", "stop")
}

// URL is databaseURL (a database of the test cluster) on the replica.
func (r *Replica) URL(databaseURL string) string {
	u, err := url.Parse(databaseURL)
	if err != nil {
		r.t.Fatal(err)
	}
	u.Host = "127.0.0.1:" + strconv.Itoa(r.Port)
	return u.String()
}

func (r *Replica) remove() {
	stop := exec.Command("runuser", "-u", "postgres", "--", filepath.Join(pgBin, "pg_ctl"), "-D", r.data(), "-m", "immediate", "-w", "stop")
	stop.Dir = r.dir
	_ = stop.Run() // already stopped is fine
	if r.slot == "" {
		_ = os.RemoveAll(r.dir)
		return
	}
	drop := exec.Command("runuser", "-u", "postgres", "--", "psql", "-h", primarySocket, "-p", "5432", "-qAtc",
		fmt.Sprintf("SELECT pg_drop_replication_slot('%s') FROM pg_replication_slots WHERE slot_name = '%s'", r.slot, r.slot))
	drop.Dir = r.dir
	if out, err := drop.CombinedOutput(); err != nil {
		r.t.Errorf("dropping replication slot %s: %v\n%s", r.slot, err, out)
	}
	_ = os.RemoveAll(r.dir)
}
