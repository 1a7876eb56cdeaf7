package org

import (
	"context"
	"slices"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/org"
	"github.com/authcore/authcore/ent/orgmember"
	"github.com/authcore/authcore/ent/orgrole"
	"github.com/authcore/authcore/platform/identity"
)

var _ identity.OrgMemberships = (*Service)(nil)

// Membership is identity.OrgMemberships': read when a token or a session is signed, never
// when one is verified, so that a changed role shows in the next token without a cache.
func (s *Service) Membership(ctx context.Context, project, orgID, userID string) (identity.OrgMembership, bool, error) {
	m, err := s.ent.OrgMember.Query().Where(orgmember.ProjectID(project), orgmember.OrgID(orgID), orgmember.UserID(userID)).Only(ctx)
	if ent.IsNotFound(err) {
		return identity.OrgMembership{}, false, nil
	}
	if err != nil {
		return identity.OrgMembership{}, false, err
	}
	out, err := s.memberships(ctx, project, []*ent.OrgMember{m})
	if err != nil || len(out) == 0 {
		return identity.OrgMembership{}, false, err
	}
	return out[0], true, nil
}

// MembershipsOf is identity.OrgMemberships': every org of project userID belongs to.
func (s *Service) MembershipsOf(ctx context.Context, project, userID string) ([]identity.OrgMembership, error) {
	rows, err := s.ent.OrgMember.Query().Where(orgmember.ProjectID(project), orgmember.UserID(userID)).
		Order(ent.Asc(orgmember.FieldCreatedAt), ent.Asc(orgmember.FieldID)).All(ctx)
	if err != nil || len(rows) == 0 {
		return []identity.OrgMembership{}, err
	}
	return s.memberships(ctx, project, rows)
}

// memberships joins members with their orgs' names and their roles' permissions: one
// query for each, whatever the number of memberships.
func (s *Service) memberships(ctx context.Context, project string, rows []*ent.OrgMember) ([]identity.OrgMembership, error) {
	orgIDs, roles := make([]string, 0, len(rows)), make([]string, 0, len(rows))
	for _, m := range rows {
		orgIDs = append(orgIDs, m.OrgID)
		if !slices.Contains(builtInRoles, m.Role) {
			roles = append(roles, m.Role)
		}
	}
	orgs, err := s.ent.Org.Query().Where(org.ProjectID(project), org.IDIn(orgIDs...)).All(ctx)
	if err != nil {
		return nil, err
	}
	names := make(map[string]string, len(orgs))
	for _, o := range orgs {
		names[o.ID] = o.Name
	}
	perms := map[string][]string{}
	if len(roles) > 0 {
		defined, err := s.ent.OrgRole.Query().Where(orgrole.ProjectID(project), orgrole.NameIn(roles...)).All(ctx)
		if err != nil {
			return nil, err
		}
		for _, r := range defined {
			perms[r.Name] = r.Permissions
		}
	}
	out := make([]identity.OrgMembership, 0, len(rows))
	for _, m := range rows {
		name, ok := names[m.OrgID]
		if !ok {
			continue // the org was deleted since
		}
		p := perms[m.Role]
		if p == nil {
			p = []string{}
		}
		out = append(out, identity.OrgMembership{OrgID: m.OrgID, OrgName: name, Role: m.Role, Permissions: p})
	}
	return out, nil
}
