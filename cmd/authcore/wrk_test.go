package main

import (
	"os/exec"
	"strings"
	"testing"
	"time"
)

// wrk 4.1's report, as `wrk --latency` prints it.
const wrkReport = `Running 4s test @ http://127.0.0.1:41234/healthz
  2 threads and 64 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     1.52ms    1.21ms  31.10ms   89.12%
    Req/Sec    21.10k     1.92k   25.31k    70.00%
  Latency Distribution
     50%    1.26ms
     75%    1.80ms
     90%    2.61ms
     99%    7.68ms
  168201 requests in 4.00s, 21.02MB read
  Non-2xx or 3xx responses: 3
  Socket errors: connect 0, read 1, write 0, timeout 2
Requests/sec:  42047.81
Transfer/sec:      5.25MB
`

func TestParseWrk(t *testing.T) {
	r, err := parseWrk(wrkReport, 200)
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests != 168201 || r.Elapsed != 4*time.Second || r.P50 != 1260*time.Microsecond || r.P99 != 7680*time.Microsecond || r.Errors != 6 {
		t.Fatalf("%+v", r)
	}
	if _, err := parseWrk("wrk: connection refused", 200); err == nil {
		t.Fatal("a report without a total parsed")
	}
	if _, err := parseWrk(wrkReport, 401); err == nil {
		t.Fatal("wrk cannot tell a 401 scenario's errors, yet it was accepted")
	}
}

// The script names the method and headers, escapes every body byte (a "]]", a quote, a
// NUL cannot end the Lua string), and a request that changes per call is refused.
func TestWrkScript(t *testing.T) {
	s := wrkScript(request{Method: "POST", Path: "/x", Header: map[string]string{"Authorization": `Bearer "q"`}, Body: []byte("{\"a\":\"]]\\n\x00\"}"), Expect: 200})
	for _, want := range []string{`wrk.method = "POST"`, `wrk.headers["Authorization"] = "Bearer \"q\""`, `\123\34\97\34`, `\0`} {
		if !strings.Contains(s, want) {
			t.Errorf("script lacks %s:\n%s", want, s)
		}
	}
	if _, err := exec.LookPath("wrk"); err != nil {
		return
	}
	if _, err := wrkLoad(t.Context(), "127.0.0.1:1", request{Method: "GET", Path: "/", Next: func(int, int) (string, map[string]string) { return "", nil }}, 1, time.Second); err == nil {
		t.Error("a per-call request was handed to wrk")
	}
}
