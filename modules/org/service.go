package org

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/org"
	"github.com/authcore/authcore/ent/orgdomain"
	"github.com/authcore/authcore/ent/orginvitation"
	"github.com/authcore/authcore/ent/orgmember"
	"github.com/authcore/authcore/ent/orgpolicy"
	"github.com/authcore/authcore/ent/orgrole"
	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/identity"
)

// The audit actions of orgs, in the project's trail.
const (
	actionCreate       = "org.create"
	actionUpdate       = "org.update"
	actionDelete       = "org.delete"
	actionMemberAdd    = "org.member_add"
	actionMemberUpdate = "org.member_update"
	actionMemberRemove = "org.member_remove"
	actionRolesPut     = "org.roles_put"
)

// The built-in roles by name.
const (
	roleOwner = "owner"
	roleAdmin = "admin"
)

const (
	maxName        = 80
	maxSlug        = 64
	maxRoles       = 50
	maxPermissions = 50
	maxRoleName    = 64
	maxPermission  = 128
)

// builtInRoles every org has (SPEC §26); a project defines others beside them, never
// instead of them.
var builtInRoles = []string{roleOwner, roleAdmin, "member"}

var (
	slugPattern       = regexp.MustCompile(`^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$`)
	roleNamePattern   = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)
	permissionPattern = regexp.MustCompile(`^[A-Za-z0-9_.*-]+(?::[A-Za-z0-9_.*-]+)*$`)
)

// Actor is who changes an org and from where, for the audit record.
type Actor struct {
	ID      *string
	Project string
	Origin  audit.Origin
	// OrgRole is the acting org admin's role in the org (owner or admin); "" for a project
	// admin, whom the owner rules do not bind.
	OrgRole string
}

// mayTouch refuses an org admin who is not an owner a change that grants, takes or
// changes the owner role: an admin can neither make an owner nor unmake one.
func (a Actor) mayTouch(roles ...string) error {
	if a.OrgRole == "" || a.OrgRole == roleOwner {
		return nil
	}
	if slices.Contains(roles, roleOwner) {
		return errOwnerRequired
	}
	return nil
}

// Org is an org as the API shows it.
type Org struct {
	ID        string    `json:"id"`
	ProjectID string    `json:"projectId"`
	Name      string    `json:"name"`
	Slug      string    `json:"slug"`
	CreatedAt time.Time `json:"createdAt"`
}

func viewOf(o *ent.Org) Org {
	return Org{ID: o.ID, ProjectID: o.ProjectID, Name: o.Name, Slug: o.Slug, CreatedAt: o.CreatedAt.UTC()}
}

// Member is a member of an org as the API shows it.
type Member struct {
	OrgID     string    `json:"orgId"`
	UserID    string    `json:"userId"`
	Email     string    `json:"email"`
	Role      string    `json:"role"`
	CreatedAt time.Time `json:"createdAt"`
}

// Role is a role members of the project's orgs may hold.
type Role struct {
	Name        string   `json:"name"`
	Permissions []string `json:"permissions"`
	BuiltIn     bool     `json:"builtIn"`
}

// checkName is why name cannot name an org, or "".
func checkName(name string) string {
	n := utf8.RuneCountInString(name)
	if n == 0 || n > maxName || strings.TrimSpace(name) == "" || strings.IndexFunc(name, invisible) >= 0 {
		return fmt.Sprintf("1 to %d characters, not only spaces, without control or format characters", maxName)
	}
	return ""
}

func invisible(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }

// checkSlug is why slug cannot be an org's slug, or "".
func checkSlug(slug string) string {
	if len(slug) == 0 || len(slug) > maxSlug || !slugPattern.MatchString(slug) {
		return fmt.Sprintf("1 to %d of a-z, 0-9 and '-', neither first nor last", maxSlug)
	}
	return ""
}

// slugOf derives a slug from a name: lower-case, each run of anything but a-z and 0-9
// one '-', none at either end, at most maxSlug. "" when the name has no a-z nor 0-9.
func slugOf(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			continue
		}
		dash = true
	}
	s := b.String()
	if len(s) > maxSlug {
		s = strings.TrimRight(s[:maxSlug], "-")
	}
	return s
}

// Service keeps orgs, their members and the project's org roles. It neither speaks HTTP
// nor reads users itself: tenant users come through identity.ProvenUsers.
type Service struct {
	ent     *ent.Client
	audit   *audit.Recorder
	users   identity.ProvenUsers
	emails  identity.Directory
	storage config.Storage
	clock   clock.Clock
	// selfURL is where setup links point (config.SelfURL).
	selfURL string
	// endings drop what other modules keep of an org it deletes (its connections, its
	// directories).
	endings []identity.OrgEnding
}

