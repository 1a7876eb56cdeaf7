package webhook

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"time"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/webhook"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/credential"
)

// beyondKinds are the events of SPEC §12, §17, §20, §23 and §27 that no credential kind emits: a
// leak report's revocation (of any kind), a policy change, an end user's second factors,
// linked identities, connected upstream accounts and a directory's (de)provisioning of a
// person (which lists to the org's admins the credentials they minted). Every credential create, roll and revoke
// is an event its kind declares in the registry (credential.Kind.Events). Each event is
// the audit action that records it.
var beyondKinds = []string{"credential.leak_revoke", "project.policy_update", "user.mfa_enrol", "user.mfa_remove", "user.mfa_recovery_used",
	"user.identity_link", "user.identity_unlink", "user.connection_create", "user.connection_revoke",
	"org.member_deprovisioned", "org.member_reprovisioned"}

// types are the event types, known once the credential registry is built: the registry's
// kinds are built from modules whose audit records come here, so the outbox cannot wait
// for it at construction.
type types struct{ list []string }

func (t *types) learn(r *credential.Registry) {
	t.list = append(slices.Clone(beyondKinds), r.Events()...)
	slices.Sort(t.list)
}

func (t *types) has(e string) bool { return slices.Contains(t.list, e) }

// outbox turns audit records that are events into an outbox row and one delivery per
// subscribed webhook, in the record's transaction.
type outbox struct {
	clock clock.Clock
	nudge func()
	types *types
}

var _ audit.Outbox = (*outbox)(nil)

// body is what a delivery sends (Standard Webhooks): { type, timestamp, data }.
type body struct {
	Type      string         `json:"type"`
	Timestamp time.Time      `json:"timestamp"`
	Data      map[string]any `json:"data"`
}

func (o *outbox) Append(ctx context.Context, tx *ent.Tx, rec *ent.AuditEvent) error {
	if !o.types.has(rec.Action) {
		return nil
	}
	data := map[string]any{"projectId": rec.ProjectID, "actorId": rec.ActorID}
	maps.Copy(data, rec.Metadata)
	b, err := json.Marshal(body{Type: rec.Action, Timestamp: rec.CreatedAt.UTC(), Data: data})
	if err != nil {
		return err
	}
	ev, err := tx.Event.Create().SetProjectID(rec.ProjectID).SetType(rec.Action).SetBody(b).SetCreatedAt(rec.CreatedAt).Save(ctx)
	if err != nil {
		return err
	}
	hooks, err := tx.Webhook.Query().Where(webhook.ProjectID(rec.ProjectID)).All(ctx)
	if err != nil {
		return err
	}
	now := o.clock.Now()
	var deliveries []*ent.WebhookDeliveryCreate
	for _, h := range hooks {
		if len(h.Events) > 0 && !slices.Contains(h.Events, rec.Action) {
			continue
		}
		deliveries = append(deliveries, tx.WebhookDelivery.Create().
			SetWebhookID(h.ID).SetEventID(ev.ID).SetEventType(ev.Type).SetNextAttemptAt(now).SetCreatedAt(now))
	}
	if len(deliveries) == 0 {
		return nil
	}
	if err := tx.WebhookDelivery.CreateBulk(deliveries...).Exec(ctx); err != nil {
		return err
	}
	// Wake this replica's worker once the deliveries are visible; the others find them
	// on their next poll.
	tx.OnCommit(func(next ent.Committer) ent.Committer {
		return ent.CommitFunc(func(ctx context.Context, tx *ent.Tx) error {
			err := next.Commit(ctx, tx)
			if err == nil {
				o.nudge()
			}
			return err
		})
	})
	return nil
}
