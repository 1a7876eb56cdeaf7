package org

import (
	"context"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/platform/identity"
)

// policies answers identity.OrgPolicies: deprovisioning reads the policy of the org whose
// directory acts (SPEC §27) by the org's id, not by a domain.
type policies struct{ ent *ent.Client }

var _ identity.OrgPolicies = policies{}

func (p policies) OrgPolicy(ctx context.Context, projectID, orgID string) (identity.OrgPolicy, bool, error) {
	if ok, err := (Directory{ent: p.ent}).OrgExists(ctx, projectID, orgID); err != nil || !ok {
		return identity.OrgPolicy{}, false, err
	}
	pol, err := policyOf(ctx, p.ent.OrgPolicy, projectID, orgID)
	if err != nil {
		return identity.OrgPolicy{}, false, err
	}
	return pol.identity(orgID), true, nil
}
