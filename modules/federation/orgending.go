package federation

import (
	"context"

	"github.com/authcore/authcore/ent"
	entidentity "github.com/authcore/authcore/ent/identity"
	"github.com/authcore/authcore/ent/samlconnection"
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
	// Its SAML connections (SPEC §27) go the same way, with the identities linked through them.
	sc, err := tx.SAMLConnection.Query().Where(samlconnection.TenantID(project), samlconnection.OrgID(orgID)).IDs(ctx)
	if err != nil {
		return "", 0, err
	}
	if _, err := tx.Identity.Delete().Where(entidentity.ProviderIDIn(sc...)).Exec(ctx); err != nil {
		return "", 0, err
	}
	if _, err := tx.SAMLConnection.Delete().Where(samlconnection.IDIn(sc...)).Exec(ctx); err != nil {
		return "", 0, err
	}
	return "connections", len(rows) + len(sc), nil
}
