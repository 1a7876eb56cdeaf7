// Package usage is how the verifiers of every credential kind meet the usage module (SPEC
// §19): each verification is counted per credential, minute and outcome in memory, and
// written in batches off the request path. Owners of lists (agent tokens, badges) read
// each credential's last 24 hours through Reader.
package usage

import (
	"context"
	"time"
)

// Outcomes of a verification.
const (
	OK          = "ok"
	Denied      = "denied"       // revoked, expired, wrong bucket or scope
	RateLimited = "rate_limited" // refused by the per-client failure budget before it was checked
)

// Counter counts a verification of credential id (of kind, in project). It never blocks
// on the store: counts are written in batches.
type Counter interface {
	Count(projectID, kind, credentialID, outcome string)
}

// Totals are a credential's counts by outcome.
type Totals struct {
	OK          int64 `json:"ok"`
	Denied      int64 `json:"denied"`
	RateLimited int64 `json:"rateLimited"`
}

// Reader reads counts back.
type Reader interface {
	// Since totals the counts of credentials ids of kind in project from since on, by id;
	// ids never counted are absent.
	Since(ctx context.Context, projectID, kind string, ids []string, since time.Time) (map[string]Totals, error)
}

// Day is the window of the usage24h field of list answers.
const Day = 24 * time.Hour

// Discard counts nothing: for verifiers built without the usage module (unit tests).
var Discard Counter = discard{}

type discard struct{}

func (discard) Count(string, string, string, string) {}

// Last24h sets the usage24h totals of a list's items in one read: r may be nil (no usage
// module), which leaves them at zero.
func Last24h[T any](ctx context.Context, r Reader, now time.Time, projectID, kind string, items []T, id func(*T) string, set func(*T, Totals)) error {
	if r == nil || len(items) == 0 {
		return nil
	}
	ids := make([]string, len(items))
	for i := range items {
		ids[i] = id(&items[i])
	}
	got, err := r.Since(ctx, projectID, kind, ids, now.Add(-Day))
	if err != nil {
		return err
	}
	for i := range items {
		set(&items[i], got[ids[i]])
	}
	return nil
}
