// Package clock supplies the time to every module, so tests can move it (token expiry)
// without sleeping. It must hold nothing else.
package clock

import (
	"sync"
	"time"

	"go.uber.org/fx"
)

// Clock tells the time, in UTC.
type Clock interface{ Now() time.Time }

type system struct{}

func (system) Now() time.Time { return time.Now().UTC() }

// System is the real clock.
var System Clock = system{}

// Module provides the real clock; tests replace it with fx.Decorate.
var Module = fx.Module("clock", fx.Supply(fx.Annotate(System, fx.As(new(Clock)))))

// Fake is a clock that only moves when told to. Safe for concurrent use.
type Fake struct {
	mu sync.Mutex
	t  time.Time
}

// NewFake returns a fake clock set to t.
func NewFake(t time.Time) *Fake { return &Fake{t: t.UTC()} }

func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.t
}

// Advance moves the clock forward by d.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	f.t = f.t.Add(d)
	f.mu.Unlock()
}
