// Package rollover holds what every credential's roll shares (SPEC §12): how long the
// secret a roll replaces keeps working. The credentials' owners do the roll itself.
package rollover

import (
	"bytes"
	"fmt"
	"math"
	"time"

	"github.com/authcore/authcore/platform/jsonbody"
)

// Bounds of graceHours.
const (
	DefaultGraceHours = 24
	MaxGraceHours     = 168
)

// ErrGrace is the one way graceHours can be wrong.
var ErrGrace = fmt.Errorf("graceHours must be a number from 0 to %d", MaxGraceHours)

// Grace reads a roll body's graceHours: absent (or no body at all) is the default, null or
// anything but a number in 0..168 is ErrGrace. A body that is not a JSON object is
// notObject (with the default grace), which the caller answers its own way.
func Grace(body []byte) (grace time.Duration, notObject bool, err error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return DefaultGraceHours * time.Hour, false, nil
	}
	o, ok := jsonbody.Parse(body)
	if !ok {
		return DefaultGraceHours * time.Hour, true, nil
	}
	switch h, st := o.Number("graceHours"); {
	case st == jsonbody.Absent:
		return DefaultGraceHours * time.Hour, false, nil
	case st != jsonbody.OK || h < 0 || h > MaxGraceHours:
		return 0, false, ErrGrace
	default:
		return time.Duration(math.Round(h * float64(time.Hour))), false, nil
	}
}

// Until is when the replaced secret stops working: now+grace to the second, never past the
// credential's own expiry (nil: never expires). ok is false for a grace of zero: the
// replaced secret stops at once and nothing needs keeping.
func Until(now time.Time, grace time.Duration, expires *time.Time) (until time.Time, ok bool) {
	until = now.Add(grace).Truncate(time.Second)
	if expires != nil && expires.Before(until) {
		until = *expires
	}
	return until, grace > 0 && until.After(now)
}
