// Package interop runs stock third-party clients and servers written for Node (openid-client,
// oauth4webapi, the MCP TypeScript SDK, oidc-provider as an upstream identity provider)
// against authcore from Go tests: no hand-written fake stands in for them. Their versions
// are pinned in testdata/package.json and its lockfile (testdata, so the Go tool ignores
// node_modules); .ci/run installs them with `npm ci`. Without Node or the installed
// modules the tests that need them skip, unless AUTHCORE_TEST_REQUIRE_NODE=1 (as in CI)
// makes that a failure.
package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// EnvRequire makes missing Node modules a failure instead of a skip.
const EnvRequire = "AUTHCORE_TEST_REQUIRE_NODE"

// Dir is the Node workspace (testdata, beside this file) once its modules are installed;
// the test skips (or fails, with EnvRequire set) when they are not.
func Dir(t testing.TB) string {
	t.Helper()
	dir, err := workspace()
	if err != nil {
		t.Fatal(err)
	}
	why := ""
	if _, err := exec.LookPath("node"); err != nil {
		why = "node is not installed"
	} else if _, err := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json")); err != nil {
		why = "the Node clients are not installed (npm ci --prefix internal/interop/testdata)"
	}
	if why != "" {
		if os.Getenv(EnvRequire) != "" {
			t.Fatalf("%s, and %s is set", why, EnvRequire)
		}
		t.Skip(why)
	}
	return dir
}

// workspace finds internal/interop/testdata from the module's root, above the test's
// working directory (its package's). Not from runtime.Caller: CI builds with -trimpath,
// which leaves import paths where file paths were.
func workspace() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "internal", "interop", "testdata"), nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("interop: no go.mod above the test's directory")
		}
		dir = up
	}
}

// Run runs a script of the workspace with node and env added to the environment, and
// returns what it printed on standard output; the test fails, with its standard error,
// when it exits non-zero or runs past timeout.
func Run(t testing.TB, timeout time.Duration, script string, env ...string) string {
	t.Helper()
	dir := Dir(t)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(dir, script))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	if err := cmd.Run(); err != nil {
		t.Fatalf("node %s: %v\nstdout:\n%s\nstderr:\n%s", script, err, out.String(), errs.String())
	}
	return out.String()
}

// Process is a script running beside the test: it prints one JSON object per line, and
// the test reads them as they come (a URL for the browser to open, then a result).
type Process struct {
	t      testing.TB
	script string
	lines  chan map[string]any
	stderr *lockedBuffer
	exited chan error
}

// Start runs script with node and env, and kills it when the test ends.
func Start(t testing.TB, script string, env ...string) *Process {
	t.Helper()
	dir := Dir(t)
	cmd := exec.Command("node", filepath.Join(dir, script))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &Process{t: t, script: script, lines: make(chan map[string]any, 16), stderr: &lockedBuffer{}, exited: make(chan error, 1)}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("node %s: %v", script, err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				p.lines <- m
			} else {
				p.stderr.Write(append(sc.Bytes(), '\n'))
			}
		}
		close(p.lines)
		p.exited <- cmd.Wait()
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return p
}

// Next is the script's next line; the test fails if the script reports an error, exits,
// or says nothing within timeout.
func (p *Process) Next(timeout time.Duration) map[string]any {
	p.t.Helper()
	select {
	case m, ok := <-p.lines:
		if !ok {
			p.t.Fatalf("node %s ended without a result\nstderr:\n%s", p.script, p.stderr.String())
		}
		if e, failed := m["error"]; failed {
			p.t.Fatalf("node %s failed: %v\nstderr:\n%s", p.script, e, p.stderr.String())
		}
		return m
	case <-time.After(timeout):
		p.t.Fatalf("node %s said nothing for %s\nstderr:\n%s", p.script, timeout, p.stderr.String())
	}
	return nil
}

// lockedBuffer is a buffer written by one goroutine and read by the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
