package org

import (
	"context"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/org"
	"github.com/authcore/authcore/ent/orgmember"
	"github.com/authcore/authcore/platform/identity"
)

// Directory answers which orgs exist and whose they are, for those who only read: the
// credentials bound to an org (identity.Orgs) and a tenant user's list of their orgs.
type Directory struct{ ent *ent.Client }

var _ identity.Orgs = Directory{}

// OrgExists is identity.Orgs': whether orgID is an org of project.
func (d Directory) OrgExists(ctx context.Context, project, orgID string) (bool, error) {
	return d.ent.Org.Query().Where(org.ID(orgID), org.ProjectID(project)).Exist(ctx)
}

// MyOrg is one of a person's orgs with their role in it.
type MyOrg struct {
	Org
	Role string `json:"role"`
}

// OrgsOf are the orgs of project userID is a member of, with their role, oldest
// membership first.
func (d Directory) OrgsOf(ctx context.Context, project, userID string) ([]MyOrg, error) {
	ms, err := d.ent.OrgMember.Query().Where(orgmember.ProjectID(project), orgmember.UserID(userID)).
		Order(ent.Asc(orgmember.FieldCreatedAt), ent.Asc(orgmember.FieldID)).All(ctx)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(ms))
	for i, m := range ms {
		ids[i] = m.OrgID
	}
	orgs, err := d.ent.Org.Query().Where(org.ProjectID(project), org.IDIn(ids...)).All(ctx)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]*ent.Org, len(orgs))
	for _, o := range orgs {
		byID[o.ID] = o
	}
	out := make([]MyOrg, 0, len(ms))
	for _, m := range ms {
		if o, ok := byID[m.OrgID]; ok {
			out = append(out, MyOrg{Org: viewOf(o), Role: m.Role})
		}
	}
	return out, nil
}
