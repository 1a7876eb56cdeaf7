package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/platform/config"
)

// walkthrough is the shell of a document's ```sh blocks, in order, leaving out those
// marked <!-- not run: why --> (they start servers or need a mail catcher).
func walkthrough(t *testing.T, doc string) (script string, blocks int) {
	t.Helper()
	f, err := os.Open(doc)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b strings.Builder
	in, skip, previous := false, false, ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case !in && line == "```sh":
			in, skip = true, strings.HasPrefix(previous, "<!-- not run")
			if !skip {
				blocks++
			}
		case in && line == "```":
			in = false
		case in && !skip:
			b.WriteString(expected.ReplaceAllString(line, "expect $2 $1") + "\n")
		}
		if strings.TrimSpace(line) != "" {
			previous = line
		}
	}
	return b.String(), blocks
}

// expected finds a call the docs say fails: a trailing comment that starts with the status.
var expected = regexp.MustCompile(`^(curl .*#\s*([1-5][0-9][0-9])\b.*)$`)

// prelude makes every call that is not annotated fail the script on an error status, and an
// annotated one fail unless it answers the status its comment names.
const prelude = `set -euo pipefail
curl() { command curl -sS --fail-with-body "$@"; }
expect() {
  local want=$1; shift 2
  local got; got=$(command curl -sS -o /dev/stderr -w '%{http_code}' "$@")
  [ "$got" = "$want" ] || { echo "expected $want, got $got: $*" >&2; exit 1; }
}
`

// SPEC §15, issue 20: every shell walkthrough in the README and docs runs as written, top to
// bottom, on a fresh server.
func TestDocsWalkthroughsRun(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (.ci/run installs it): %v", tool, err)
		}
	}
	docs, _ := filepath.Glob("../../docs/*.md")
	docs = append([]string{"../../README.md"}, docs...)
	ran := 0
	for _, doc := range docs {
		script, blocks := walkthrough(t, doc)
		if blocks == 0 {
			continue
		}
		ran++
		t.Run(filepath.Base(doc), func(t *testing.T) {
			// The metrics listener as serve has it by default, on a port of its own (0 here:
			// other tests' servers run beside this one).
			a := apptest.Start(t, apptest.Stores(t)[0], apptest.WithConfig(func(c *config.Config) { c.MetricsAddr = "127.0.0.1:0" }))
			host, metricsHost := strings.TrimPrefix(a.Base, "http://"), strings.TrimPrefix(a.MetricsBase, "http://")
			script := strings.NewReplacer("localhost:8080", host, "localhost:9090", metricsHost).Replace(script)
			cmd := exec.Command("bash", "-c", prelude+script)
			cmd.Dir = t.TempDir()
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s (%d blocks) failed: %v\n%s", doc, blocks, err, out)
			}
			t.Logf("%s: %d blocks ran, %d bytes of answers", doc, blocks, len(out))
		})
	}
	if ran < 2 {
		t.Fatalf("walked %d documents; the README and docs/api.md have walkthroughs", ran)
	}
}
