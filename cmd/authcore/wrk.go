package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// wrkLoad drives addr with wrk (github.com/wg/wrk, on PATH) instead of the in-process
// generator: a second opinion from a generator in another process, written in C, with
// its own HTTP client. Requests that change per call (Next, NextBody) are not supported.
func wrkLoad(ctx context.Context, addr string, req request, conns int, d time.Duration) (result, error) {
	if req.Next != nil || req.NextBody != nil {
		return result{}, fmt.Errorf("a request that changes per call cannot be sent by wrk")
	}
	script, err := os.CreateTemp("", "authcore-wrk-*.lua")
	if err != nil {
		return result{}, err
	}
	defer os.Remove(script.Name())
	if _, err := script.WriteString(wrkScript(req)); err != nil {
		return result{}, err
	}
	if err := script.Close(); err != nil {
		return result{}, err
	}
	secs := max(1, int(d.Round(time.Second)/time.Second))
	out, err := exec.CommandContext(ctx, "wrk", "-t2", "-c"+strconv.Itoa(conns), "-d"+strconv.Itoa(secs)+"s", "--latency",
		"-s", script.Name(), "http://"+addr+req.Path).CombinedOutput()
	if err != nil {
		return result{}, fmt.Errorf("wrk: %v\n%s", err, out)
	}
	return parseWrk(string(out), req.Expect)
}

// wrkScript sets the method, headers and body; every byte of the body is a decimal
// escape, so nothing in it can end the Lua string.
func wrkScript(req request) string {
	var b strings.Builder
	fmt.Fprintf(&b, "wrk.method = %q\n", req.Method)
	for k, v := range req.Header {
		fmt.Fprintf(&b, "wrk.headers[%q] = %q\n", k, v)
	}
	if len(req.Body) > 0 {
		b.WriteString(`wrk.headers["Content-Type"] = wrk.headers["Content-Type"] or "application/json"` + "\n")
		b.WriteString(`wrk.body = "`)
		for _, c := range req.Body {
			fmt.Fprintf(&b, "\\%d", c)
		}
		b.WriteString("\"\n")
	}
	return b.String()
}

var (
	wrkTotal     = regexp.MustCompile(`(\d+) requests in ([0-9.]+)(us|ms|s|m)`)
	wrkPercentle = regexp.MustCompile(`(?m)^\s+(50|99)%\s+([0-9.]+)(us|ms|s)`)
	wrkNon2xx    = regexp.MustCompile(`Non-2xx or 3xx responses: (\d+)`)
	wrkSocket    = regexp.MustCompile(`Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)`)
)

// parseWrk reads wrk's report: requests, elapsed time, p50 and p99 (--latency), and as
// errors the answers that were not 2xx/3xx (every scenario expects a 2xx) and socket
// errors.
func parseWrk(out string, expect int) (result, error) {
	var r result
	m := wrkTotal.FindStringSubmatch(out)
	if m == nil {
		return r, fmt.Errorf("wrk printed no total:\n%s", out)
	}
	r.Requests, _ = strconv.Atoi(m[1])
	r.Elapsed = duration(m[2], m[3])
	for _, p := range wrkPercentle.FindAllStringSubmatch(out, -1) {
		if p[1] == "50" {
			r.P50 = duration(p[2], p[3])
		} else {
			r.P99 = duration(p[2], p[3])
		}
	}
	if expect < 200 || expect > 299 {
		return r, fmt.Errorf("wrk counts only non-2xx/3xx answers; this scenario expects %d", expect)
	}
	if m := wrkNon2xx.FindStringSubmatch(out); m != nil {
		r.Errors, _ = strconv.Atoi(m[1])
	}
	if m := wrkSocket.FindStringSubmatch(out); m != nil {
		for _, n := range m[1:] {
			v, _ := strconv.Atoi(n)
			r.Errors += v
		}
	}
	return r, nil
}

func duration(v, unit string) time.Duration {
	f, _ := strconv.ParseFloat(v, 64)
	scale := map[string]time.Duration{"us": time.Microsecond, "ms": time.Millisecond, "s": time.Second, "m": time.Minute}[unit]
	return time.Duration(f * float64(scale))
}
