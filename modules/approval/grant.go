package approval

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/backchannelrequest"
	"github.com/authcore/authcore/ent/schema"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/oauth"
	"github.com/authcore/authcore/platform/secret"
)

// tokenTTL is the life of a token a person's approval gives: the action it names is
// meant to happen now, not tomorrow. It ends sooner with its client.
const tokenTTL = 15 * time.Minute

// slowDownStep is what a poll sooner than the interval adds to it (CIBA §11).
const slowDownStep = 5

// grant is CIBA's grant type at the token endpoint (SPEC §23). It authenticates its
// clients itself: an agent token acting as a client is no client the token endpoint
// knows.
type grant struct{ s *service }

var _ oauth.Grant = grant{}

func (grant) Type() string                { return oauth.GrantCIBA }
func (grant) Metric() string              { return "ciba" }
func (grant) ClientAuth() bool            { return false }
func (grant) Repeatable(name string) bool { return false }

// Live: the tokens it issues are worth what their client is, which the client's own
// grant (exchange, client credentials) answers: they carry no grant id.
func (grant) Live(context.Context, oauth.Issued) (bool, error) { return false, nil }

// Token is CIBA §10.1: the answer to a poll, or to the request a ping announced.
func (g grant) Token(ctx context.Context, r oauth.Request) (oauth.Token, error) {
	s := g.s
	cl, err := s.client(ctx, r.Form, r.Authorization, oauth.TokenPath)
	if err != nil {
		return oauth.Token{}, err
	}
	id := r.Form.Get("auth_req_id")
	if id == "" {
		return oauth.Token{}, oauth.InvalidRequest("auth_req_id is required")
	}
	if sent := r.Form.Get("authorization_details"); sent != "" {
		// RFC 9396 §6 would let a token request narrow the details; here they are exactly
		// what the person approved, so anything else is refused rather than ignored.
		return oauth.Token{}, invalidDetails("authorization_details are the approved ones: leave them out of the token request")
	}
	if !secret.CheckToken(reqKind, id) {
		return oauth.Token{}, errUnknownID
	}
	now := s.clock.Now()
	row, err := s.ent.BackchannelRequest.Query().Where(backchannelrequest.ReqDigest(secret.DigestOf(id).Bytes())).Only(ctx)
	if ent.IsNotFound(err) || (err == nil && (row.ClientID != cl.ID || row.ProjectID != cl.ProjectID)) {
		return oauth.Token{}, errUnknownID
	}
	if err != nil {
		return oauth.Token{}, err
	}
	switch {
	case row.Status == backchannelrequest.StatusIssued:
		return oauth.Token{}, errUnknownID
	case row.Status == backchannelrequest.StatusDenied:
		return oauth.Token{}, errDenied
	case !now.Before(row.ExpiresAt):
		return oauth.Token{}, errExpired
	case row.Status == backchannelrequest.StatusPending:
		return oauth.Token{}, s.polled(ctx, row, now)
	}
	// Approved: issued once, and only while every type still has the schema the person
	// approved the details under.
	ok, err := s.types.stillValid(ctx, row.ProjectID, row.TypeDigests)
	if err != nil {
		return oauth.Token{}, err
	}
	if !ok {
		if err := s.ent.BackchannelRequest.UpdateOne(row).SetStatus(backchannelrequest.StatusDenied).Exec(ctx); err != nil {
			return oauth.Token{}, err
		}
		return oauth.Token{}, errChanged
	}
	// Signed before the request is spent (signing may write a key of its own, which no
	// transaction of ours may wait on), and thrown away if another poll spent it first.
	out, err := s.issue(ctx, cl, row, now)
	if err != nil {
		return oauth.Token{}, err
	}
	err = database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		n, err := tx.BackchannelRequest.Update().Where(backchannelrequest.ID(row.ID), backchannelrequest.StatusEQ(backchannelrequest.StatusApproved)).
			SetStatus(backchannelrequest.StatusIssued).Save(ctx)
		if err != nil {
			return err
		}
		if n == 0 {
			return errUnknownID
		}
		client := cl.ID
		_, err = s.audit.Record(ctx, tx, audit.Event{ActorID: &client, ActorType: audit.ClientActor(client), Act: audit.Delegation(row.UserID, client),
			ProjectID: row.ProjectID, Action: actionToken,
			Metadata: map[string]any{"requestId": row.ID, "clientId": cl.ID, "userId": row.UserID}})
		return err
	})
	if err != nil {
		return oauth.Token{}, err
	}
	return out, nil
}

// polled answers a poll of a request still pending: slow_down sooner than its interval
// after the previous poll (and the interval grows), else authorization_pending. Either
// way the poll is recorded, so the rule holds across replicas.
func (s *service) polled(ctx context.Context, row *ent.BackchannelRequest, now time.Time) error {
	up := s.ent.BackchannelRequest.UpdateOne(row).SetLastPolledAt(now)
	answer := errPending
	last := row.CreatedAt // the first poll, too, waits the interval (CIBA §7.3)
	if row.LastPolledAt != nil {
		last = *row.LastPolledAt
	}
	if now.Sub(last) < time.Duration(row.Interval)*time.Second {
		up = up.AddInterval(slowDownStep)
		answer = errSlowDown
	}
	if err := up.Exec(ctx); err != nil {
		return err
	}
	return answer
}

// issue signs the access token carrying exactly the approved authorization details, and
// an id_token for the person (OpenID CIBA §10.1.1).
func (s *service) issue(ctx context.Context, cl oauth.Client, row *ent.BackchannelRequest, now time.Time) (oauth.Token, error) {
	now = now.Truncate(time.Second)
	exp := now.Add(tokenTTL)
	if cl.ExpiresAt != nil && cl.ExpiresAt.Before(exp) {
		exp = cl.ExpiresAt.Truncate(time.Second)
	}
	audience := row.Audience
	if len(audience) == 0 {
		audience = []string{identity.IssuerFrom(ctx)}
	}
	var details json.RawMessage
	if row.AuthorizationDetails != "[]" {
		details = json.RawMessage(row.AuthorizationDetails)
	}
	granted := strings.Join(row.Scopes, " ")
	// agent_name is an agent token's (SPEC §11); an auth badge's client is named on the
	// approval card, not in its tokens.
	var agentName string
	if strings.HasPrefix(row.ClientID, agentIDPrefix) {
		agentName = row.ClientName
	}
	access, err := oauth.Sign(ctx, s.signer, oauth.Claims{Subject: row.UserID, ClientID: cl.ID, Audience: oauth.Audience(audience),
		Scope: granted, ProjectID: row.ProjectID, AgentName: agentName, AuthorizationDetails: details,
		IssuedAt: now.Unix(), Expires: exp.Unix(), ID: schema.NewID(schema.AssertionIDPrefix)})
	if err != nil {
		return oauth.Token{}, err
	}
	claims := map[string]any{"sub": row.UserID, "aud": cl.ID, "azp": cl.ID, "iat": now.Unix(), "exp": now.Add(tokenTTL).Unix(),
		"urn:openid:params:jwt:claim:auth_req_id": row.ID}
	if row.AuthTime != nil {
		claims["auth_time"] = row.AuthTime.Unix()
	}
	idToken, err := s.signer.SignIDToken(ctx, claims, "")
	if err != nil {
		return oauth.Token{}, err
	}
	return oauth.Token{AccessToken: access, TokenType: "Bearer", ExpiresIn: int(exp.Sub(now).Seconds()),
		Scope: strings.TrimSpace("openid " + granted), IDToken: idToken, AuthorizationDetails: details}, nil
}
