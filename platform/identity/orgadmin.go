package identity

import "context"

// OrgRoles is supplied by the org module to the guard of the org admins' routes (SPEC
// §26), wherever they live (the org module's, the agent tokens'), so that one function
// decides who may act as an org's admin; and to those that bind a credential to an org.
type OrgRoles interface {
	// OrgExists says whether orgID is an org of projectID.
	OrgExists(ctx context.Context, projectID, orgID string) (bool, error)
	// OrgRole is userID's role in orgID of projectID; ok is false when orgID is no org of
	// that project or they are not its member.
	OrgRole(ctx context.Context, projectID, orgID, userID string) (role string, ok bool, err error)
}
