package dpop_test

import (
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/dpop"
)

// maxRate is the most proofs a second the load tests send: more than one 2-core instance
// verifies (25k ES256 or EdDSA proofs a second, docs/operations.md).
const maxRate = 40_000

// tick is how far the fake clock moves between rounds of proofs.
const tick = 100 * time.Millisecond

// load is clients each sending perTick proofs a tick, each with its clock off by skew(k)
// seconds; every one is spent through the checker and must be taken.
type load struct {
	keys    []string
	perTick int
	skew    func(k int) int64
	n       int // proofs sent so far; proof i is jti strconv(i) by key i%len(keys)
	start   time.Time
	refused int
	first   time.Duration // when the first was refused
	out     []uint64      // a bit for each proof refused: its second sending is its first use
}

func newLoad(name string, clients, perSecond int, start time.Time, skew func(k int) int64) *load {
	l := &load{perTick: perSecond / int(time.Second/tick), skew: skew, start: start, first: -1}
	for k := range clients {
		l.keys = append(l.keys, name+"-"+strconv.Itoa(k))
	}
	return l
}

// iat is what proof i says: the tick it was sent in, by its client's clock.
func (l *load) iat(i int) int64 {
	at := l.start.Add(time.Duration(i/l.perTick) * tick)
	return at.Unix() + l.skew(i%len(l.keys))
}

func (l *load) send(c *dpop.Checker, now time.Time) {
	jkts, jtis, iats, taken := make([]string, l.perTick), make([]string, l.perTick), make([]int64, l.perTick), make([]bool, l.perTick)
	for j := range l.perTick {
		i := l.n + j
		jkts[j], jtis[j], iats[j] = l.keys[i%len(l.keys)], strconv.Itoa(i), l.iat(i)
	}
	dpop.SpendAll(c, jkts, jtis, iats, taken)
	for j, ok := range taken {
		i := l.n + j
		if i/64 >= len(l.out) {
			l.out = append(l.out, 0)
		}
		if !ok {
			l.out[i/64] |= 1 << (i % 64)
			if l.refused == 0 {
				l.first = now.Sub(l.start)
			}
			l.refused++
		}
	}
	l.n += l.perTick
}

// replays spends again proofs sent between ago-1s and ago before the last (still within
// the window by every sender's clock): each must be refused.
func (l *load) replays(t *testing.T, c *dpop.Checker, ago time.Duration, n int) {
	t.Helper()
	back := int(ago/tick) * l.perTick
	for j := range n {
		i := l.n - back - j*7
		if i < 0 {
			return
		}
		if l.out[i/64]&(1<<(i%64)) != 0 {
			continue
		}
		if dpop.Spend(c, l.keys[i%len(l.keys)], strconv.Itoa(i), l.iat(i)) {
			t.Fatalf("proof %d replayed %v later was taken", i, ago)
		}
	}
}

// Five minutes at the most proofs one instance can verify, from many clients whose
// clocks are off by up to 25 s either way: no fresh proof is refused, no replay taken.
// (One minute with -short; CI runs the five.)
func TestFiveMinutesAtTheMaximumRate(t *testing.T) {
	clk := clock.NewFake(now)
	c := newChecker(t, clk, dpop.Memory)
	skews := []int64{-25, -3, -2, -1, 0, 0, 1, 2, 3, 25}
	l := newLoad("client", 400, maxRate, clk.Now(), func(k int) int64 { return skews[k%len(skews)] })
	// A few real clients alongside, through Verify: signature, claims, nonce and all.
	real := realClients(t, c, clk, 3)
	seconds := 300
	if testing.Short() {
		seconds = 60
	}
	for range seconds {
		for range int(time.Second / tick) {
			l.send(c, clk.Now())
			clk.Advance(tick)
		}
		l.replays(t, c, 2*time.Second, 20)
		l.replays(t, c, 4*time.Second, 20) // before the window's lower end: skews ≥ -25 s
		real.round(t)
	}
	if l.refused > 0 || real.refused > 0 {
		t.Fatalf("%d of %d fresh proofs refused, the first after %v; %d signed ones, the first after %v", l.refused, l.n, l.first, real.refused, real.first)
	}
}

// realClients sign their proofs and go through Verify.
type clients struct {
	c       *dpop.Checker
	clk     *clock.Fake
	holders []*holder
	last    []string
	refused int
	first   time.Duration
}

func realClients(t *testing.T, c *dpop.Checker, clk *clock.Fake, n int) *clients {
	out := &clients{c: c, clk: clk}
	for range n {
		out.holders = append(out.holders, newHolder(t, jose.EdDSA))
	}
	return out
}

