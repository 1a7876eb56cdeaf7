package usage

import (
	"cmp"
	"context"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	entsql "entgo.io/ent/dialect/sql"
	"go.uber.org/fx"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/usagecount"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/database"
)

// FlushEvery is how often counts are written: what a crash can lose.
const FlushEvery = 5 * time.Second

// maxPending bounds the credentials counted between flushes. Past it, further ones are
// counted under their project and kind with no credential id: a flood of distinct
// credentials costs a bounded map, never memory without end.
const maxPending = 100_000

const (
	minute = "minute"
	day    = "day"
)

type key struct {
	project, kind, credential, outcome string
	bucket                             int64 // unix seconds of the minute
}

// Recorder counts verifications in memory and writes them in one transaction every
// FlushEvery, and once more at shutdown (after the HTTP server drained: fx stops in
// reverse order). A failed write keeps the counts for the next one.
type Recorder struct {
	ent   *ent.Client
	clock clock.Clock

	mu      sync.Mutex
	pending map[key]int64
	// flushing is held for a whole flush: a flush returns only after every count taken
	// before it is written, including those another flush took first (the periodic one,
	// when a test or shutdown flushes too).
	flushing sync.Mutex
}

func newRecorder(lc fx.Lifecycle, c *ent.Client, clk clock.Clock, log *slog.Logger) *Recorder {
	r := &Recorder{ent: c, clock: clk, pending: map[key]int64{}}
	database.FlushEvery(lc, log, "usage counts", FlushEvery, r.Flush)
	return r
}

// Count implements platform/usage.Counter: a map increment under a mutex. Verifications of
// no project (an unknown token at ai/me) are not counted: no project could see them.
func (r *Recorder) Count(projectID, kind, credentialID, outcome string) {
	if projectID == "" {
		return
	}
	k := key{project: projectID, kind: kind, credential: credentialID, outcome: outcome, bucket: r.clock.Now().Truncate(time.Minute).Unix()}
	r.mu.Lock()
	if _, seen := r.pending[k]; !seen && len(r.pending) >= maxPending {
		k.credential = ""
	}
	r.pending[k]++
	r.mu.Unlock()
}

// Flush writes what was counted since the last flush.
func (r *Recorder) Flush(ctx context.Context) error {
	r.flushing.Lock()
	defer r.flushing.Unlock()
	r.mu.Lock()
	batch := r.pending
	r.pending = make(map[key]int64, len(batch))
	r.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	// In the order of the counts' unique index: the rows are then read and written page
	// after page, not in a random order that misses SQLite's page cache on nearly every one.
	keys := slices.SortedFunc(maps.Keys(batch), func(a, b key) int {
		return cmp.Or(strings.Compare(a.project, b.project), strings.Compare(a.kind, b.kind),
			strings.Compare(a.credential, b.credential), cmp.Compare(a.bucket, b.bucket), strings.Compare(a.outcome, b.outcome))
	})
	// Many rows a statement: one upsert a row cost as much as every lookup of the same
	// seconds, with a large population of credentials each counted every few seconds.
	err := database.WithTx(ctx, r.ent, func(tx *ent.Tx) error {
		for rows := range slices.Chunk(keys, upsertRows) {
			creates := make([]*ent.UsageCountCreate, len(rows))
			for i, k := range rows {
				creates[i] = tx.UsageCount.Create().SetProjectID(k.project).SetKind(k.kind).SetCredentialID(k.credential).
					SetResolution(minute).SetBucket(time.Unix(k.bucket, 0).UTC()).SetOutcome(k.outcome).SetCount(batch[k])
			}
			if err := tx.UsageCount.CreateBulk(creates...).OnConflict(entsql.ConflictColumns(conflict...), addCounts).Exec(ctx); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		r.mu.Lock()
		for k, n := range batch {
			r.pending[k] += n
		}
		r.mu.Unlock()
	}
	return err
}

// upsertRows is how many counts one statement writes: nine values a row, well under
// SQLite's 32,766 parameters a statement.
const upsertRows = 500

// addCounts adds a row's count to the stored one: count = usage_counts.count + excluded.count.
var addCounts = entsql.ResolveWith(func(u *entsql.UpdateSet) {
	u.Set(usagecount.FieldCount, entsql.Expr(u.Table().C(usagecount.FieldCount)+" + "+entsql.Dialect(u.Dialect()).Table("excluded").C(usagecount.FieldCount)))
})

// conflict is the unique key of a count row.
var conflict = []string{usagecount.FieldProjectID, usagecount.FieldKind, usagecount.FieldCredentialID,
	usagecount.FieldResolution, usagecount.FieldBucket, usagecount.FieldOutcome}
