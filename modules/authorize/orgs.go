package authorize

import (
	"errors"

	"context"
	"github.com/authcore/authcore/ent"
	"net/url"
	"regexp"

	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/oauth"
)

// orgIDPattern is an org id's shape (org_ and the id's base32): a request's organization=
// is checked for it before anything is looked up.
var orgIDPattern = regexp.MustCompile(`^org_[0-9A-Za-z]{1,60}$`)

// readOrganization is the request's organization= (SPEC §26), or why it cannot be one.
// Only an app's sign-in names one: the app's project is the orgs' project.
func readOrganization(q url.Values, app bool) (string, string) {
	switch v := q.Get("organization"); {
	case len(q["organization"]) > 1:
		return "", "organization is given more than once"
	case v == "":
		return "", ""
	case !app:
		return "", "organization is for an app's sign-in (SPEC §26); this client is not a project's app"
	case !orgIDPattern.MatchString(v):
		return "", "organization must be an organization id (org_…)"
	default:
		return v, ""
	}
}

// errNotOrgMember refuses a sign-in for an organisation the person is not a member of,
// as the request named it or as they picked it.
var errNotOrgMember = apperr.New(apperr.KindForbidden, "access_denied", "you are not a member of the organization the application asked for")

// errPickOrg asks the person to pick one of their organisations (the console shows them).
var errPickOrg = apperr.New(apperr.KindInvalid, "org_required", "you belong to several organizations: choose the one to sign in to")

// orgChoice decides the organisation of userID's sign-in to an app of project (SPEC §26):
// the one the request named (requested) or the person picked (picked), which they must
// belong to; else their only one; else the SSO session's active one (active) when it is
// one of theirs. pick lists their orgs when they must choose; "" and no pick is none.
func (s *service) orgChoice(ctx context.Context, project, userID, requested, picked, active string) (orgID string, pick []identity.OrgMembership, err error) {
	if s.orgs == nil {
		return "", nil, nil
	}
	ms, err := s.orgs.MembershipsOf(ctx, project, userID)
	if err != nil {
		return "", nil, err
	}
	has := func(id string) bool {
		for _, m := range ms {
			if m.OrgID == id {
				return true
			}
		}
		return false
	}
	for _, want := range []string{requested, picked} {
		if want == "" {
			continue
		}
		if !has(want) {
			return "", nil, errNotOrgMember
		}
		if requested != "" && picked != "" && picked != requested {
			return "", nil, apperr.BadRequest("org_fixed", "the application asked for the organization "+requested)
		}
		return want, nil, nil
	}
	switch {
	case len(ms) == 0:
		return "", nil, nil
	case len(ms) == 1:
		return ms[0].OrgID, nil, nil
	case active != "" && has(active):
		return active, nil, nil
	}
	return "", ms, nil
}

// orgOf is the person's membership of the organisation their sign-in was for, read when a
// token is issued: a membership ended since ends the grant's tokens for that org.
func (s *service) orgOf(ctx context.Context, project, userID, orgID string) (*identity.OrgMembership, error) {
	if orgID == "" || s.orgs == nil {
		return nil, nil
	}
	m, ok, err := s.orgs.Membership(ctx, project, orgID, userID)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, invalidGrant("the person is no longer a member of the organization they signed in for")
	}
	return &m, nil
}

// withOrg adds an organisation's claims to an access token's.
func withOrg(c oauth.Claims, m *identity.OrgMembership) oauth.Claims {
	if m != nil {
		c.OrgID, c.OrgRole, c.OrgPermissions = m.OrgID, m.Role, &m.Permissions
	}
	return c
}

// activeOrg is the active organisation of p's session, as its access token says it.
func activeOrg(p identity.Principal) string {
	v, _ := p.Claims["org_id"].(string)
	return v
}

// orgView fills v's organisation for a tenant user's request: decided, to pick, or
// refused when the request names an organisation the person is not a member of.
func (s *service) orgView(ctx context.Context, row *ent.OAuthAuthorization, p identity.Principal, v *consentView) error {
	org, pick, err := s.orgChoice(ctx, row.ProjectID, p.UserID, row.OrgID, "", activeOrg(p))
	if errors.Is(err, errNotOrgMember) {
		v.CanApprove, v.Remembered = false, false
		v.Reason = &errNotOrgMember.Message
		return nil
	}
	if err != nil {
		return err
	}
	if org != "" {
		v.OrgID = &org
	}
	if pick != nil {
		v.Orgs, v.Remembered = pick, false // the person's choice is wanted even when nothing else is
	}
	return nil
}
