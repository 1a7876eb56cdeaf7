package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// streamReceiver is an https-stream receiver in the bench process (plain HTTP on loopback)
// that verifies each batch's Standard Webhooks signature, as a SIEM's would, and notes when
// each event arrived, by the id of the token its event records.
type streamReceiver struct {
	srv *httptest.Server

	mu      sync.Mutex
	hook    *standardwebhooks.Webhook
	arrived map[string]time.Time // tokenId → first arrival
	events  int
	bad     int
}

func newStreamReceiver() *streamReceiver {
	r := &streamReceiver{arrived: map[string]time.Time{}}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		now := time.Now()
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.hook == nil || r.hook.Verify(body, req.Header) != nil {
			r.bad++
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		var batch struct {
			Events []struct {
				Metadata struct {
					TokenID string `json:"tokenId"`
				} `json:"metadata"`
			} `json:"events"`
		}
		if json.Unmarshal(body, &batch) != nil {
			r.bad++
			http.Error(w, "not a batch", http.StatusBadRequest)
			return
		}
		for _, e := range batch.Events {
			r.events++
			if _, ok := r.arrived[e.Metadata.TokenID]; !ok && e.Metadata.TokenID != "" {
				r.arrived[e.Metadata.TokenID] = now
			}
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	return r
}

// streamProject is a fresh project whose trail streams to r; the answer is its admin and id.
func streamProject(env *benchEnv, r *streamReceiver) (benchSession, string, error) {
	admin, project, err := benchProject(env)
	if err != nil {
		return benchSession{}, "", err
	}
	var created struct{ Secret string }
	body, _ := json.Marshal(map[string]any{"type": "https", "url": r.srv.URL + "/audit", "filter": map[string]any{"actions": []string{"ai_token.*"}}})
	if err := benchCall(env, http.MethodPost, "/v1/projects/"+project+"/audit-streams", admin.AccessToken, body, http.StatusCreated, &created); err != nil {
		return benchSession{}, "", err
	}
	hook, err := standardwebhooks.NewWebhook(created.Secret)
	if err != nil {
		return benchSession{}, "", err
	}
	r.mu.Lock()
	r.hook = hook
	r.mu.Unlock()
	return admin, project, nil
}

func streamScenarios() []scenario {
	mint := func(stream bool) func(ctx context.Context, env *benchEnv) (request, error) {
		return func(ctx context.Context, env *benchEnv) (request, error) {
			var admin benchSession
			var project string
			var err error
			if stream {
				admin, project, err = streamProject(env, newStreamReceiver())
			} else {
				admin, project, err = benchProject(env)
			}
			if err != nil {
				return request{}, err
			}
			return request{Method: http.MethodPost, Path: "/v1/auth-core/projects/" + project + "/ai/agents",
				Header: map[string]string{"Authorization": "Bearer " + admin.AccessToken, "Content-Type": "application/json"},
				Body:   []byte(`{"ttlHours":1}`), Expect: http.StatusOK}, nil
		}
	}
	return []scenario{
		// What a stream costs the API path: the same mint without and with one. A mint
		// writes its audit record either way; a stream adds no write to it.
		{name: "POST ai/agents (mint, 4 conns), no audit stream", conns: 4, setup: mint(false)},
		{name: "POST ai/agents (mint, 4 conns), an https stream", conns: 4, setup: mint(true)},
		{name: "audit stream https: commit → receipt", custom: streamLatency},
	}
}

// streamLatency mints tokens from 4 connections into a project with an https stream for d,
// and measures, per event, from the mint's answer (sent after its commit) to the event's
// arrival at the receiver: the p99 SPEC §28 bounds to 2 s. requests/s is events delivered.
func streamLatency(ctx context.Context, env *benchEnv, d time.Duration, _ int) (result, error) {
	r := newStreamReceiver()
	defer r.srv.Close()
	admin, project, err := streamProject(env, r)
	if err != nil {
		return result{}, err
	}
	var (
		mu        sync.Mutex
		committed = map[string]time.Time{}
		errs      int
		wg        sync.WaitGroup
	)
	deadline := time.Now().Add(d)
	start := time.Now()
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) && ctx.Err() == nil {
				var minted struct{ Agent struct{ ID string } }
				err := benchCall(env, http.MethodPost, "/v1/auth-core/projects/"+project+"/ai/agents", admin.AccessToken, []byte(`{"ttlHours":1}`), http.StatusOK, &minted)
				at := time.Now()
				mu.Lock()
				if err != nil {
					errs++
				} else {
					committed[minted.Agent.ID] = at
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	// Everything minted must arrive; wait for the tail, bounded.
	for wait := time.Now().Add(30 * time.Second); time.Now().Before(wait); time.Sleep(20 * time.Millisecond) {
		r.mu.Lock()
		n := len(r.arrived)
		r.mu.Unlock()
		if n >= len(committed) {
			break
		}
	}
	elapsed := time.Since(start)
	r.mu.Lock()
	defer r.mu.Unlock()
	lats := make([]time.Duration, 0, len(committed))
	lost := 0
	for id, at := range committed {
		got, ok := r.arrived[id]
		if !ok {
			lost++
			continue
		}
		lats = append(lats, max(got.Sub(at), 0))
	}
	res := result{Name: "audit stream https: commit → receipt (4 conns minting)", Requests: r.events, Errors: errs + lost + r.bad, Elapsed: elapsed}
	if len(lats) > 0 {
		slices.Sort(lats)
		res.P50, res.P99 = lats[len(lats)/2], lats[len(lats)*99/100]
	}
	res.Note = fmt.Sprintf("requests/s = events delivered to the receiver (signatures verified); p50/p99 from the mint's answer to the event's arrival; %d minted, %d not delivered", len(committed), lost)
	return res, nil
}
