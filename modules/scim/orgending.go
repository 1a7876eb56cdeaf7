package scim

import (
	"context"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/scimdirectory"
	"github.com/authcore/authcore/ent/scimresource"
)

// orgDirectories drops an org's directories and their SCIM records when the org is
// deleted (identity.OrgEnding): a deleted org's IdP must not go on provisioning people.
// The people stay users of the tenant, as when a directory alone is deleted.
type orgDirectories struct{}

func (orgDirectories) OrgDeleted(ctx context.Context, tx *ent.Tx, project, orgID string) (string, int, error) {
	ids, err := tx.SCIMDirectory.Query().Where(scimdirectory.ProjectID(project), scimdirectory.OrgID(orgID)).IDs(ctx)
	if err != nil || len(ids) == 0 {
		return "scim_directories", 0, err
	}
	if _, err := tx.SCIMResource.Delete().Where(scimresource.ProjectID(project), scimresource.DirectoryIDIn(ids...)).Exec(ctx); err != nil {
		return "", 0, err
	}
	n, err := tx.SCIMDirectory.Delete().Where(scimdirectory.ProjectID(project), scimdirectory.IDIn(ids...)).Exec(ctx)
	return "scim_directories", n, err
}
