package agenttoken

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"entgo.io/ent/dialect/sql"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/agenttoken"
	"github.com/authcore/authcore/ent/predicate"
	"github.com/authcore/authcore/ent/schema"
	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/bearer"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/credential"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/invalidation"
	"github.com/authcore/authcore/platform/jsonbody"
	"github.com/authcore/authcore/platform/metrics"
	"github.com/authcore/authcore/platform/policy"
	"github.com/authcore/authcore/platform/rollover"
	"github.com/authcore/authcore/platform/scope"
	"github.com/authcore/authcore/platform/secret"
	"github.com/authcore/authcore/platform/usage"
)

// Kind is the credential kind of agent tokens: the metrics label and invalidation topic.
const Kind = "ai_agent"

// tokenKind prefixes agent tokens: ac_ai_….
const tokenKind = "ai"

// idPrefix begins every agent token id (ent/schema).
const idPrefix = "tok_"

// Defaults and bounds of SPEC §5.
const (
	defaultName    = "agent"
	maxName        = 100
	maxScopes      = 32
	defaultTTL     = 720.0
	minTTL, maxTTL = 1.0, 8760.0
)

// Service mints, lists, revokes and verifies agent tokens. It imports no HTTP.
type Service struct {
	ent      *ent.Client
	reads    *database.Reads
	clock    clock.Clock
	audit    *audit.Recorder
	metrics  *metrics.Credentials
	bus      invalidation.Bus
	policies policy.Source
	verifier *bearer.Verifier[answer]
	byID     *bearer.Cache[string, *liveness]
	usage    usage.Reader
}

// idTopic invalidates the by-id liveness cache (Live), which JWTs exchanged from a token
// are checked against.
const idTopic = "ai_agent_id"

// Grant is what a token grants and to whom: shared by its record and its ai/me answer.
type Grant struct {
	ProjectID string   `json:"projectId"`
	AgentName string   `json:"agentName"`
	Scopes    []string `json:"scopes"`
	CreatedBy *string  `json:"createdBy"`
}

func grantOf(t *ent.AgentToken) Grant {
	g := Grant{ProjectID: t.ProjectID, AgentName: t.AgentName, Scopes: t.Scopes, CreatedBy: t.CreatedBy}
	if g.Scopes == nil {
		g.Scopes = []string{}
	}
	return g
}

// Agent is the token record of seed 4.1 / SPEC §5. Never a digest or a secret.
type Agent struct {
	ID string `json:"id"`
	Grant
	CreatedAt  time.Time  `json:"createdAt"`
	ExpiresAt  time.Time  `json:"expiresAt"`
	LastUsedAt *time.Time `json:"lastUsedAt"`
	// Usage24h counts its verifications of the last 24 hours by outcome (SPEC §19).
	Usage24h  usage.Totals `json:"usage24h"`
	TokenHint string       `json:"tokenHint"`
}

func view(t *ent.AgentToken) Agent {
	a := Agent{ID: t.ID, Grant: grantOf(t), CreatedAt: t.CreatedAt.UTC(), ExpiresAt: t.ExpiresAt.UTC(), TokenHint: t.TokenHint}
	if t.LastUsedAt != nil {
		u := t.LastUsedAt.UTC()
		a.LastUsedAt = &u
	}
	return a
}

// Verified is what ai/me reports of a valid token.
type Verified struct {
	TokenID string `json:"tokenId"`
	Grant
	ExpiresAt time.Time `json:"expiresAt"`
}

// CreateRequest is a validated create body.
type CreateRequest struct {
	AgentName string
	Scopes    []string
	TTLHours  float64
	// TTLGiven says ttlHours was in the body (a default is clamped to the policy, a given
	// value over it is refused).
	TTLGiven bool
}

// ParseCreate reads a create body; a missing or unparsable body is {} (seed 4.1).
func ParseCreate(body []byte) (CreateRequest, error) {
	o := jsonbody.ParseOrEmpty(body)
	req := CreateRequest{AgentName: defaultName, Scopes: []string{}, TTLHours: defaultTTL}
	var problems []string
	switch s, st := o.String("agentName"); st {
	case jsonbody.OK:
		n := utf8.RuneCountInString(s)
		switch {
		case n < 1 || n > maxName:
			problems = append(problems, fmt.Sprintf("agentName must be 1 to %d characters", maxName))
		case strings.IndexFunc(s, unicode.IsControl) >= 0:
			problems = append(problems, "agentName must not contain control characters")
		default:
			req.AgentName = s
		}
	case jsonbody.Null, jsonbody.WrongType:
		problems = append(problems, "agentName must be a string")
	}
	switch ss, st := o.Strings("scopes"); st {
	case jsonbody.OK:
		if len(ss) > maxScopes {
			problems = append(problems, fmt.Sprintf("scopes may hold at most %d entries", maxScopes))
		}
		for _, s := range ss {
			if !scope.Valid(s) {
				problems = append(problems, fmt.Sprintf("scope %q must match %s", s, scope.Pattern))
				break
			}
		}
		if len(problems) == 0 {
			req.Scopes = ss
		}
	case jsonbody.Null, jsonbody.WrongType:
		problems = append(problems, "scopes must be an array of strings")
	}
	switch f, st := o.Number("ttlHours"); st {
	case jsonbody.OK:
		if f < minTTL || f > maxTTL {
			problems = append(problems, fmt.Sprintf("ttlHours must be between %g and %g", minTTL, maxTTL))
		} else {
			req.TTLHours, req.TTLGiven = f, true
		}
	case jsonbody.Null, jsonbody.WrongType:
		problems = append(problems, "ttlHours must be a number")
	}
	if len(problems) > 0 {
		return CreateRequest{}, invalidCreate(strings.Join(problems, "; "))
	}
	return req, nil
}

