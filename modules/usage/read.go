package usage

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/predicate"
	"github.com/authcore/authcore/ent/usagecount"
	"github.com/authcore/authcore/platform/usage"
)

// Since implements platform/usage.Reader from the written counts (what the last
// FlushEvery counted is not in them yet).
func (r *Recorder) Since(ctx context.Context, projectID, kind string, ids []string, since time.Time) (map[string]usage.Totals, error) {
	out := map[string]usage.Totals{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := r.ent.UsageCount.Query().Where(usagecount.ProjectID(projectID), usagecount.Kind(kind), usagecount.CredentialIDIn(ids...),
		usagecount.BucketGTE(since.Truncate(time.Minute))).All(ctx)
	if err != nil {
		return nil, err
	}
	for _, row := range rows {
		t := out[row.CredentialID]
		add(&t, row.Outcome, row.Count)
		out[row.CredentialID] = t
	}
	return out, nil
}

func add(t *usage.Totals, outcome string, n int64) {
	switch outcome {
	case usage.OK:
		t.OK += n
	case usage.Denied:
		t.Denied += n
	case usage.RateLimited:
		t.RateLimited += n
	}
}

// Point is one bucket of a series.
type Point struct {
	T     time.Time `json:"t"`
	Count int64     `json:"count"`
}

// Series is the counts of one kind and outcome over time, oldest first; empty buckets
// are left out.
type Series struct {
	Kind    string  `json:"kind"`
	Outcome string  `json:"outcome"`
	Points  []Point `json:"points"`
}

// Query is what GET /v1/projects/{id}/usage asks.
type Query struct {
	ProjectID, Kind, CredentialID string
	From, To                      time.Time
	Step                          time.Duration
}

// series reads counts of q's range into buckets of q.Step: minute rows where they are
// kept, day rows (older than 30 days) at the start of their day.
func (r *Recorder) series(ctx context.Context, q Query) ([]Series, usage.Totals, error) {
	where := []predicate.UsageCount{usagecount.ProjectID(q.ProjectID), usagecount.BucketGTE(q.From), usagecount.BucketLT(q.To)}
	if q.Kind != "" {
		where = append(where, usagecount.Kind(q.Kind))
	}
	if q.CredentialID != "" {
		where = append(where, usagecount.CredentialID(q.CredentialID))
	}
	rows, err := r.ent.UsageCount.Query().Where(where...).All(ctx)
	if err != nil {
		return nil, usage.Totals{}, err
	}
	return bucketed(rows, q), totals(rows), nil
}

func bucketed(rows []*ent.UsageCount, q Query) []Series {
	type sk struct{ kind, outcome string }
	counts := map[sk]map[int64]int64{}
	for _, row := range rows {
		k := sk{row.Kind, row.Outcome}
		if counts[k] == nil {
			counts[k] = map[int64]int64{}
		}
		b := q.From.Add(row.Bucket.Sub(q.From) / q.Step * q.Step).Unix()
		counts[k][b] += row.Count
	}
	out := make([]Series, 0, len(counts))
	for k, byBucket := range counts {
		s := Series{Kind: k.kind, Outcome: k.outcome, Points: make([]Point, 0, len(byBucket))}
		for b, n := range byBucket {
			s.Points = append(s.Points, Point{T: time.Unix(b, 0).UTC(), Count: n})
		}
		slices.SortFunc(s.Points, func(a, b Point) int { return a.T.Compare(b.T) })
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b Series) int { return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Outcome, b.Outcome)) })
	return out
}

func totals(rows []*ent.UsageCount) usage.Totals {
	var t usage.Totals
	for _, row := range rows {
		add(&t, row.Outcome, row.Count)
	}
	return t
}
