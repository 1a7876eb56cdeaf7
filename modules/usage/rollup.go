package usage

import (
	"context"
	"time"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/usagecount"
	"github.com/authcore/authcore/platform/database"
)

// Retention of SPEC §19.
const (
	keepMinutes = 30 * 24 * time.Hour
	keepDays    = 395 * 24 * time.Hour // 13 months
	rollBatch   = 5000
)

// RollUp folds minute counts older than 30 days into day counts, and deletes day counts
// older than 13 months. It returns how many rows it folded and deleted.
func (r *Recorder) RollUp(ctx context.Context) (int, error) {
	now := r.clock.Now()
	cutoff := now.Truncate(24 * time.Hour).Add(-keepMinutes)
	done := 0
	for {
		n, err := r.foldOnce(ctx, cutoff)
		done += n
		if err != nil || n < rollBatch {
			if err != nil {
				return done, err
			}
			break
		}
	}
	gone, err := r.ent.UsageCount.Delete().Where(usagecount.Resolution(day), usagecount.BucketLT(now.Add(-keepDays))).Exec(ctx)
	return done + gone, err
}

// foldOnce moves up to rollBatch minute rows into their day rows, in one transaction.
func (r *Recorder) foldOnce(ctx context.Context, cutoff time.Time) (int, error) {
	n := 0
	err := database.WithTx(ctx, r.ent, func(tx *ent.Tx) error {
		rows, err := tx.UsageCount.Query().Where(usagecount.Resolution(minute), usagecount.BucketLT(cutoff)).Limit(rollBatch).All(ctx)
		if err != nil || len(rows) == 0 {
			return err
		}
		type dk struct {
			project, kind, credential, outcome string
			day                                int64
		}
		days := map[dk]int64{}
		ids := make([]int, 0, len(rows))
		for _, row := range rows {
			days[dk{row.ProjectID, row.Kind, row.CredentialID, row.Outcome, row.Bucket.UTC().Truncate(24 * time.Hour).Unix()}] += row.Count
			ids = append(ids, row.ID)
		}
		for k, c := range days {
			if err := tx.UsageCount.Create().SetProjectID(k.project).SetKind(k.kind).SetCredentialID(k.credential).SetResolution(day).
				SetBucket(time.Unix(k.day, 0).UTC()).SetOutcome(k.outcome).SetCount(c).OnConflictColumns(conflict...).AddCount(c).Exec(ctx); err != nil {
				return err
			}
		}
		n = len(rows)
		_, err = tx.UsageCount.Delete().Where(usagecount.IDIn(ids...)).Exec(ctx)
		return err
	})
	return n, err
}