// Created is a new token with its one-time secret.
type Created struct {
	Agent     Agent
	Plaintext string
}

// Create mints a token and its audit record in one transaction.
func (s *Service) Create(ctx context.Context, projectID string, creator *string, req CreateRequest, origin audit.Origin) (Created, error) {
	req, err := s.withinPolicy(ctx, projectID, req)
	if err != nil {
		return Created{}, err
	}
	plaintext, err := secret.NewToken(tokenKind)
	if err != nil {
		return Created{}, errCreateFailed.Wrap(err)
	}
	now := s.clock.Now()
	ttl := time.Duration(math.Round(req.TTLHours * float64(time.Hour)))
	var t *ent.AgentToken
	err = database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		var err error
		t, err = tx.AgentToken.Create().
			SetProjectID(projectID).SetAgentName(req.AgentName).SetScopes(req.Scopes).
			SetNillableCreatedBy(creator).SetCreatedAt(now).SetExpiresAt(now.Add(ttl).Truncate(time.Second)).
			SetTokenHint(secret.Hint(plaintext)).SetDigest(secret.DigestOf(plaintext).Bytes()).
			Save(ctx)
		if err != nil {
			return err
		}
		_, err = s.audit.Record(ctx, tx, audit.Event{
			ActorID: creator, ProjectID: projectID, Action: "ai_token.create",
			Metadata: map[string]any{"tokenId": t.ID, "agentName": t.AgentName, "scopes": t.Scopes}, Origin: origin,
		})
		return err
	})
	if err != nil {
		return Created{}, errCreateFailed.Wrap(err)
	}
	s.metrics.Issued.WithLabelValues(Kind, "").Inc()
	return Created{Agent: view(t), Plaintext: plaintext}, nil
}

// withinPolicy applies the project's policy (SPEC §12): a ttlHours or a scope beyond it
// is 400 create_failed; the default lifetime is clamped to it.
func (s *Service) withinPolicy(ctx context.Context, projectID string, req CreateRequest) (CreateRequest, error) {
	pol, err := s.policies.Policy(ctx, projectID)
	if err != nil {
		return req, errCreateFailed.Wrap(err)
	}
	if max := pol.AgentTokenMaxTTLHours; max != nil && req.TTLHours > float64(*max) {
		if req.TTLGiven {
			return req, invalidCreate(fmt.Sprintf("ttlHours exceeds the project's policy (at most %d)", *max))
		}
		req.TTLHours = float64(*max)
	}
	for _, sc := range req.Scopes {
		if !pol.Allows(sc) {
			return req, invalidCreate(fmt.Sprintf("scope %q is not allowed by the project's policy", sc))
		}
	}
	return req, nil
}

// List is the project's tokens that are not revoked, newest first.
func (s *Service) List(ctx context.Context, projectID string) ([]Agent, error) {
	ts, err := s.ent.AgentToken.Query().
		Where(agenttoken.ProjectID(projectID), agenttoken.RevokedAtIsNil()).
		Order(agenttoken.ByID(sql.OrderDesc())).
		All(ctx)
	if err != nil {
		return nil, errListFailed.Wrap(err)
	}
	out := make([]Agent, 0, len(ts))
	for _, t := range ts {
		out = append(out, view(t))
	}
	err = usage.Last24h(ctx, s.usage, s.clock.Now(), projectID, Kind, out,
		func(a *Agent) string { return a.ID }, func(a *Agent, t usage.Totals) { a.Usage24h = t })
	return out, err
}