func (s *Service) record(ctx context.Context, tx *ent.Tx, a Actor, action, orgID string, md map[string]any) error {
	return record(ctx, s.audit, tx, a, action, orgID, md)
}

// record writes an org's audit event, in tx, with the org named.
func record(ctx context.Context, rec *audit.Recorder, tx *ent.Tx, a Actor, action, orgID string, md map[string]any) error {
	md["orgId"] = orgID
	id := orgID
	_, err := rec.Record(ctx, tx, audit.Event{ActorID: a.ID, ProjectID: a.Project, OrgID: &id, Action: action, Origin: a.Origin, Metadata: md})
	return err
}

// row is the org id names in project: another project's org is not found.
func row(ctx context.Context, c *ent.OrgClient, project, id string) (*ent.Org, error) {
	o, err := c.Query().Where(org.ID(id), org.ProjectID(project)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, errOrgNotFound
	}
	return o, err
}

// Create makes an org; slug is derived from the name when empty.
func (s *Service) Create(ctx context.Context, a Actor, name, slug string) (Org, error) {
	var o *ent.Org
	err := database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		var err error
		if o, err = tx.Org.Create().SetProjectID(a.Project).SetName(name).SetSlug(slug).Save(ctx); err != nil {
			return err
		}
		return s.record(ctx, tx, a, actionCreate, o.ID, map[string]any{"name": name, "slug": slug})
	})
	if ent.IsConstraintError(err) {
		return Org{}, errSlugTaken
	}
	if err != nil {
		return Org{}, err
	}
	return viewOf(o), nil
}

// List is the project's orgs, oldest first.
func (s *Service) List(ctx context.Context, project string) ([]Org, error) {
	rows, err := s.ent.Org.Query().Where(org.ProjectID(project)).Order(ent.Asc(org.FieldCreatedAt), ent.Asc(org.FieldID)).All(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Org, len(rows))
	for i, o := range rows {
		out[i] = viewOf(o)
	}
	return out, nil
}

// Get is one org of the project.
func (s *Service) Get(ctx context.Context, project, id string) (Org, error) {
	o, err := row(ctx, s.ent.Org, project, id)
	if err != nil {
		return Org{}, err
	}
	return viewOf(o), nil
}

// Update renames or re-slugs an org (nil leaves a field as it is).
func (s *Service) Update(ctx context.Context, a Actor, id string, name, slug *string) (Org, error) {
	var o *ent.Org
	err := database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		before, err := row(ctx, tx.Org, a.Project, id)
		if err != nil {
			return err
		}
		upd, changed := tx.Org.UpdateOne(before), []string{}
		if name != nil && *name != before.Name {
			upd.SetName(*name)
			changed = append(changed, "name")
		}
		if slug != nil && *slug != before.Slug {
			upd.SetSlug(*slug)
			changed = append(changed, "slug")
		}
		if len(changed) == 0 {
			o = before
			return nil
		}
		if o, err = upd.Save(ctx); err != nil {
			return err
		}
		return s.record(ctx, tx, a, actionUpdate, id, map[string]any{"changed": changed, "name": o.Name, "slug": o.Slug})
	})
	if ent.IsConstraintError(err) {
		return Org{}, errSlugTaken
	}
	if err != nil {
		return Org{}, err
	}
	return viewOf(o), nil
}

// Delete removes an org, its members and its invitations; n is how many members it had.
func (s *Service) Delete(ctx context.Context, a Actor, id string) (n int, err error) {
	err = database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		o, err := row(ctx, tx.Org, a.Project, id)
		if err != nil {
			return err
		}
		if n, err = tx.OrgMember.Delete().Where(orgmember.OrgID(o.ID), orgmember.ProjectID(a.Project)).Exec(ctx); err != nil {
			return err
		}
		// Its invitations go with it: a link to an org that is no more makes no member.
		if _, err := tx.OrgInvitation.Delete().Where(orginvitation.OrgID(o.ID), orginvitation.ProjectID(a.Project)).Exec(ctx); err != nil {
			return err
		}
		// Its domains go too: a deleted org must not keep a domain from the project's others.
		if _, err := tx.OrgDomain.Delete().Where(orgdomain.OrgID(o.ID), orgdomain.ProjectID(a.Project)).Exec(ctx); err != nil {
			return err
		}
		if _, err := tx.OrgPolicy.Delete().Where(orgpolicy.ID(o.ID), orgpolicy.ProjectID(a.Project)).Exec(ctx); err != nil {
			return err
		}
		md := map[string]any{"name": o.Name, "slug": o.Slug, "membersRemoved": n}
		for _, e := range s.endings {
			kind, dropped, err := e.OrgDeleted(ctx, tx, a.Project, o.ID)
			if err != nil {
				return err
			}
			md[kind+"Removed"] = dropped
		}
		if err := tx.Org.DeleteOne(o).Exec(ctx); err != nil {
			return err
		}
		return s.record(ctx, tx, a, actionDelete, id, md)
	})
	return n, err
}

