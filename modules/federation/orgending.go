package federation

import (
	"context"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/signinprovider"
)

// orgConnections drops an org's connections, with their identities and domains, when the
// org is deleted (identity.OrgEnding): a connection of an org that is no more must not go
// on signing people in with that org's id.
type orgConnections struct{}

func (o orgConnections) OrgDeleted(ctx context.Context, tx *ent.Tx, project, orgID string) (string, int, error) {
	rows, err := tx.SignInProvider.Query().Where(signinprovider.TenantID(project), signinprovider.OrgID(orgID)).All(ctx)
	if err != nil {
		return "", 0, err
	}
	for _, r := range rows {
		if _, err := removeProvider(ctx, tx, r.ID); err != nil {
			return "", 0, err
		}
	}
	return "connections", len(rows), nil
}
