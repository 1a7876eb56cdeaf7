package agenttoken

import (
	"context"

	"github.com/authcore/authcore/platform/oauth"
)

// agents lets an agent token act as a client of its project (SPEC §23: it asks a person
// for approval, and people choose it for their connections): oauth.Agents.
type agents struct{ svc *Service }

var _ oauth.Agents = agents{}

func (a agents) Agent(ctx context.Context, token string) (oauth.Client, error) {
	g, err := a.svc.Grant(ctx, token)
	if err != nil {
		return oauth.Client{}, err
	}
	if g.JKT != "" && g.JKT != oauth.DPoPKeyOf(ctx) { // a bound token is no secret alone (SPEC §22)
		return oauth.Client{}, oauth.ErrDPoPKeyRequired("invalid_client")
	}
	expires := g.ExpiresAt
	return oauth.Client{ID: g.TokenID, ProjectID: g.ProjectID, Scopes: g.Scopes, ExpiresAt: &expires, Name: g.AgentName}, nil
}

// Agents lists the project's agent tokens that are neither revoked nor expired.
func (a agents) Agents(ctx context.Context, projectID string) ([]oauth.Client, error) {
	rs, err := a.svc.life.List(ctx, projectID)
	if err != nil {
		return nil, err
	}
	now := a.svc.clock.Now()
	out := make([]oauth.Client, 0, len(rs))
	for _, r := range rs {
		if r.ExpiresAt != nil && !r.ExpiresAt.After(now) {
			continue
		}
		out = append(out, oauth.Client{ID: r.ID, ProjectID: r.ProjectID, Scopes: r.Strings(fieldScopes), ExpiresAt: r.ExpiresAt, Name: r.String(fieldAgentName)})
	}
	return out, nil
}
