package agenttoken

import (
	"context"
	entgo "entgo.io/ent"
	"entgo.io/ent/schema/field"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/authcore/authcore/ent/schema"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/dpop"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/jsonbody"
	"github.com/authcore/authcore/platform/lifecycle"
	"github.com/authcore/authcore/platform/policy"
	"github.com/authcore/authcore/platform/scope"
)

// Kind is the credential kind of agent tokens: the metrics label and invalidation topic.
const Kind = "ai_agent"

// tokenKind prefixes agent tokens: ac_ai_….
const tokenKind = "ai"

// idPrefix begins every agent token id (ent/schema).
var idPrefix = schema.AgentTokenIDPrefix

// Defaults and bounds of SPEC §5.
const (
	defaultName    = "agent"
	maxName        = 100
	maxScopes      = 32
	defaultTTL     = 720.0
	minTTL, maxTTL = 1.0, 8760.0
	maxOrgID       = 64
)

// Own fields of an agent token.
const (
	fieldAgentName = "agent_name"
	fieldScopes    = "scopes"
	fieldDPoPJKT   = "dpop_jkt"
	fieldOrgID     = "org_id"
)

// Table is the agent tokens' table (seed 4.1, SPEC §5). Only the SHA-256 of a token is
// stored; every token expires.
var Table = lifecycle.Declare(lifecycle.Table{
	Name:  "agent_tokens",
	Mixin: schema.KindMixin{IDPrefix: schema.AgentTokenIDPrefix, Hint: "token_hint", ExpiresRequired: true},
	Fields: []entgo.Field{
		field.String(fieldAgentName).Immutable().NotEmpty(),
		field.JSON(fieldScopes, []string{}).Immutable(),
		// dpop_jkt binds the token to a DPoP key (SPEC §22): its RFC 7638 thumbprint. A
		// bound token verifies only with a proof by that key.
		field.String(fieldDPoPJKT).Optional().Nillable().Immutable(),
		// org_id binds the token to one org of its project (SPEC §26): its answers and the
		// tokens exchanged for it carry it, and that org's admins manage it. Kept in the
		// row, so the verifier's cache holds it and no request reads more for it.
		field.String(fieldOrgID).Optional().Nillable().Immutable(),
	},
})

// Service is agent tokens: the shared lifecycle with the agent tokens' own rules.
type Service struct {
	life     *lifecycle.Lifecycle
	policies policy.Source
	clock    clock.Clock
	// orgs says which orgs a project has (SPEC §26); nil in a binary without the org
	// module, where no token is bound to an org.
	orgs identity.Orgs
}

// NewService returns the service.
func NewService(p Params) (*Service, error) {
	life, err := lifecycle.New(p.Lifecycle, lifecycle.Spec{
		Name: Kind, Prefixes: []string{tokenKind}, Table: Table,
		Actions: "ai_token", IDField: "tokenId", BoundField: fieldDPoPJKT, Holder: audit.ActorAgentToken,
	}, lifecycle.Hooks{
		Answer: answer, Introspect: introspect,
		Org:      func(r *lifecycle.Row) string { return r.String(fieldOrgID) },
		NotFound: ErrNotFound, RollNotFound: ErrRollNotFound, Failed: failed,
	})
	if err != nil {
		return nil, err
	}
	return &Service{life: life, policies: p.Policies, clock: p.Lifecycle.Kit.Clock, orgs: p.Orgs}, nil
}

// meBody is the ai/me answer (seed 4.2): the verification fields merged into it.
type meBody struct {
	Engine        string    `json:"engine"`
	Authenticated bool      `json:"authenticated"`
	Kind          string    `json:"kind"`
	TokenID       string    `json:"tokenId"`
	ProjectID     string    `json:"projectId"`
	AgentName     string    `json:"agentName"`
	Scopes        []string  `json:"scopes"`
	CreatedBy     *string   `json:"createdBy"`
	ExpiresAt     time.Time `json:"expiresAt"`
	// OrgID is the org the token is bound to (SPEC §26), absent for an unbound one: the
	// seed's fields stay exactly as they were.
	OrgID string `json:"orgId,omitempty"`
}

func answer(dst []byte, r *lifecycle.Row) ([]byte, error) {
	return appendMe(dst, meBody{Engine: engineName, Authenticated: true, Kind: Kind, TokenID: r.ID, ProjectID: r.ProjectID,
		AgentName: r.String(fieldAgentName), Scopes: r.Strings(fieldScopes), CreatedBy: r.CreatedBy, ExpiresAt: *r.ExpiresAt,
		OrgID: r.String(fieldOrgID)})
}

// appendMe appends m as encoding/json encodes it, by hand: ai/me is the hottest route
// there is, and encoding/json's reflection took 2 µs of it a request, about 4% of the
// whole. FuzzMeMatchesEncodingJSON holds the two to the same bytes.
func appendMe(dst []byte, m meBody) ([]byte, error) {
	o := jsonbody.Begin(dst)
	o.String("engine", m.Engine)
	o.Bool("authenticated", m.Authenticated)
	o.String("kind", m.Kind)
	o.String("tokenId", m.TokenID)
	o.String("projectId", m.ProjectID)
	o.String("agentName", m.AgentName)
	o.Strings("scopes", m.Scopes)
	o.StringOrNull("createdBy", m.CreatedBy)
	o.Time("expiresAt", m.ExpiresAt)
	if m.OrgID != "" {
		o.String("orgId", m.OrgID)
	}
	return o.End()
}

