package approval

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"entgo.io/ent/dialect/sql"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/backchannelrequest"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/jsonbody"
)

// freshWindow is how recent the person's authentication must be to approve (SPEC §23):
// an approval moves money or deletes data, so a session left open is not enough.
const freshWindow = 5 * time.Minute

// Approval is a request as the person it asks sees it: who asks, the binding message,
// and the details with the schema of each type, to render field by field.
type Approval struct {
	ID                   string          `json:"id"`
	ProjectID            string          `json:"projectId"`
	Client               ApprovalClient  `json:"client"`
	BindingMessage       string          `json:"bindingMessage"`
	Scopes               []string        `json:"scopes"`
	AuthorizationDetails json.RawMessage `json:"authorizationDetails"`
	Types                []ApprovalType  `json:"types"`
	DetailsDigest        string          `json:"detailsDigest"`
	// Status is pending, approved, denied, issued (approved, and its token taken) or
	// expired.
	Status    string     `json:"status"`
	CreatedAt time.Time  `json:"createdAt"`
	ExpiresAt time.Time  `json:"expiresAt"`
	DecidedAt *time.Time `json:"decidedAt"`
}

// ApprovalClient is who asks: an agent token's name, or a client's id alone.
type ApprovalClient struct {
	ID   string  `json:"id"`
	Name *string `json:"name"`
}

// ApprovalType is a type the details name, as registered now; Changed when its schema is
// no longer the one the details were checked against (or it is gone): such a request
// cannot be approved.
type ApprovalType struct {
	Type    string          `json:"type"`
	Name    string          `json:"name"`
	Schema  json.RawMessage `json:"schema"`
	Changed bool            `json:"changed"`
}

func (s *service) approvalView(ctx context.Context, r *ent.BackchannelRequest) (Approval, error) {
	a := Approval{ID: r.ID, ProjectID: r.ProjectID, Client: ApprovalClient{ID: r.ClientID}, BindingMessage: r.BindingMessage,
		Scopes: nonNil(r.Scopes), AuthorizationDetails: json.RawMessage(r.AuthorizationDetails), Types: []ApprovalType{},
		DetailsDigest: r.DetailsDigest, Status: string(r.Status), CreatedAt: r.CreatedAt.UTC(), ExpiresAt: r.ExpiresAt.UTC(), DecidedAt: utc(r.DecidedAt)}
	if r.ClientName != "" {
		name := r.ClientName
		a.Client.Name = &name
	}
	if (r.Status == backchannelrequest.StatusPending || r.Status == backchannelrequest.StatusApproved) && !s.clock.Now().Before(r.ExpiresAt) {
		a.Status = "expired"
	}
	names := make([]string, 0, len(r.TypeDigests))
	for t := range r.TypeDigests {
		names = append(names, t)
	}
	types, err := s.types.typesOf(ctx, r.ProjectID, names)
	if err != nil {
		return Approval{}, err
	}
	var order []string
	var items []struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal([]byte(r.AuthorizationDetails), &items)
	for _, it := range items {
		if !slices.Contains(order, it.Type) {
			order = append(order, it.Type)
		}
	}
	for _, name := range order {
		t, ok := types[name]
		if !ok {
			a.Types = append(a.Types, ApprovalType{Type: name, Name: name, Schema: json.RawMessage("{}"), Changed: true})
			continue
		}
		a.Types = append(a.Types, ApprovalType{Type: name, Name: t.Name, Schema: json.RawMessage(t.Schema), Changed: t.SchemaDigest != r.TypeDigests[name]})
	}
	return a, nil
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// Approvals are the person's requests still pending, newest first.
func (s *service) Approvals(ctx context.Context, userID string) ([]Approval, error) {
	rows, err := s.ent.BackchannelRequest.Query().Where(backchannelrequest.UserID(userID),
		backchannelrequest.StatusEQ(backchannelrequest.StatusPending), backchannelrequest.ExpiresAtGT(s.clock.Now())).
		Order(backchannelrequest.ByID(sql.OrderDesc())).Limit(100).All(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Approval, 0, len(rows))
	for _, r := range rows {
		a, err := s.approvalView(ctx, r)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// mine is the person's request id; anyone else's is not found.
func (s *service) mine(ctx context.Context, c *ent.Client, userID, id string) (*ent.BackchannelRequest, error) {
	r, err := c.BackchannelRequest.Query().Where(backchannelrequest.ID(id), backchannelrequest.UserID(userID)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, errNoApproval
	}
	return r, err
}

// Approval is one of the person's requests, in any state.
func (s *service) Approval(ctx context.Context, userID, id string) (Approval, error) {
	r, err := s.mine(ctx, s.ent, userID, id)
	if err != nil {
		return Approval{}, err
	}
	return s.approvalView(ctx, r)
}

// Decide approves (with the digest of the details the person was shown) or denies one of
// the person's pending requests. Approving wants an authentication within freshWindow.
func (s *service) Decide(ctx context.Context, p identity.Principal, id string, approve bool, fresh bool, raw []byte, origin audit.Origin) (Approval, error) {
	r, err := s.mine(ctx, s.ent, p.UserID, id)
	if err != nil {
		return Approval{}, err
	}
	var shown string
	if approve {
		if !fresh {
			return Approval{}, errFresh
		}
		f := jsonbody.Read(raw)
		shown = f.RequiredString("detailsDigest")
		if err := f.Err(); err != nil {
			return Approval{}, err
		}
	}
	now := s.clock.Now()
	switch {
	case r.Status != backchannelrequest.StatusPending:
		return Approval{}, errDecided
	case !now.Before(r.ExpiresAt):
		return Approval{}, errRequestExpired
	}
	if approve {
		ok, err := s.types.stillValid(ctx, r.ProjectID, r.TypeDigests)
		if err != nil {
			return Approval{}, err
		}
		if !ok || shown != r.DetailsDigest {
			return Approval{}, errDetailsChanged
		}
	}
	status, action := backchannelrequest.StatusDenied, actionDeny
	if approve {
		status, action = backchannelrequest.StatusApproved, actionApprove
	}
	err = database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		up := tx.BackchannelRequest.Update().Where(backchannelrequest.ID(r.ID), backchannelrequest.StatusEQ(backchannelrequest.StatusPending)).
			SetStatus(status).SetDecidedAt(now)
		if approve && !p.AuthTime.IsZero() {
			up = up.SetAuthTime(p.AuthTime)
		}
		if r.DeliveryMode == backchannelrequest.DeliveryModePing {
			up = up.SetPingNextAt(now)
		}
		n, err := up.Save(ctx)
		if err != nil {
			return err
		}
		if n == 0 {
			return errDecided
		}
		actor := p.UserID
		_, err = s.audit.Record(ctx, tx, audit.Event{ActorID: &actor, ProjectID: r.ProjectID, Action: action, Origin: origin,
			Metadata: map[string]any{"requestId": r.ID, "clientId": r.ClientID, "userId": r.UserID}})
		return err
	})
	if err != nil {
		return Approval{}, err
	}
	if r.DeliveryMode == backchannelrequest.DeliveryModePing {
		s.pings.wake.Ring()
	}
	r, err = s.mine(ctx, s.ent, p.UserID, id)
	if err != nil {
		return Approval{}, err
	}
	return s.approvalView(ctx, r)
}