// Revoke revokes one of the project's tokens, with its audit record and the invalidation
// of every replica's cache, all in one transaction.
func (s *Service) Revoke(ctx context.Context, projectID, tokenID string, actor *string, origin audit.Origin) error {
	err := s.revoke(ctx, []predicate.AgentToken{agenttoken.ID(tokenID), agenttoken.ProjectID(projectID)}, actor, origin, nil, "")
	if errors.Is(err, ErrNotFound) {
		return ErrNotFound
	}
	if err != nil {
		return errRevokeFailed.Wrap(err)
	}
	return nil
}

// RevokePresented revokes the presented token (RFC 7009 self-revocation, a leak report):
// no actor, audited as r says.
func (s *Service) RevokePresented(ctx context.Context, token string, r credential.Revocation) error {
	if !secret.CheckToken(tokenKind, token) {
		return credential.ErrNotLive
	}
	d, now := secret.DigestOf(token).Bytes(), s.clock.Now()
	matches := schema.Presented[predicate.AgentToken](schema.AgentTokenLifecycle, d, now)
	err := s.revoke(ctx, []predicate.AgentToken{matches, schema.Live[predicate.AgentToken](now)}, nil, r.Origin, r.Metadata, r.Action)
	if errors.Is(err, ErrNotFound) {
		return credential.ErrNotLive
	}
	return err
}

// revoke revokes the one live token matching where: the row, the invalidations of both
// caches (by digest and by id) and the audit record commit together.
func (s *Service) revoke(ctx context.Context, where []predicate.AgentToken, actor *string, origin audit.Origin, extra map[string]any, action string) error {
	err := database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		t, err := tx.AgentToken.Query().Where(where...).Where(agenttoken.RevokedAtIsNil()).Only(ctx)
		if ent.IsNotFound(err) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		n, err := tx.AgentToken.Update().
			Where(agenttoken.ID(t.ID), agenttoken.RevokedAtIsNil()).
			SetRevokedAt(s.clock.Now()).Save(ctx)
		if err != nil {
			return err
		}
		if n == 0 {
			return ErrNotFound
		}
		if err := s.verifier.Revoked(ctx, tx, t.Digest, bytesOf(t.PreviousDigest)); err != nil {
			return err
		}
		if err := s.bus.Publish(ctx, tx, idTopic, t.ID); err != nil {
			return err
		}
		metadata := map[string]any{"tokenId": t.ID}
		maps.Copy(metadata, extra)
		_, err = s.audit.Record(ctx, tx, audit.Event{
			ActorID: actor, ProjectID: t.ProjectID, Action: cmp.Or(action, "ai_token.revoke"), Metadata: metadata, Origin: origin,
		})
		return err
	})
	if err != nil {
		return err
	}
	s.metrics.Revoked.WithLabelValues(Kind, "").Inc()
	return nil
}

// Rolled is a token with its new one-time secret, and when the replaced secret stops.
type Rolled struct {
	Created
	PreviousSecretExpiresAt time.Time
}

// Roll gives one of the project's live tokens a new secret (SPEC §12): same id and record;
// the secret it replaces keeps verifying until grace ends (never past the token's own
// expiry), and the one an earlier roll replaced stops now. The row, the invalidations and
// the audit record commit together.
func (s *Service) Roll(ctx context.Context, projectID, tokenID string, grace time.Duration, actor *string, origin audit.Origin) (Rolled, error) {
	plaintext, err := secret.NewToken(tokenKind)
	if err != nil {
		return Rolled{}, errRollFailed.Wrap(err)
	}
	pol, err := s.policies.Policy(ctx, projectID)
	if err != nil {
		return Rolled{}, errRollFailed.Wrap(err)
	}
	now := s.clock.Now()
	var out Rolled
	err = database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		t, err := tx.AgentToken.Query().
			Where(agenttoken.ID(tokenID), agenttoken.ProjectID(projectID), schema.Live[predicate.AgentToken](now)).
			Only(ctx)
		if ent.IsNotFound(err) {
			return ErrRollNotFound
		}
		if err != nil {
			return err
		}
		if err := rollWithinPolicy(pol, t, now); err != nil {
			return err
		}
		replaced, earlier := t.Digest, bytesOf(t.PreviousDigest)
		until, keep := rollover.Until(now, grace, &t.ExpiresAt)
		u := tx.AgentToken.UpdateOne(t).SetDigest(secret.DigestOf(plaintext).Bytes()).SetTokenHint(secret.Hint(plaintext))
		if keep {
			u = u.SetPreviousDigest(t.Digest).SetPreviousExpiresAt(until)
		} else {
			until = now
			u = u.ClearPreviousDigest().ClearPreviousExpiresAt()
		}
		if t, err = u.Save(ctx); err != nil {
			return err
		}
		// The secret just replaced must now stop at until, and an earlier one at once.
		if err := s.verifier.Revoked(ctx, tx, replaced, earlier); err != nil {
			return err
		}
		_, err = s.audit.Record(ctx, tx, audit.Event{
			ActorID: actor, ProjectID: projectID, Action: "ai_token.roll", Origin: origin,
			Metadata: map[string]any{"tokenId": t.ID, "previousSecretExpiresAt": until.UTC()},
		})
		out = Rolled{Created: Created{Agent: view(t), Plaintext: plaintext}, PreviousSecretExpiresAt: until.UTC()}
		return err
	})
	if err != nil {
		if _, known := apperr.As(err); known {
			return Rolled{}, err
		}
		return Rolled{}, errRollFailed.Wrap(err)
	}
	s.metrics.Issued.WithLabelValues(Kind, "").Inc()
	return out, nil
}