// Roles are the built-in roles, then the project's, by name.
func (s *Service) Roles(ctx context.Context, project string) ([]Role, error) {
	rows, err := s.ent.OrgRole.Query().Where(orgrole.ProjectID(project)).Order(ent.Asc(orgrole.FieldName)).All(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Role, 0, len(builtInRoles)+len(rows))
	for _, name := range builtInRoles {
		out = append(out, Role{Name: name, Permissions: []string{}, BuiltIn: true})
	}
	for _, r := range rows {
		out = append(out, Role{Name: r.Name, Permissions: nonNil(r.Permissions)})
	}
	return out, nil
}

// PutRoles replaces the project's roles with roles (checked by the handler). A role that
// members hold cannot go: they would hold a role nobody defines.
func (s *Service) PutRoles(ctx context.Context, a Actor, roles []Role) error {
	return database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		names := make([]string, len(roles))
		for i, r := range roles {
			names[i] = r.Name
		}
		held, err := tx.OrgMember.Query().Where(orgmember.ProjectID(a.Project), orgmember.RoleNotIn(append(names, builtInRoles...)...)).Exist(ctx)
		if err != nil {
			return err
		}
		if !held { // an org's autoJoin role holds it too
			held, err = tx.OrgPolicy.Query().Where(orgpolicy.ProjectID(a.Project), orgpolicy.AutoJoinRoleNotNil(),
				orgpolicy.AutoJoinRoleNotIn(append(names, builtInRoles...)...)).Exist(ctx)
			if err != nil {
				return err
			}
		}
		if held {
			return errRoleInUse
		}
		if _, err := tx.OrgRole.Delete().Where(orgrole.ProjectID(a.Project)).Exec(ctx); err != nil {
			return err
		}
		creates := make([]*ent.OrgRoleCreate, len(roles))
		for i, r := range roles {
			creates[i] = tx.OrgRole.Create().SetProjectID(a.Project).SetName(r.Name).SetPermissions(nonNil(r.Permissions))
		}
		if _, err := tx.OrgRole.CreateBulk(creates...).Save(ctx); err != nil {
			return err
		}
		_, err = s.audit.Record(ctx, tx, audit.Event{ActorID: a.ID, ProjectID: a.Project, Action: actionRolesPut, Origin: a.Origin,
			Metadata: map[string]any{"roles": names}})
		return err
	})
}

// roleExists says whether role is built in or defined by project.
func roleExists(ctx context.Context, tx *ent.Tx, project, role string) (bool, error) {
	if slices.Contains(builtInRoles, role) {
		return true, nil
	}
	return tx.OrgRole.Query().Where(orgrole.ProjectID(project), orgrole.Name(role)).Exist(ctx)
}

// errNoRole is the answer to a role that is neither built in nor defined.
var errNoRole = apperr.Validation(apperr.Issue{Field: "role", Reason: "not a role of this project's orgs: owner, admin, member or one PUT …/org-roles defines"})

// tenantUser is the user of the project's tenant that userID or email names.
func (s *Service) tenantUser(ctx context.Context, project, userID, email string) (identity.Account, error) {
	if userID != "" {
		acc, err := s.users.Account(ctx, userID)
		if ent.IsNotFound(err) || (err == nil && acc.TenantID != project) {
			return identity.Account{}, errUserNotFound
		}
		return acc, err
	}
	acc, ok, err := s.users.AccountByEmail(ctx, project, email)
	if err == nil && !ok {
		return identity.Account{}, errUserNotFound
	}
	return acc, err
}

// AddMember makes a user of the project's tenant, named by id or by email, a member.
func (s *Service) AddMember(ctx context.Context, a Actor, orgID, userID, email, role string) (Member, error) {
	if err := a.mayTouch(role); err != nil {
		return Member{}, err
	}
	acc, err := s.tenantUser(ctx, a.Project, userID, email)
	if err != nil {
		return Member{}, err
	}
	var m *ent.OrgMember
	err = database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		if _, err := row(ctx, tx.Org, a.Project, orgID); err != nil {
			return err
		}
		if ok, err := roleExists(ctx, tx, a.Project, role); err != nil || !ok {
			return cmpErr(err, errNoRole)
		}
		if m, err = tx.OrgMember.Create().SetProjectID(a.Project).SetOrgID(orgID).SetUserID(acc.ID).SetRole(role).Save(ctx); err != nil {
			return err
		}
		return s.record(ctx, tx, a, actionMemberAdd, orgID, map[string]any{"userId": acc.ID, "role": role})
	})
	if ent.IsConstraintError(err) {
		return Member{}, errAlreadyMember
	}
	if err != nil {
		return Member{}, err
	}
	return Member{OrgID: orgID, UserID: acc.ID, Email: acc.Email, Role: m.Role, CreatedAt: m.CreatedAt.UTC()}, nil
}

