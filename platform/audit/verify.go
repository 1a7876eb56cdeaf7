package audit

import (
	"context"

	"entgo.io/ent/dialect/sql"

	"github.com/authcore/authcore/ent/auditevent"
)

// verifyPage is how many links verify reads at a time: the trail is never in memory whole.
const verifyPage = 500

// Why a link is broken (SPEC §28).
const (
	// BrokenMissing: no event holds this place in the chain (a deleted row, or one whose
	// place was cleared).
	BrokenMissing = "missing"
	// BrokenHash: the event at this place does not hash to its stored link after the
	// verified link before it (an edited row, a row moved to another place, or the link
	// before it rewritten to fit an edit of its own).
	BrokenHash = "hash_mismatch"
)

// ChainLink is one link of a project's chain.
type ChainLink struct {
	Seq  int64  `json:"seq"`
	ID   string `json:"id"`
	Hash string `json:"hash"`
}

// Break is the first broken link: its place, the event there (nil when missing) and why.
type Break struct {
	Seq    int64   `json:"seq"`
	ID     *string `json:"id"`
	Reason string  `json:"reason"`
}

// Verification is what verify found (GET /v1/projects/{id}/audit/verify).
type Verification struct {
	OK bool `json:"ok"`
	// Checked is how many links recomputed, from the first on.
	Checked int64 `json:"checked"`
	// Head is the last link that recomputed: the chain's head when OK, nil when none did.
	Head        *ChainLink `json:"head"`
	FirstBroken *Break     `json:"firstBroken"`
	// Unchained is how many of the project's events the chainer has not linked yet.
	Unchained int `json:"unchained"`
}

// Verify walks projectID's chain from its first link in place order, a page at a time,
// recomputing each link from the one before (Link), and stops at the first that breaks.
// A verified chain is only as long as its head: a removed newest event leaves no gap, so
// whoever keeps a copy (an audit stream carries each event's hash) compares heads.
func (r *Recorder) Verify(ctx context.Context, projectID string) (Verification, error) {
	var v Verification
	unchained, err := r.ent.AuditEvent.Query().Where(auditevent.ProjectID(projectID), auditevent.ChainSeqIsNil()).Count(ctx)
	if err != nil {
		return Verification{}, err
	}
	v.Unchained = unchained
	prev, next := "", int64(1)
	for {
		rows, err := r.ent.AuditEvent.Query().
			Where(auditevent.ProjectID(projectID), auditevent.ChainSeqGTE(next)).
			Order(auditevent.ByChainSeq(sql.OrderAsc())).Limit(verifyPage).All(ctx)
		if err != nil {
			return Verification{}, err
		}
		for _, e := range rows {
			if *e.ChainSeq != next {
				v.FirstBroken = &Break{Seq: next, Reason: BrokenMissing}
				return v, nil
			}
			h, err := Link(prev, next, e)
			if err != nil {
				return Verification{}, err
			}
			if e.Hash == nil || *e.Hash != h {
				id := e.ID
				v.FirstBroken = &Break{Seq: next, ID: &id, Reason: BrokenHash}
				return v, nil
			}
			v.Checked, v.Head = next, &ChainLink{Seq: next, ID: e.ID, Hash: h}
			prev, next = h, next+1
		}
		if len(rows) < verifyPage {
			v.OK = true
			return v, nil
		}
	}
}