// introspect is RFC 7662's answer for a live agent token (SPEC §11).
func introspect(r lifecycle.Row, fields map[string]any) {
	fields["token_id"], fields["agent_name"], fields["scope"] = r.ID, r.String(fieldAgentName), strings.Join(r.Strings(fieldScopes), " ")
	if org := r.String(fieldOrgID); org != "" {
		fields["org_id"] = org
	}
}

// CreateRequest is a validated create body.
type CreateRequest struct {
	AgentName string
	Scopes    []string
	TTLHours  float64
	// TTLGiven says ttlHours was in the body (a default is clamped to the policy, a given
	// value over it is refused).
	TTLGiven bool
	// DPoPJKT binds the token to a DPoP key (SPEC §22): its RFC 7638 thumbprint, or "".
	DPoPJKT string
	// OrgID binds the token to an org of the project (SPEC §26), or "".
	OrgID string
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
	switch j, st := o.String("dpopJkt"); st {
	case jsonbody.OK:
		if !dpop.ValidJKT(j) {
			problems = append(problems, "dpopJkt must be a key's RFC 7638 SHA-256 thumbprint (43 base64url characters)")
		} else {
			req.DPoPJKT = j
		}
	case jsonbody.WrongType:
		problems = append(problems, "dpopJkt must be a string")
	}
	switch id, st := o.String("orgId"); st {
	case jsonbody.OK:
		if !strings.HasPrefix(id, schema.OrgIDPrefix) || len(id) > maxOrgID {
			problems = append(problems, "orgId must be an org's id (org_…)")
		} else {
			req.OrgID = id
		}
	case jsonbody.WrongType:
		problems = append(problems, "orgId must be a string")
	}
	if len(problems) > 0 {
		return CreateRequest{}, invalidCreate(strings.Join(problems, "; "))
	}
	return req, nil
}

// mint is what Create hands the lifecycle: the request within the project's policy.
func (s *Service) mint(ctx context.Context, projectID string, req CreateRequest) (lifecycle.Mint, error) {
	now := s.clock.Now()
	req, err := s.withinPolicy(ctx, projectID, req)
	if err != nil {
		return lifecycle.Mint{}, err
	}
	expires := now.Add(time.Duration(math.Round(req.TTLHours * float64(time.Hour)))).Truncate(time.Second)
	own := map[string]any{fieldAgentName: req.AgentName, fieldScopes: req.Scopes}
	if req.DPoPJKT != "" {
		own[fieldDPoPJKT] = req.DPoPJKT
	}
	if req.OrgID != "" {
		ok := false
		if s.orgs != nil {
			if ok, err = s.orgs.OrgExists(ctx, projectID, req.OrgID); err != nil {
				return lifecycle.Mint{}, errCreateFailed.Wrap(err)
			}
		}
		if !ok { // another project's org is none of this one's either
			return lifecycle.Mint{}, invalidCreate("orgId names no org of this project")
		}
		own[fieldOrgID] = req.OrgID
	}
	return lifecycle.Mint{ExpiresAt: &expires, Own: own}, nil
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

// mayRoll reads the project's policy and refuses to give a new secret to a token it no
// longer allows: a scope it forbids, or more lifetime left than it grants.
func (s *Service) mayRoll(ctx context.Context, projectID string) (func(*lifecycle.Row, time.Time) error, error) {
	pol, err := s.policies.Policy(ctx, projectID)
	if err != nil {
		return nil, errRollFailed.Wrap(err)
	}
	return func(r *lifecycle.Row, now time.Time) error {
		if max := pol.AgentTokenMaxTTLHours; max != nil && r.ExpiresAt.Sub(now) > time.Duration(*max)*time.Hour {
			return invalidRoll(fmt.Sprintf("the token outlives the project's policy (at most %d hours)", *max))
		}
		for _, sc := range r.Strings(fieldScopes) {
			if !pol.Allows(sc) {
				return invalidRoll(fmt.Sprintf("scope %q is not allowed by the project's policy", sc))
			}
		}
		return nil
	}, nil
}

// liveGrant is a live agent token, as token exchange sees it.
type liveGrant struct {
	TokenID, ProjectID, AgentName string
	Scopes                        []string
	ExpiresAt                     time.Time
	JKT                           string // the DPoP key it is bound to, or ""
	OrgID                         string // the org it is bound to, or ""
}

// Grant verifies a presented token for token exchange: ErrNotLive (platform/credential) unless it
// is live; its expiry is the presented secret's (a replaced one ends with its grace).
func (s *Service) Grant(ctx context.Context, token string) (liveGrant, error) {
	r, err := s.life.Grant(ctx, token)
	if err != nil {
		return liveGrant{}, err
	}
	return liveGrant{TokenID: r.ID, ProjectID: r.ProjectID, AgentName: r.String(fieldAgentName), Scopes: r.Strings(fieldScopes), ExpiresAt: *r.ExpiresAt,
		JKT: r.String(fieldDPoPJKT), OrgID: r.String(fieldOrgID)}, nil
}

// Live reports whether the token with this id is live (what exchanged tokens are worth).
func (s *Service) Live(ctx context.Context, tokenID string) (bool, error) {
	return s.life.Live(ctx, tokenID)
}