// round sends one fresh proof from each client, counting those refused, and replays the
// last ones taken, all refused.
func (r *clients) round(t *testing.T) {
	t.Helper()
	req := dpop.Request{Method: "GET", URL: htu, AccessToken: token}
	for _, p := range r.last {
		if _, err := r.c.Verify(p, req); err == nil {
			t.Fatal("a signed proof was taken twice")
		}
	}
	r.last = r.last[:0]
	for _, h := range r.holders {
		p := h.proof(t, map[string]any{"htm": "GET", "htu": htu, "iat": r.clk.Now().Unix(), "ath": ath(token), "nonce": r.c.Nonce()}, nil)
		if _, err := r.c.Verify(p, req); err != nil {
			if r.refused == 0 {
				r.first = r.clk.Now().Sub(now)
				t.Logf("a fresh signed proof after %v: %v", r.first, err)
			}
			r.refused++
			continue
		}
		r.last = append(r.last, p)
	}
}

// One key sending far more proofs than any client does is refused once it holds its share
// of the memory; every other client, sending at half the maximum rate, is served
// throughout, and the flooding key is served again once its proofs age out.
func TestAFloodingKeyIsRefusedAlone(t *testing.T) {
	clk := clock.NewFake(now)
	c := newChecker(t, clk, dpop.Memory)
	others := newLoad("client", 200, maxRate/2, clk.Now(), func(k int) int64 { return int64(k%7) - 3 })
	// Its clock 25 s ahead, so each of its proofs is remembered the longest.
	flood := newLoad("flood", 1, 2*maxRate+maxRate/2, clk.Now(), func(int) int64 { return 25 })
	real := realClients(t, c, clk, 3)
	for range 45 {
		for range int(time.Second / tick) {
			others.send(c, clk.Now())
			flood.send(c, clk.Now())
			clk.Advance(tick)
		}
		others.replays(t, c, 2*time.Second, 20)
		flood.replays(t, c, 2*time.Second, 20)
		real.round(t)
	}
	if others.refused > 0 || real.refused > 0 {
		t.Fatalf("%d of %d proofs of other clients refused during the flood, the first after %v; %d signed ones, the first after %v",
			others.refused, others.n, others.first, real.refused, real.first)
	}
	if flood.refused == 0 {
		t.Fatalf("the flooding key had all its %d proofs taken", flood.n)
	}
	t.Logf("the flooding key: %d of %d refused, the first after %v", flood.refused, flood.n, flood.first)
	clk.Advance(dpop.Window + 30*time.Second) // its proofs aged out
	flood.refused, flood.perTick = 0, 1000
	flood.start, flood.n, flood.out = clk.Now(), 0, nil
	flood.send(c, clk.Now())
	if flood.refused > 0 {
		t.Fatalf("the flooding key is still refused after its proofs aged out: %d", flood.refused)
	}
}

// A warm proof's cost with the memory as it is at the maximum rate (1.2 million proofs of
// 400 clients remembered), checked on every core at once: the memory's lock is shared.
func BenchmarkVerifyUnderLoad(b *testing.B) {
	for _, alg := range []jose.SignatureAlgorithm{jose.ES256, jose.EdDSA} {
		b.Run(string(alg), func(b *testing.B) {
			clk := clock.NewFake(now)
			c, err := dpop.NewChecker(clk, dpop.Memory)
			if err != nil {
				b.Fatal(err)
			}
			l := newLoad("client", 400, maxRate, clk.Now(), func(int) int64 { return 0 })
			for range int(dpop.Window/tick) / 2 {
				l.send(c, clk.Now())
				clk.Advance(tick)
			}
			for range int(dpop.Window/tick) / 2 { // iat now: remembered until the end
				l.send(c, clk.Now())
			}
			if l.refused > 0 {
				b.Fatalf("%d refused", l.refused)
			}
			h := newHolder(b, alg)
			proofs := make([]string, b.N+1)
			for i := range proofs {
				proofs[i] = h.proof(b, map[string]any{"jti": "u" + strconv.Itoa(i), "htm": "GET", "htu": htu, "iat": clk.Now().Unix(), "ath": ath(token), "nonce": c.Nonce()}, nil)
			}
			req := dpop.Request{Method: "GET", URL: htu, AccessToken: token}
			if _, err := c.Verify(proofs[b.N], req); err != nil {
				b.Fatal(err)
			}
			var next atomic.Int64
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := c.Verify(proofs[next.Add(1)-1], req); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// The memory alone: one proof spent by one of 400 clients, on every core at once, with
// 1.2 million remembered.
func BenchmarkSpend(b *testing.B) {
	clk := clock.NewFake(now)
	c, err := dpop.NewChecker(clk, dpop.Memory)
	if err != nil {
		b.Fatal(err)
	}
	l := newLoad("client", 400, maxRate, clk.Now(), func(int) int64 { return 0 })
	for range int(dpop.Window / tick) {
		l.send(c, clk.Now())
	}
	jtis := make([]string, b.N)
	for i := range jtis {
		jtis[i] = "s" + strconv.Itoa(i)
	}
	iat := clk.Now().Unix()
	var next atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := next.Add(1) - 1
			if !dpop.Spend(c, l.keys[i%400], jtis[i], iat) {
				b.Error("refused")
				return
			}
		}
	})
}
