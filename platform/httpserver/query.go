package httpserver

import (
	"math"
	"strconv"
)

// QueryLimit reads a numeric ?limit=: absent or anything non-finite (including text that
// is not a number) is def; a fraction is truncated; the result is clamped to 1..max.
func QueryLimit(raw string, def, max int) int {
	if raw == "" {
		return def
	}
	f, err := strconv.ParseFloat(raw, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return def
	}
	f = math.Trunc(f)
	switch {
	case f < 1:
		return 1
	case f > float64(max):
		return max
	}
	return int(f)
}
