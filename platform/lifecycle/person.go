package lifecycle

import (
	"context"

	"entgo.io/ent/dialect/sql"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/schema"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/identity"
)

// PersonEnding is the kind's part of a deprovisioning (SPEC §27): the live credentials of
// the kind a person of the project's tenant minted (created_by, which every mint records)
// are listed to the org's admins, and revoked in the deprovisioning's transaction when
// the org's policy says revokeMintedOnDeprovision. name is how the list names one.
func (l *Lifecycle) PersonEnding(name func(r *Row) string) Minted {
	return Minted{l: l, name: name}
}

var _ identity.PersonEnding = Minted{}

// Minted is a kind's identity.PersonEnding.
type Minted struct {
	l    *Lifecycle
	name func(r *Row) string
}

func (m Minted) EndPerson(ctx context.Context, tx *ent.Tx, e identity.PersonEnd) (identity.PersonEnded, error) {
	l := m.l
	now := l.deps.Kit.Clock.Now()
	rows, err := l.t.query(ctx, tx, 0, func(s *sql.Selector) { s.OrderBy(s.C(schema.FieldID)) },
		sql.FieldEQ(schema.FieldProjectID, e.TenantID), sql.FieldEQ(schema.FieldCreatedBy, e.UserID), schema.Live[func(*sql.Selector)](now))
	out := identity.PersonEnded{Kind: l.spec.Name}
	if err != nil || len(rows) == 0 {
		return out, err
	}
	var actor *string
	if e.Actor != "" {
		a := e.Actor
		actor = &a
	}
	for _, r := range rows {
		c := identity.MintedCredential{Kind: l.spec.Name, ID: r.ID, Name: m.name(r)}
		if e.RevokeMinted {
			if err := l.revokeRow(ctx, tx, r, now); err != nil {
				return out, err
			}
			md := map[string]any{l.spec.idField(): r.ID, "reason": "user_deprovisioned", "userId": e.UserID}
			ev := audit.Event{ActorID: actor, ActorType: e.ActorType, ProjectID: r.ProjectID, OrgID: l.orgOf(r), Action: l.spec.action("revoke"),
				Metadata: md, Origin: e.Origin}
			if _, err := l.deps.Audit.Record(ctx, tx, ev); err != nil {
				return out, err
			}
			c.Revoked = true
			out.Ended++
		}
		out.Minted = append(out.Minted, c)
	}
	if out.Ended > 0 {
		out.After = func(context.Context) {
			for _, r := range rows {
				l.deps.Kit.Metrics.Revoked.WithLabelValues(l.spec.Name, l.label(r)).Inc()
			}
		}
	}
	return out, nil
}