// rollWithinPolicy refuses to give a new secret to a token the project's policy no longer
// allows: a scope it forbids, or more lifetime left than it grants.
func rollWithinPolicy(pol policy.Policy, t *ent.AgentToken, now time.Time) error {
	if max := pol.AgentTokenMaxTTLHours; max != nil && t.ExpiresAt.Sub(now) > time.Duration(*max)*time.Hour {
		return invalidRoll(fmt.Sprintf("the token outlives the project's policy (at most %d hours)", *max))
	}
	for _, sc := range t.Scopes {
		if !pol.Allows(sc) {
			return invalidRoll(fmt.Sprintf("scope %q is not allowed by the project's policy", sc))
		}
	}
	return nil
}

// liveGrant is a live agent token, as token exchange sees it.
type liveGrant struct {
	TokenID, ProjectID, AgentName string
	Scopes                        []string
	ExpiresAt                     time.Time
}

// Grant verifies a presented token for token exchange and introspection.
func (s *Service) Grant(ctx context.Context, token string) (liveGrant, error) {
	if !secret.CheckToken(tokenKind, token) {
		return liveGrant{}, credential.ErrNotLive
	}
	e, err := s.verifier.Verify(ctx, token) // bearer.ErrInvalid is credential.ErrNotLive
	if err != nil {
		return liveGrant{}, err
	}
	v := e.Value.info
	// The entry's expiry, not the token's: a replaced secret in its grace ends at the
	// grace's end, and so must everything derived from it (SPEC §9a).
	exp := v.ExpiresAt
	if e.ExpiresAt != nil && e.ExpiresAt.Before(exp) {
		exp = *e.ExpiresAt
	}
	return liveGrant{TokenID: v.TokenID, ProjectID: v.ProjectID, AgentName: v.AgentName, Scopes: v.Scopes, ExpiresAt: exp}, nil
}

// liveness is what Live needs of a token, cached by id.
type liveness struct {
	revoked   bool
	expiresAt time.Time
}

// Live reports whether the token with this id is live, from the by-id cache (a revoke
// anywhere clears its entry in the same transaction's commit).
func (s *Service) Live(ctx context.Context, tokenID string) (bool, error) {
	l, err := s.byID.Load(ctx, tokenID, func(ctx context.Context) (*liveness, error) {
		t, err := database.Read(ctx, s.reads, idTopic, tokenID, func(ctx context.Context, h database.Handle) (*ent.AgentToken, error) {
			return h.Ent.AgentToken.Query().Where(agenttoken.ID(tokenID)).Select(agenttoken.FieldRevokedAt, agenttoken.FieldExpiresAt).Only(ctx)
		})
		if database.IsNoRow(err) {
			return &liveness{revoked: true}, nil
		}
		if err != nil {
			return nil, err
		}
		return &liveness{revoked: t.RevokedAt != nil, expiresAt: t.ExpiresAt}, nil
	})
	if err != nil {
		return false, err
	}
	return schema.LiveAt(s.clock.Now(), l.revoked, &l.expiresAt), nil
}

// Me checks a bearer token and returns its pre-encoded ai/me answer, or bearer.ErrInvalid
// for anything that is not a live token. The checksum is checked first, so malformed and
// guessed tokens never reach the caches or the store.
func (s *Service) Me(ctx context.Context, token string) ([]byte, error) {
	if !secret.CheckToken(tokenKind, token) {
		return nil, bearer.ErrInvalid
	}
	e, err := s.verifier.Verify(ctx, token)
	if err != nil {
		return nil, err
	}
	return e.Value.response, nil
}

// introspect is RFC 7662's answer for a live agent token of project (nil otherwise).
func (s *Service) introspect(ctx context.Context, token, project string) (map[string]any, error) {
	g, err := s.Grant(ctx, token)
	if errors.Is(err, credential.ErrNotLive) || (err == nil && g.ProjectID != project) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return map[string]any{"sub": g.TokenID, "token_id": g.TokenID, "agent_name": g.AgentName,
		"scope": strings.Join(g.Scopes, " "), "exp": g.ExpiresAt.Unix(), "token_type": "Bearer"}, nil
}
