package outbound

import (
	"math/rand/v2"
	"time"
)

// Jittered is d give or take 20 %: a receiver that comes back is not hit by every
// delivery's retry at once (webhooks, back-channel logout).
func Jittered(d time.Duration) time.Duration {
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
}

// Truncate is at most n bytes of s: what a delivery keeps of a receiver's answer.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
