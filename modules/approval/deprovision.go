package approval

import (
	"context"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/backchannelrequest"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/identity"
)

// personApprovals denies a deprovisioned person's open requests (SPEC §27) in the
// deprovisioning's transaction: those pending, and those approved whose token the client
// has not yet taken (it would otherwise be issued for a person who is gone). A client
// polling hears access_denied; one in ping mode is pinged, as after a person's own denial.
type personApprovals struct{ s *service }

func (p personApprovals) EndPerson(ctx context.Context, tx *ent.Tx, e identity.PersonEnd) (identity.PersonEnded, error) {
	s := p.s
	out := identity.PersonEnded{Kind: "approvals"}
	rows, err := tx.BackchannelRequest.Query().Where(backchannelrequest.UserID(e.UserID),
		backchannelrequest.StatusIn(backchannelrequest.StatusPending, backchannelrequest.StatusApproved)).All(ctx)
	if err != nil || len(rows) == 0 {
		return out, err
	}
	now := s.clock.Now()
	var actor *string
	if e.Actor != "" {
		actor = &e.Actor
	}
	ping := false
	for _, r := range rows {
		up := tx.BackchannelRequest.Update().Where(backchannelrequest.ID(r.ID), backchannelrequest.StatusEQ(r.Status)).
			SetStatus(backchannelrequest.StatusDenied).SetDecidedAt(now)
		if r.DeliveryMode == backchannelrequest.DeliveryModePing {
			up = up.SetPingNextAt(now)
		}
		n, err := up.Save(ctx)
		if err != nil {
			return out, err
		}
		if n == 0 {
			continue // decided meanwhile
		}
		ping = ping || r.DeliveryMode == backchannelrequest.DeliveryModePing
		out.Ended++
		if _, err := s.audit.Record(ctx, tx, audit.Event{ActorID: actor, ActorType: e.ActorType, ProjectID: r.ProjectID, Action: actionDeny, Origin: e.Origin,
			Metadata: map[string]any{"requestId": r.ID, "clientId": r.ClientID, "userId": r.UserID, "reason": "user_deprovisioned"}}); err != nil {
			return out, err
		}
	}
	if ping {
		out.After = func(context.Context) { s.pings.wake.Ring() }
	}
	return out, nil
}
