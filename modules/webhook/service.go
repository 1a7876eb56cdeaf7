package webhook

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"time"

	"entgo.io/ent/dialect/sql"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/schema"
	"github.com/authcore/authcore/ent/webhook"
	"github.com/authcore/authcore/ent/webhookdelivery"
	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/jsonbody"
	"github.com/authcore/authcore/platform/outbound"
	"github.com/authcore/authcore/platform/page"
	"github.com/authcore/authcore/platform/secret"
)

// maxWebhooks bounds a project's webhooks: each one multiplies every event.
const maxWebhooks = 10

// secretPrefix marks a Standard Webhooks signing secret; the rest is its base64 key.
const secretPrefix = "whsec_"

// Service manages a project's webhooks. It imports no HTTP.
type Service struct {
	ent    *ent.Client
	keys   *secret.Keyring
	policy outbound.Policy
	types  *types
}

// Webhook is a webhook as listed. Never its secret.
type Webhook struct {
	ID        string    `json:"id"`
	URL       string    `json:"url"`
	Events    []string  `json:"events"`
	CreatedAt time.Time `json:"createdAt"`
}

func view(h *ent.Webhook) Webhook {
	ev := h.Events
	if ev == nil {
		ev = []string{}
	}
	return Webhook{ID: h.ID, URL: h.URL, Events: ev, CreatedAt: h.CreatedAt.UTC()}
}

// Created is a new webhook with its one-time secret.
type Created struct {
	Webhook
	Secret string `json:"secret"`
}

// Create reads a create body { url, events? } and registers the webhook.
func (s *Service) Create(ctx context.Context, projectID string, creator *string, raw []byte) (Created, error) {
	f := jsonbody.Read(raw)
	url := f.RequiredString("url")
	var events []string
	switch ev, st := f.Strings("events"); st {
	case jsonbody.Absent, jsonbody.Null: // all of them
	case jsonbody.OK:
		for _, e := range ev {
			if !s.types.has(e) {
				f.Fail("events", "unknown event type "+e)
				break
			}
		}
		events = ev
	default:
		f.Fail("events", "must be an array of event types")
	}
	if err := f.Err(); err != nil {
		return Created{}, err
	}
	if reason, ok := s.policy.CheckURL(ctx, url); !ok {
		return Created{}, apperr.Validation(apperr.Issue{Field: "url", Reason: reason})
	}
	key := make([]byte, 24)
	if _, err := rand.Read(key); err != nil {
		return Created{}, err
	}
	id := schema.NewID(schema.WebhookIDPrefix)
	sealed, err := sealedSecret.Seal(s.keys, key, id)
	if err != nil {
		return Created{}, err
	}
	var h *ent.Webhook
	err = database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		n, err := tx.Webhook.Query().Where(webhook.ProjectID(projectID)).Count(ctx)
		if err != nil {
			return err
		}
		if n >= maxWebhooks {
			return apperr.Conflict("too_many_webhooks", "a project has at most 10 webhooks")
		}
		h, err = tx.Webhook.Create().SetID(id).SetProjectID(projectID).SetURL(url).SetEvents(events).
			SetSecretSealed(sealed).SetNillableCreatedBy(creator).Save(ctx)
		return err
	})
	if err != nil {
		return Created{}, err
	}
	return Created{Webhook: view(h), Secret: secretPrefix + base64.StdEncoding.EncodeToString(key)}, nil
}

// List is the project's webhooks, newest first.
func (s *Service) List(ctx context.Context, projectID string) ([]Webhook, error) {
	hs, err := s.ent.Webhook.Query().Where(webhook.ProjectID(projectID)).Order(webhook.ByID(sql.OrderDesc())).All(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Webhook, len(hs))
	for i, h := range hs {
		out[i] = view(h)
	}
	return out, nil
}

var errNotFound = apperr.NotFound("no such webhook in this project")

// Delete removes one of the project's webhooks and what is still queued for it.
func (s *Service) Delete(ctx context.Context, projectID, id string) error {
	return database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		n, err := tx.Webhook.Delete().Where(webhook.ID(id), webhook.ProjectID(projectID)).Exec(ctx)
		if err != nil {
			return err
		}
		if n == 0 {
			return errNotFound
		}
		_, err = tx.WebhookDelivery.Delete().Where(webhookdelivery.WebhookID(id)).Exec(ctx)
		return err
	})
}

// Delivery is one delivery as listed.
type Delivery struct {
	ID             string     `json:"id"`
	EventID        string     `json:"eventId"`
	EventType      string     `json:"eventType"`
	Status         string     `json:"status"`
	Attempts       int        `json:"attempts"`
	NextAttemptAt  *time.Time `json:"nextAttemptAt"`
	LastAttemptAt  *time.Time `json:"lastAttemptAt"`
	LastStatusCode *int       `json:"lastStatusCode"`
	LastError      *string    `json:"lastError"`
	DeliveredAt    *time.Time `json:"deliveredAt"`
	CreatedAt      time.Time  `json:"createdAt"`
}

// DeliveryPage is one page of a webhook's deliveries, newest first.
type DeliveryPage struct {
	Deliveries []Delivery `json:"deliveries"`
	NextBefore *string    `json:"nextBefore"`
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// Deliveries pages through a webhook's deliveries, newest first, older than before.
func (s *Service) Deliveries(ctx context.Context, projectID, id string, limit int, before string) (DeliveryPage, error) {
	ok, err := s.ent.Webhook.Query().Where(webhook.ID(id), webhook.ProjectID(projectID)).Exist(ctx)
	if err != nil {
		return DeliveryPage{}, err
	}
	if !ok {
		return DeliveryPage{}, errNotFound
	}
	q := s.ent.WebhookDelivery.Query().Where(webhookdelivery.WebhookID(id))
	if before != "" {
		q = q.Where(webhookdelivery.IDLT(before))
	}
	ds, err := q.Order(webhookdelivery.ByID(sql.OrderDesc())).Limit(limit + 1).All(ctx)
	if err != nil {
		return DeliveryPage{}, err
	}
	ds, next := page.Cut(ds, limit, func(d *ent.WebhookDelivery) string { return d.ID })
	p := DeliveryPage{Deliveries: make([]Delivery, 0, len(ds)), NextBefore: next}
	for _, d := range ds {
		v := Delivery{ID: d.ID, EventID: d.EventID, EventType: d.EventType, Status: d.Status.String(), Attempts: d.Attempts,
			LastAttemptAt: utc(d.LastAttemptAt), LastStatusCode: d.LastStatusCode, LastError: d.LastError,
			DeliveredAt: utc(d.DeliveredAt), CreatedAt: d.CreatedAt.UTC()}
		if d.Status == webhookdelivery.StatusPending {
			v.NextAttemptAt = utc(&d.NextAttemptAt)
		}
		p.Deliveries = append(p.Deliveries, v)
	}
	return p, nil
}
