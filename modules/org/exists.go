package org

import (
	"context"

	"github.com/authcore/authcore/ent/org"
)

// OrgExists is identity.OrgDomains': whether orgID is an org of project. Another
// project's org is not.
func (s *domains) OrgExists(ctx context.Context, projectID, orgID string) (bool, error) {
	if orgID == "" || len(orgID) > 40 {
		return false, nil
	}
	return s.ent.Org.Query().Where(org.ID(orgID), org.ProjectID(projectID)).Exist(ctx)
}