func cmpErr(err, otherwise error) error {
	if err != nil {
		return err
	}
	return otherwise
}

// Members are an org's members, oldest first. A user the tenant no longer has is left
// out: nothing removes their membership yet when a person is deleted.
func (s *Service) Members(ctx context.Context, project, orgID string) ([]Member, error) {
	if _, err := row(ctx, s.ent.Org, project, orgID); err != nil {
		return nil, err
	}
	rows, err := s.ent.OrgMember.Query().Where(orgmember.OrgID(orgID), orgmember.ProjectID(project)).
		Order(ent.Asc(orgmember.FieldCreatedAt), ent.Asc(orgmember.FieldID)).All(ctx)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(rows))
	for i, m := range rows {
		ids[i] = m.UserID
	}
	emails, err := s.emails.Emails(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]Member, 0, len(rows))
	for _, m := range rows {
		email, ok := emails[m.UserID]
		if !ok {
			continue // deleted from the tenant since
		}
		out = append(out, Member{OrgID: orgID, UserID: m.UserID, Email: email, Role: m.Role, CreatedAt: m.CreatedAt.UTC()})
	}
	return out, nil
}

// member is userID's membership of an org of project.
func member(ctx context.Context, tx *ent.Tx, project, orgID, userID string) (*ent.OrgMember, error) {
	if _, err := row(ctx, tx.Org, project, orgID); err != nil {
		return nil, err
	}
	m, err := tx.OrgMember.Query().Where(orgmember.OrgID(orgID), orgmember.ProjectID(project), orgmember.UserID(userID)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, errMemberNotFound
	}
	return m, err
}

// UpdateMember gives a member another role.
func (s *Service) UpdateMember(ctx context.Context, a Actor, orgID, userID, role string) (Member, error) {
	var m *ent.OrgMember
	err := database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		before, err := member(ctx, tx, a.Project, orgID, userID)
		if err != nil {
			return err
		}
		if ok, err := roleExists(ctx, tx, a.Project, role); err != nil || !ok {
			return cmpErr(err, errNoRole)
		}
		if before.Role == role {
			m = before
			return nil
		}
		if err := a.mayTouch(before.Role, role); err != nil {
			return err
		}
		if before.Role == roleOwner {
			if err := s.notLastOwner(ctx, tx, a.Project, orgID); err != nil {
				return err
			}
		}
		if m, err = tx.OrgMember.UpdateOne(before).SetRole(role).Save(ctx); err != nil {
			return err
		}
		return s.record(ctx, tx, a, actionMemberUpdate, orgID, map[string]any{"userId": userID, "role": role, "previousRole": before.Role})
	})
	if err != nil {
		return Member{}, err
	}
	emails, err := s.emails.Emails(ctx, []string{userID})
	if err != nil {
		return Member{}, err
	}
	return Member{OrgID: orgID, UserID: userID, Email: emails[userID], Role: m.Role, CreatedAt: m.CreatedAt.UTC()}, nil
}

// notLastOwner refuses to take the owner role from one of orgID's owners when no other
// remains: an org is never left without someone who may manage its owners. On
// PostgreSQL the owners' rows are locked, so two owners demoting each other at once do
// not both see the other remain; SQLite's write transactions are serial.
func (s *Service) notLastOwner(ctx context.Context, tx *ent.Tx, project, orgID string) error {
	q := tx.OrgMember.Query().Where(orgmember.OrgID(orgID), orgmember.ProjectID(project), orgmember.Role(roleOwner))
	if s.storage == config.Postgres {
		q = q.ForUpdate()
	}
	owners, err := q.All(ctx)
	if err != nil {
		return err
	}
	if len(owners) <= 1 {
		return errLastOwner
	}
	return nil
}

// RemoveMember ends a membership.
func (s *Service) RemoveMember(ctx context.Context, a Actor, orgID, userID string) error {
	return database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		m, err := member(ctx, tx, a.Project, orgID, userID)
		if err != nil {
			return err
		}
		if err := a.mayTouch(m.Role); err != nil {
			return err
		}
		if m.Role == roleOwner {
			if err := s.notLastOwner(ctx, tx, a.Project, orgID); err != nil {
				return err
			}
		}
		if err := tx.OrgMember.DeleteOne(m).Exec(ctx); err != nil {
			return err
		}
		return s.record(ctx, tx, a, actionMemberRemove, orgID, map[string]any{"userId": userID, "role": m.Role})
	})
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
