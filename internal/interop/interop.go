// Package interop runs stock third-party clients and servers written for Node (openid-client,
// oauth4webapi, the MCP TypeScript SDK, oidc-provider as an upstream identity provider)
// against authcore from Go tests: no hand-written fake stands in for them. Their versions
// are pinned in testdata/package.json and its lockfile (testdata, so the Go tool ignores
// node_modules); .ci/run installs them with `npm ci`. Without Node or the installed
// modules the tests that need them skip, unless AUTHCORE_TEST_REQUIRE_NODE=1 (as in CI)
// makes that a failure.
package interop

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// EnvRequire makes missing Node modules a failure instead of a skip.
const EnvRequire = "AUTHCORE_TEST_REQUIRE_NODE"

// Dir is the Node workspace (testdata, beside this file) once its modules are installed;
// the test skips (or fails, with EnvRequire set) when they are not.
func Dir(t testing.TB) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "testdata")
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
