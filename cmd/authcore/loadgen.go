package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
)

// request is one request a load scenario sends over and over.
type request struct {
	Method string
	Path   string
	Header map[string]string
	Body   []byte
	// Next, when set, returns a different request each time (e.g. a token from a large set).
	Next func(worker, i int) (path string, header map[string]string)
	// NextBody, when set, returns a different body each time (e.g. a single-use code).
	NextBody func(worker, i int) []byte
	// Expect is the status every answer must have; anything else counts as an error.
	Expect int
}

// result is what one scenario measured.
type result struct {
	Name     string
	Requests int
	Errors   int
	Elapsed  time.Duration
	P50, P99 time.Duration
	// Note is printed under the row (store queries during a cold run).
	Note string
}

func (r result) RPS() float64 { return float64(r.Requests) / r.Elapsed.Seconds() }

// load drives addr with `conns` keep-alive connections, one goroutine each, for d. It is a
// closed-loop generator (each connection sends its next request when the last answer
// arrives), like wrk; it runs in the same process as the server, so both share the two
// cores the way a co-located generator would, and ratios between scenarios stay fair.
func load(ctx context.Context, addr string, req request, conns int, d time.Duration) result {
	client := &fasthttp.HostClient{Addr: addr, MaxConns: conns, ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		lats  []time.Duration
		errs  int
		total int
	)
	deadline := time.Now().Add(d)
	start := time.Now()
	for w := 0; w < conns; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rq, rs := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(rq)
			defer fasthttp.ReleaseResponse(rs)
			local := make([]time.Duration, 0, 1<<14)
			bad := 0
			for i := 0; time.Now().Before(deadline) && ctx.Err() == nil; i++ {
				path, header := req.Path, req.Header
				if req.Next != nil {
					path, header = req.Next(w, i)
				}
				rq.Reset()
				rq.Header.SetMethod(req.Method)
				rq.SetRequestURI("http://" + addr + path)
				for k, v := range header {
					rq.Header.Set(k, v)
				}
				body := req.Body
				if req.NextBody != nil {
					body = req.NextBody(w, i)
				}
				if body != nil {
					if _, set := header["Content-Type"]; !set {
						rq.Header.SetContentType("application/json")
					}
					rq.SetBody(body)
				}
				t0 := time.Now()
				err := client.Do(rq, rs)
				local = append(local, time.Since(t0))
				if err != nil || rs.StatusCode() != req.Expect {
					bad++
				}
			}
			mu.Lock()
			lats = append(lats, local...)
			errs += bad
			total += len(local)
			mu.Unlock()
		}(w)
	}
	wg.Wait()
	elapsed := time.Since(start)
	sort.Slice(lats, func(i, j int) bool { return lats[i] < lats[j] })
	pct := func(p float64) time.Duration {
		if len(lats) == 0 {
			return 0
		}
		return lats[int(p*float64(len(lats)-1))]
	}
	return result{Requests: total, Errors: errs, Elapsed: elapsed, P50: pct(0.50), P99: pct(0.99)}
}

// printTable writes the results with each scenario's ratio to the baseline.
func printTable(w io.Writer, baseline result, rows []result) {
	fmt.Fprintf(w, "%-44s %12s %10s %10s %8s %8s\n", "scenario", "requests/s", "p50", "p99", "errors", "ratio")
	for _, r := range rows {
		if r.Elapsed == 0 { // skipped
			fmt.Fprintf(w, "%-44s %s\n", r.Name, r.Note)
			continue
		}
		ratio := r.RPS() / baseline.RPS()
		fmt.Fprintf(w, "%-44s %12.0f %10s %10s %8d %8.2f\n", r.Name, r.RPS(), latency(r.P50), latency(r.P99), r.Errors, ratio)
		if r.Note != "" {
			fmt.Fprintf(w, "  └ %s\n", r.Note)
		}
	}
}

// latency prints a percentile, or "-" where the generator reported none (pgbench).
func latency(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return d.Round(time.Microsecond).String()
}
