package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/authcore/authcore/internal/testkit"
)

// The token endpoint's and ai/me's bench scenarios get the answers they expect: a scenario
// whose requests are all refused measures the refusal (the grant scenarios once did, for a
// whole release, unseen). The figures themselves are not checked here.
func TestBenchScenariosGetTheirAnswers(t *testing.T) {
	if testing.Short() {
		t.Skip("seeds and drives each scenario briefly")
	}
	for only, want := range map[string]int{"/v1/oauth/token (": 2, "ai/me (": 2, "GET /oauth/authorize (": 1} {
		t.Run(only, func(t *testing.T) {
			cfg := testkit.Config("", t.TempDir())
			var out bytes.Buffer
			b := benchCmd{Duration: 200 * time.Millisecond, Warmup: 50 * time.Millisecond, Connections: 4, Only: only, Tokens: 1000}
			if err := b.Run(&cfg, &out); err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			if rows := strings.Count(out.String(), only); rows < want {
				t.Fatalf("%d scenarios ran:\n%s", rows, out.String())
			}
		})
	}
}
