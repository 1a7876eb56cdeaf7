package database

import (
	"io"
	"log/slog"
	"strconv"
	"testing"
	"time"
)

// fenced is a router with a replica (never dialled: these tests drive the probe's steps by
// hand) that has heard its listener start and found the replica well.
func fenced(t *testing.T) *Reads {
	t.Helper()
	r, err := newReads(&DB{}, "", time.Second, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	r.replica = &Handle{}
	r.FenceAll()
	r.resolve(r.pendingFences(), 100, time.Now())
	r.replayed(100, time.Now())
	r.setRefusal("")
	if why := r.refuse("t", "k"); why != "" {
		t.Fatalf("a caught-up replica is refused: %s", why)
	}
	return r
}

// The fence of a revoked key holds until the replica passes the primary position read
// after the fence was set, and only for that key.
func TestFenceLiftsPastThePositionReadAfterIt(t *testing.T) {
	r := fenced(t)
	r.Fence("t", "k")
	if r.refuse("t", "k") != "fence" || r.refuse("t", "other") != "" || r.refuse("u", "k") != "" {
		t.Fatal("the fence is not on exactly that key")
	}
	waiting := r.pendingFences()
	r.resolve(waiting, 200, time.Now())
	r.replayed(199, time.Now())
	if r.refuse("t", "k") != "fence" {
		t.Fatal("lifted before the replica reached the position")
	}
	r.replayed(200, time.Now())
	if r.refuse("t", "k") != "" {
		t.Fatal("still fenced past the position")
	}
	if len(r.fences) != 0 {
		t.Fatalf("a lifted fence is kept: %v", r.fences)
	}
}

// A key fenced again while a probe read the primary is not resolved by that read: the
// position may precede the second change's commit.
func TestAFenceSetDuringAProbeWaitsForTheNext(t *testing.T) {
	r := fenced(t)
	r.Fence("t", "k")
	waiting := r.pendingFences() // the probe snapshots, then queries the primary…
	r.Fence("t", "k")            // …while a second change to k is heard
	r.resolve(waiting, 300, time.Now())
	r.replayed(10_000, time.Now())
	if r.refuse("t", "k") != "fence" {
		t.Fatal("the second fence was resolved with a position read before it")
	}
	r.resolve(r.pendingFences(), 400, time.Now())
	r.replayed(400, time.Now())
	if r.refuse("t", "k") != "" {
		t.Fatal("the next probe did not resolve it")
	}
}

// Until the listener is in place no probe lifts the global fence; after a reconnect it
// holds until the replica passes the position read after it.
func TestGlobalFence(t *testing.T) {
	r, _ := newReads(&DB{}, "", time.Second, slog.New(slog.NewTextHandler(io.Discard, nil)))
	r.replica = &Handle{}
	r.setRefusal("")
	for range 3 {
		r.resolve(r.pendingFences(), 500, time.Now())
		r.replayed(1_000_000, time.Now())
	}
	if r.refuse("t", "k") != "fence" {
		t.Fatal("the replica answered before the listener was in place")
	}
	r.FenceAll()
	r.resolve(r.pendingFences(), 600, time.Now())
	r.replayed(599, time.Now())
	if r.refuse("t", "any") != "fence" {
		t.Fatal("the global fence lifted early")
	}
	r.replayed(600, time.Now())
	if r.refuse("t", "any") != "" {
		t.Fatal("the global fence did not lift")
	}
}

// Too many fences collapse into one on every key, which is as safe.
func TestFencesAreBounded(t *testing.T) {
	r := fenced(t)
	for i := range maxFences + 1 {
		r.Fence("t", strconv.Itoa(i))
	}
	if len(r.fences) > maxFences || r.refuse("t", "never fenced") != "fence" {
		t.Fatalf("%d fences kept; an unfenced key refused: %q", len(r.fences), r.refuse("t", "never fenced"))
	}
}

// Lag is how long ago the primary first had WAL the replica has not replayed; a
// caught-up replica has none, however long ago its last change.
func TestLagIsTimeBehind(t *testing.T) {
	r := fenced(t)
	t0 := time.Now()
	r.resolve(nil, 1000, t0)
	r.resolve(nil, 2000, t0.Add(time.Second))
	r.resolve(nil, 3000, t0.Add(2*time.Second))
	if lag := r.replayed(1500, t0.Add(3*time.Second)); lag != 2*time.Second {
		t.Fatalf("lag %s, want 2s (the primary passed 1500 at t0+1s)", lag)
	}
	if lag := r.replayed(3000, t0.Add(time.Hour)); lag != 0 {
		t.Fatalf("a caught-up replica lags %s", lag)
	}
}
