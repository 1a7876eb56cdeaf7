package account

import (
	"context"
	"maps"
	"slices"

	"go.uber.org/fx"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/user"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/oauth"
)

// The audit actions (and webhook events) of an org directory's deactivation and
// reactivation of a person (SPEC §27). The event is named for the org's admins, to whom
// it lists the agent tokens and badges the person minted.
const (
	actionDeprovisioned = "org.member_deprovisioned"
	actionReprovisioned = "org.member_reprovisioned"
)

// deprovisioner is identity.Deprovisioning: the account module owns the person's row,
// whose deprovisioned_at every way in reads (Admit), and asks the modules that keep
// something of theirs (identity.PersonEnding: sessions, vault connections, approvals,
// minted credentials) to end it in one transaction with the row.
type deprovisioner struct {
	ent      *ent.Client
	clock    clock.Clock
	audit    *audit.Recorder
	sessions identity.Sessions
	grants   oauth.GrantEnder
	endings  []identity.PersonEnding
	policies identity.OrgPolicies
}

type deprovisionParams struct {
	fx.In
	Ent      *ent.Client
	Clock    clock.Clock
	Audit    *audit.Recorder
	Sessions identity.Sessions
	// Grants is the authorize module's; absent, there are no OAuth grants to end.
	Grants  oauth.GrantEnder        `optional:"true"`
	Endings []identity.PersonEnding `group:"person_endings"`
	// Policies is the org module's; absent, minted credentials are listed, never revoked.
	Policies identity.OrgPolicies `optional:"true"`
}

func newDeprovisioner(p deprovisionParams) *deprovisioner {
	return &deprovisioner{ent: p.Ent, clock: p.Clock, audit: p.Audit, sessions: p.Sessions, grants: p.Grants, endings: p.Endings,
		policies: p.Policies}
}

var _ identity.Deprovisioning = (*deprovisioner)(nil)

func actorOf(d identity.Deprovision) (*string, audit.ActorType) {
	if d.Actor == "" {
		return nil, audit.ActorSystem
	}
	actor := d.Actor
	if d.ActorType == "" {
		return &actor, audit.ActorSCIMDirectory
	}
	return &actor, d.ActorType
}

// Deprovision sets deprovisioned_at (Admit refuses every way in from the commit on) and,
// in the same transaction, ends the person's OAuth grants with their tokens and asks every
// PersonEnding to end its part; each publishes its invalidations in that transaction, so
// every replica drops the credentials as it commits. Work beyond the store (upstream
// revocations) follows the commit. Called again, it ends whatever is still live (a
// session a sign-in started while the first call committed) and records an event only
// when something changed.
func (d *deprovisioner) Deprovision(ctx context.Context, in identity.Deprovision) error {
	revokeMinted := false
	if d.policies != nil && in.OrgID != "" {
		p, found, err := d.policies.OrgPolicy(ctx, in.TenantID, in.OrgID)
		if err != nil {
			return err
		}
		revokeMinted = found && p.RevokeMintedOnDeprovision
	}
	actor, actorType := actorOf(in)
	end := identity.PersonEnd{TenantID: in.TenantID, UserID: in.UserID, OrgID: in.OrgID, Actor: in.Actor, ActorType: actorType,
		Origin: in.Origin, RevokeMinted: revokeMinted}
	var after []func(context.Context)
	err := database.WithTx(ctx, d.ent, func(tx *ent.Tx) error {
		after = after[:0]
		u, err := tx.User.Query().Where(user.ID(in.UserID), user.TenantID(in.TenantID)).Only(ctx)
		if ent.IsNotFound(err) {
			return identity.ErrNoSuchPerson
		}
		if err != nil {
			return err
		}
		first := u.DeprovisionedAt == nil
		if first {
			// Conditional, so two directories' calls at once record one deprovisioning.
			n, err := tx.User.Update().Where(user.ID(u.ID), user.DeprovisionedAtIsNil()).SetDeprovisionedAt(d.clock.Now()).Save(ctx)
			if err != nil {
				return err
			}
			first = n == 1
		}
		ended := map[string]int{}
		if d.grants != nil {
			n, err := d.grants.EndGrants(ctx, tx, oauth.GrantsOf{UserID: u.ID}, oauth.GrantEnding{ActorID: actor, Reason: "user_deprovisioned", Origin: in.Origin})
			if err != nil {
				return err
			}
			ended["grants"] = n
		}
		minted := []identity.MintedCredential{}
		for _, pe := range d.endings {
			r, err := pe.EndPerson(ctx, tx, end)
			if err != nil {
				return err
			}
			if r.Kind != "" {
				ended[r.Kind] += r.Ended
			}
			minted = append(minted, r.Minted...)
			if r.After != nil {
				after = append(after, r.After)
			}
		}
		if !first && !slices.ContainsFunc(slices.Collect(maps.Values(ended)), func(n int) bool { return n > 0 }) {
			return nil
		}
		ev := audit.Event{ActorID: actor, ActorType: actorType, ProjectID: in.TenantID, Action: actionDeprovisioned, Origin: in.Origin,
			Metadata: map[string]any{"userId": u.ID, "ended": ended, "minted": minted, "revokeMinted": revokeMinted, "again": !first}}
		if in.OrgID != "" {
			org := in.OrgID
			ev.OrgID = &org
		}
		_, err = d.audit.Record(ctx, tx, ev)
		return err
	})
	if err != nil {
		return err
	}
	for _, f := range after {
		f(context.WithoutCancel(ctx))
	}
	// A sign-in that passed Admit just before the commit may have started a session the
	// transaction did not see; Admit refuses every later one, so this sweep is the last.
	if _, err := d.sessions.RevokeUser(ctx, in.UserID, ""); err != nil {
		return err
	}
	return nil
}

// Reprovision clears deprovisioned_at: the person signs in again (unless an admin blocks
// them: a column of its own). Nothing that ended comes back.
func (d *deprovisioner) Reprovision(ctx context.Context, in identity.Deprovision) error {
	actor, actorType := actorOf(in)
	return database.WithTx(ctx, d.ent, func(tx *ent.Tx) error {
		u, err := tx.User.Query().Where(user.ID(in.UserID), user.TenantID(in.TenantID)).Only(ctx)
		if ent.IsNotFound(err) {
			return identity.ErrNoSuchPerson
		}
		if err != nil {
			return err
		}
		n, err := tx.User.Update().Where(user.ID(u.ID), user.DeprovisionedAtNotNil()).ClearDeprovisionedAt().Save(ctx)
		if err != nil || n == 0 {
			return err
		}
		ev := audit.Event{ActorID: actor, ActorType: actorType, ProjectID: in.TenantID, Action: actionReprovisioned, Origin: in.Origin,
			Metadata: map[string]any{"userId": u.ID}}
		if in.OrgID != "" {
			org := in.OrgID
			ev.OrgID = &org
		}
		_, err = d.audit.Record(ctx, tx, ev)
		return err
	})
}
