package org

import (
	"context"
	"strings"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/orgdomain"
	"github.com/authcore/authcore/ent/orgmember"
	"github.com/authcore/authcore/ent/orgpolicy"
	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/identity"
)

const (
	actionPolicyPut = "org.policy_put"
	// maxSessionHours bounds sessionMaxHours: 30 days, the longest refresh lifetime.
	maxSessionHours = 720
)

// AutoJoin is the role a person who proves an address in the org's verified domains is
// given.
type AutoJoin struct {
	Role string `json:"role"`
}

// Policy is what an org asks of the addresses in its verified domains (SPEC §26).
type Policy struct {
	SSORequired bool `json:"ssoRequired"`
	MFARequired bool `json:"mfaRequired"`
	// SessionMaxHours is 0 for the project's own session lifetime, else 1 to 720.
	SessionMaxHours           int       `json:"sessionMaxHours"`
	AutoJoin                  *AutoJoin `json:"autoJoin"`
	RevokeMintedOnDeprovision bool      `json:"revokeMintedOnDeprovision"`
}

func (p Policy) identity(orgID string) identity.OrgPolicy {
	out := identity.OrgPolicy{OrgID: orgID, SSORequired: p.SSORequired, MFARequired: p.MFARequired,
		SessionMaxHours: p.SessionMaxHours, RevokeMintedOnDeprovision: p.RevokeMintedOnDeprovision}
	if p.AutoJoin != nil {
		out.AutoJoinRole = p.AutoJoin.Role
	}
	return out
}

// policyOf is an org's policy; an org that never set one has every rule off.
func policyOf(ctx context.Context, c *ent.OrgPolicyClient, project, orgID string) (Policy, error) {
	r, err := c.Query().Where(orgpolicy.ID(orgID), orgpolicy.ProjectID(project)).Only(ctx)
	if ent.IsNotFound(err) {
		return Policy{}, nil
	}
	if err != nil {
		return Policy{}, err
	}
	p := Policy{SSORequired: r.SSORequired, MFARequired: r.MfaRequired, SessionMaxHours: r.SessionMaxHours,
		RevokeMintedOnDeprovision: r.RevokeMintedOnDeprovision}
	if r.AutoJoinRole != nil {
		p.AutoJoin = &AutoJoin{Role: *r.AutoJoinRole}
	}
	return p, nil
}

// Policy is an org's policy.
func (s *domains) Policy(ctx context.Context, project, orgID string) (Policy, error) {
	if _, err := row(ctx, s.ent.Org, project, orgID); err != nil {
		return Policy{}, err
	}
	return policyOf(ctx, s.ent.OrgPolicy, project, orgID)
}

var errNoAutoJoinRole = apperr.Validation(apperr.Issue{Field: "autoJoin.role", Reason: "not a role of this project's orgs: owner, admin, member or one PUT …/org-roles defines"})

// PutPolicy replaces an org's policy (checked by the handler, but for the role, which
// must be one the project's orgs have).
func (s *domains) PutPolicy(ctx context.Context, a Actor, orgID string, p Policy) (Policy, error) {
	err := database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		if _, err := row(ctx, tx.Org, a.Project, orgID); err != nil {
			return err
		}
		var role *string
		if p.AutoJoin != nil {
			if ok, err := roleExists(ctx, tx, a.Project, p.AutoJoin.Role); err != nil || !ok {
				return cmpErr(err, errNoAutoJoinRole)
			}
			role = &p.AutoJoin.Role
		}
		exists, err := tx.OrgPolicy.Query().Where(orgpolicy.ID(orgID), orgpolicy.ProjectID(a.Project)).Exist(ctx)
		if err != nil {
			return err
		}
		if exists {
			upd := tx.OrgPolicy.UpdateOneID(orgID).SetSSORequired(p.SSORequired).SetMfaRequired(p.MFARequired).
				SetSessionMaxHours(p.SessionMaxHours).SetRevokeMintedOnDeprovision(p.RevokeMintedOnDeprovision)
			if role != nil {
				upd.SetAutoJoinRole(*role)
			} else {
				upd.ClearAutoJoinRole()
			}
			err = upd.Exec(ctx)
		} else {
			err = tx.OrgPolicy.Create().SetID(orgID).SetProjectID(a.Project).SetSSORequired(p.SSORequired).SetMfaRequired(p.MFARequired).
				SetSessionMaxHours(p.SessionMaxHours).SetNillableAutoJoinRole(role).SetRevokeMintedOnDeprovision(p.RevokeMintedOnDeprovision).Exec(ctx)
		}
		if err != nil {
			return err
		}
		md := map[string]any{"ssoRequired": p.SSORequired, "mfaRequired": p.MFARequired, "sessionMaxHours": p.SessionMaxHours,
			"autoJoinRole": role, "revokeMintedOnDeprovision": p.RevokeMintedOnDeprovision}
		return s.record(ctx, tx, a, actionPolicyPut, orgID, md)
	})
	if err != nil {
		return Policy{}, err
	}
	return p, nil
}

// AutoJoin is identity.OrgDomains': userID, who has just proven email, joins the org
// that verified its domain with the role its policy gives, in the caller's tx. Nothing
// happens without such an org, without autoJoin, or for a member already.
func (s *domains) AutoJoin(ctx context.Context, tx *ent.Tx, projectID, userID, email string) error {
	addr, ok := identity.NormalizeEmail(email)
	if !ok {
		return nil
	}
	_, domain, _ := strings.Cut(addr, "@")
	d, err := tx.OrgDomain.Query().Where(orgdomain.ProjectID(projectID), orgdomain.Domain(domain), orgdomain.VerifiedAtNotNil()).Only(ctx)
	if ent.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	p, err := policyOf(ctx, tx.OrgPolicy, projectID, d.OrgID)
	if err != nil || p.AutoJoin == nil {
		return err
	}
	member, err := tx.OrgMember.Query().Where(orgmember.OrgID(d.OrgID), orgmember.ProjectID(projectID), orgmember.UserID(userID)).Exist(ctx)
	if err != nil || member {
		return err
	}
	if err := tx.OrgMember.Create().SetProjectID(projectID).SetOrgID(d.OrgID).SetUserID(userID).SetRole(p.AutoJoin.Role).Exec(ctx); err != nil {
		return err
	}
	a := Actor{ID: &userID, Project: projectID}
	return s.record(ctx, tx, a, actionMemberAdd, d.OrgID, map[string]any{"userId": userID, "role": p.AutoJoin.Role, "autoJoin": true, "domain": domain})
}

var _ identity.OrgDomains = (*domains)(nil)
