package org

import (
	"context"
	"slices"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/orgmember"
	"github.com/authcore/authcore/ent/orgrole"
	"github.com/authcore/authcore/platform/identity"
)

// roster is identity.OrgRoster: SAML connections and SCIM directories provision their
// org's people through it (SPEC §27), with the same audit records an admin's change has.
type roster struct{ svc *Service }

var _ identity.OrgRoster = roster{}

func (r roster) Enroll(ctx context.Context, tx *ent.Tx, project, orgID, userID, role, actor string) error {
	if role == roleOwner {
		return identity.ErrNoOrgRole
	}
	if role != "" {
		if ok, err := roleExists(ctx, tx, project, role); err != nil || !ok {
			return cmpErr(err, identity.ErrNoOrgRole)
		}
	}
	a := Actor{ID: &actor, Project: project}
	m, err := tx.OrgMember.Query().Where(orgmember.OrgID(orgID), orgmember.ProjectID(project), orgmember.UserID(userID)).Only(ctx)
	switch {
	case ent.IsNotFound(err):
		if role == "" {
			role = "member"
		}
		if err := tx.OrgMember.Create().SetProjectID(project).SetOrgID(orgID).SetUserID(userID).SetRole(role).Exec(ctx); err != nil {
			return err
		}
		return r.svc.record(ctx, tx, a, actionMemberAdd, orgID, map[string]any{"userId": userID, "role": role})
	case err != nil:
		return err
	case role == "" || m.Role == role || m.Role == roleOwner:
		return nil
	}
	if err := tx.OrgMember.UpdateOne(m).SetRole(role).Exec(ctx); err != nil {
		return err
	}
	return r.svc.record(ctx, tx, a, actionMemberUpdate, orgID, map[string]any{"userId": userID, "role": role, "previousRole": m.Role})
}

func (r roster) Leave(ctx context.Context, tx *ent.Tx, project, orgID, userID, actor string) error {
	m, err := tx.OrgMember.Query().Where(orgmember.OrgID(orgID), orgmember.ProjectID(project), orgmember.UserID(userID)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if m.Role == roleOwner {
		if err := r.svc.notLastOwner(ctx, tx, project, orgID); err != nil {
			return err
		}
	}
	if err := tx.OrgMember.DeleteOne(m).Exec(ctx); err != nil {
		return err
	}
	return r.svc.record(ctx, tx, Actor{ID: &actor, Project: project}, actionMemberRemove, orgID, map[string]any{"userId": userID, "role": m.Role})
}

func (r roster) RoleExists(ctx context.Context, project, role string) (bool, error) {
	if slices.Contains(builtInRoles, role) {
		return true, nil
	}
	return r.svc.ent.OrgRole.Query().Where(orgrole.ProjectID(project), orgrole.Name(role)).Exist(ctx)
}
