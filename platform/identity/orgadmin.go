package identity

import "context"

// Orgs is supplied by the org module to those that bind a credential to an org of a
// project (agent tokens, badges; SPEC §26).
type Orgs interface {
	// OrgExists says whether orgID is an org of projectID.
	OrgExists(ctx context.Context, projectID, orgID string) (bool, error)
}
