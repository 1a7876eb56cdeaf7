package audit

import (
	"context"
	"time"

	"entgo.io/ent/dialect/sql"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/auditevent"
)

// What audit streams read of a project's chain (SPEC §28). The audit table is this
// package's: streams reach it through these, never around them.

// ChainedAfter is up to limit of projectID's chained events after place seq, in chain
// order.
func (r *Recorder) ChainedAfter(ctx context.Context, projectID string, seq int64, limit int) ([]*ent.AuditEvent, error) {
	return r.ent.AuditEvent.Query().
		Where(auditevent.ProjectID(projectID), auditevent.ChainSeqGT(seq)).
		Order(auditevent.ByChainSeq()).Limit(limit).All(ctx)
}

// ChainHead is the place of projectID's last chained event, 0 for none.
func (r *Recorder) ChainHead(ctx context.Context, projectID string) (int64, error) {
	top, err := r.ent.AuditEvent.Query().
		Where(auditevent.ProjectID(projectID), auditevent.ChainSeqNotNil()).
		Order(auditevent.ByChainSeq(sql.OrderDesc())).First(ctx)
	if ent.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return *top.ChainSeq, nil
}

// ChainSeqOf is the place of projectID's event id in its chain; ok is false when the
// project has no such event or it is not chained yet.
func (r *Recorder) ChainSeqOf(ctx context.Context, projectID, id string) (seq int64, ok bool, err error) {
	e, err := r.ent.AuditEvent.Query().Where(auditevent.ID(id), auditevent.ProjectID(projectID)).Only(ctx)
	if ent.IsNotFound(err) {
		return 0, false, nil
	}
	if err != nil || e.ChainSeq == nil {
		return 0, false, err
	}
	return *e.ChainSeq, true, nil
}

// ChainSeqSince is the place of projectID's first chained event recorded at or after t,
// or ok false when there is none yet.
func (r *Recorder) ChainSeqSince(ctx context.Context, projectID string, t time.Time) (seq int64, ok bool, err error) {
	e, err := r.ent.AuditEvent.Query().
		Where(auditevent.ProjectID(projectID), auditevent.ChainSeqNotNil(), auditevent.CreatedAtGTE(t)).
		Order(auditevent.ByChainSeq()).First(ctx)
	if ent.IsNotFound(err) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	return *e.ChainSeq, true, nil
}

// ChainedBeyond is a predicate for a query of another table whose rows name a project
// (projectColumn) and a place in its chain (seqColumn): it keeps the rows whose project
// has chained events beyond that place (a stream with something left to send).
func ChainedBeyond(projectColumn, seqColumn string) func(*sql.Selector) {
	return func(s *sql.Selector) {
		a := sql.Table(auditevent.Table).As("chained")
		s.Where(sql.Exists(sql.Select(a.C(auditevent.FieldID)).From(a).Where(sql.And(
			sql.ColumnsEQ(a.C(auditevent.FieldProjectID), s.C(projectColumn)),
			sql.ColumnsGT(a.C(auditevent.FieldChainSeq), s.C(seqColumn)),
		))))
	}
}
