package project

import (
	"context"
	"sort"
	"time"

	"entgo.io/ent/dialect/sql"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/membership"
	entproject "github.com/authcore/authcore/ent/project"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/bearer"
	"github.com/authcore/authcore/platform/config"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/invalidation"
	"github.com/authcore/authcore/platform/oauth"
	"github.com/authcore/authcore/platform/policy"
)

// Service owns projects and memberships. It imports no HTTP.
type Service struct {
	ent     *ent.Client
	storage config.Storage
	dir     identity.Directory
	audit   *audit.Recorder
	grants  oauth.GrantEnder // nil without grants
	bus     invalidation.Bus
	// policies caches each project's policy: the token endpoint reads it per grant. A
	// change drops it on every replica when it commits (policyTopic).
	policies *bearer.Cache[string, policy.Policy]
	// roles caches each member's role: the guard asks it on every project route and the
	// token endpoint on every refresh (SPEC §9b's standing check). Every change of a
	// membership drops its entry on every replica when it commits (roleTopic).
	roles *bearer.Cache[string, standing]
}

// standing is a user's role in a project, or none (a cached "not a member" too).
type standing struct {
	name   string
	member bool
}

// The policy cache: a project's policy is read on every client-credentials grant and
// changes rarely; the TTL only bounds what a missed invalidation could leave.
const (
	policyTopic     = "project_policy"
	policyCacheSize = 10_000
	policyCacheTTL  = time.Minute

	roleTopic     = "project_membership"
	roleCacheSize = 100_000
	roleCacheTTL  = time.Minute
)

// roleKey is a membership's key in the role cache and on roleTopic.
func roleKey(projectID, userID string) string { return projectID + " " + userID }

// memberChanged drops the membership's cached role on every replica as tx commits.
func (s *Service) memberChanged(ctx context.Context, tx *ent.Tx, projectID, userID string) error {
	return s.bus.Publish(ctx, tx, roleTopic, roleKey(projectID, userID))
}

var (
	_ identity.Memberships = (*Service)(nil)
	_ identity.Tenants     = (*Service)(nil)
)

// Project is the public view of a project, with the caller's role.
type Project struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	TenantID  string    `json:"tenantId"`
	CreatedAt time.Time `json:"createdAt"`
	Role      string    `json:"role"`
}

// Member is one entry of a member list.
type Member struct {
	UserID    string    `json:"userId"`
	Email     *string   `json:"email"`
	Role      string    `json:"role"`
	CreatedAt time.Time `json:"createdAt"`
}

func view(p *ent.Project, role string) Project {
	return Project{ID: p.ID, Name: p.Name, TenantID: p.ID, CreatedAt: p.CreatedAt.UTC(), Role: role}
}

// Create makes a project whose creator is its admin.
func (s *Service) Create(ctx context.Context, name, creatorID string) (Project, error) {
	var p *ent.Project
	err := database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		var err error
		p, err = tx.Project.Create().SetName(name).SetCreatedBy(creatorID).Save(ctx)
		if err != nil {
			return err
		}
		if err := tx.Membership.Create().SetProjectID(p.ID).SetUserID(creatorID).SetRole(membership.RoleAdmin).Exec(ctx); err != nil {
			return err
		}
		return s.memberChanged(ctx, tx, p.ID, creatorID)
	})
	if err != nil {
		return Project{}, err
	}
	return view(p, identity.RoleAdmin), nil
}

// Mine lists the projects userID is a member of, newest first.
func (s *Service) Mine(ctx context.Context, userID string) ([]Project, error) {
	ms, err := s.ent.Membership.Query().Where(membership.UserID(userID)).All(ctx)
	if err != nil {
		return nil, err
	}
	roles := make(map[string]string, len(ms))
	ids := make([]string, 0, len(ms))
	for _, m := range ms {
		roles[m.ProjectID] = string(m.Role)
		ids = append(ids, m.ProjectID)
	}
	ps, err := s.ent.Project.Query().Where(entproject.IDIn(ids...)).Order(entproject.ByID(sql.OrderDesc())).All(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Project, 0, len(ps))
	for _, p := range ps {
		out = append(out, view(p, roles[p.ID]))
	}
	return out, nil
}

// Get is one project as seen by a member with role.
func (s *Service) Get(ctx context.Context, projectID, role string) (Project, error) {
	p, err := s.ent.Project.Get(ctx, projectID)
	if err != nil {
		return Project{}, err
	}
	return view(p, role), nil
}

// Members lists a project's members, oldest first.
func (s *Service) Members(ctx context.Context, projectID string) ([]Member, error) {
	ms, err := s.ent.Membership.Query().Where(membership.ProjectID(projectID)).Order(membership.ByID()).All(ctx)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(ms))
	for i, m := range ms {
		ids[i] = m.UserID
	}
	emails, err := s.dir.Emails(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]Member, 0, len(ms))
	for _, m := range ms {
		var email *string
		if e, ok := emails[m.UserID]; ok {
			email = &e
		}
		out = append(out, Member{UserID: m.UserID, Email: email, Role: string(m.Role), CreatedAt: m.CreatedAt.UTC()})
	}
	return out, nil
}

// AddMember gives a dashboard user (by id or email) a role, with its audit record.
func (s *Service) AddMember(ctx context.Context, actorID, projectID, userID, email, role string, origin audit.Origin) (Member, error) {
	u, ok, err := s.dir.FindDashboardUser(ctx, userID, email)
	if err != nil {
		return Member{}, err
	}
	if !ok {
		return Member{}, errUserNotFound
	}
	var m *ent.Membership
	err = database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		var err error
		m, err = tx.Membership.Create().SetProjectID(projectID).SetUserID(u.ID).SetRole(membership.Role(role)).Save(ctx)
		if ent.IsConstraintError(err) {
			return errAlreadyMember
		}
		if err != nil {
			return err
		}
		_, err = s.audit.Record(ctx, tx, audit.Event{
			ActorID: &actorID, ProjectID: projectID, Action: "project.member_add",
			Metadata: map[string]any{"userId": u.ID, "role": role}, Origin: origin,
		})
		if err != nil {
			return err
		}
		return s.memberChanged(ctx, tx, projectID, u.ID)
	})
	if err != nil {
		return Member{}, err
	}
	email = u.Email
	return Member{UserID: u.ID, Email: &email, Role: role, CreatedAt: m.CreatedAt.UTC()}, nil
}

// RemoveMember takes a user off a project, never its last admin, with its audit record.
func (s *Service) RemoveMember(ctx context.Context, actorID, projectID, userID string, origin audit.Origin) error {
	return database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		q := tx.Membership.Query().Where(membership.ProjectID(projectID))
		if s.storage == config.Postgres {
			// Two admins removing each other at once must not both see "another admin
			// remains". SQLite needs no lock: its write transactions are serial.
			q = q.ForUpdate()
		}
		ms, err := q.All(ctx)
		if err != nil {
			return err
		}
		var target *ent.Membership
		admins := 0
		for _, m := range ms {
			if m.Role == membership.RoleAdmin {
				admins++
			}
			if m.UserID == userID {
				target = m
			}
		}
		if target == nil {
			return errMemberNotFound
		}
		if target.Role == membership.RoleAdmin && admins == 1 {
			return errLastAdmin
		}
		if err := tx.Membership.DeleteOne(target).Exec(ctx); err != nil {
			return err
		}
		if err := s.memberChanged(ctx, tx, projectID, userID); err != nil {
			return err
		}
		if _, err = s.audit.Record(ctx, tx, audit.Event{
			ActorID: &actorID, ProjectID: projectID, Action: "project.member_remove",
			Metadata: map[string]any{"userId": userID, "role": string(target.Role)}, Origin: origin,
		}); err != nil || s.grants == nil {
			return err
		}
		// What they approved for the project was theirs to approve as a member (SPEC §9b).
		_, err = s.grants.EndGrants(ctx, tx, oauth.GrantsOf{ProjectID: projectID, UserID: userID},
			oauth.GrantEnding{ActorID: &actorID, Reason: "member_removed", Origin: origin})
		return err
	})
}

// Role is the guard's lookup.
func (s *Service) Role(ctx context.Context, projectID, userID string) (string, bool, error) {
	r, err := s.roles.Load(ctx, roleKey(projectID, userID), func(ctx context.Context) (standing, error) {
		m, err := s.ent.Membership.Query().Where(membership.ProjectID(projectID), membership.UserID(userID)).Only(ctx)
		if ent.IsNotFound(err) {
			return standing{}, nil
		}
		if err != nil {
			return standing{}, err
		}
		return standing{name: string(m.Role), member: true}, nil
	})
	return r.name, r.member, err
}

// MemberIDs lists a project's member user ids, sorted.
func (s *Service) MemberIDs(ctx context.Context, projectID string) ([]string, error) {
	ids, err := s.ent.Membership.Query().Where(membership.ProjectID(projectID)).Select(membership.FieldUserID).Strings(ctx)
	if err != nil {
		return nil, err
	}
	sort.Strings(ids)
	return ids, nil
}

// TenantExists: a project's tenant id is its project id.
func (s *Service) TenantExists(ctx context.Context, tenantID string) (bool, error) {
	return s.ent.Project.Query().Where(entproject.ID(tenantID)).Exist(ctx)
}

// TenantName is the name of the project whose tenant is tenantID.
func (s *Service) TenantName(ctx context.Context, tenantID string) (string, bool, error) {
	p, err := s.ent.Project.Query().Where(entproject.ID(tenantID)).Only(ctx)
	if ent.IsNotFound(err) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return p.Name, true, nil
}

var _ policy.Source = (*Service)(nil)

// Policy is the project's credential policy.
func (s *Service) Policy(ctx context.Context, projectID string) (policy.Policy, error) {
	return s.policies.Load(ctx, projectID, func(ctx context.Context) (policy.Policy, error) {
		p, err := s.ent.Project.Get(ctx, projectID)
		if ent.IsNotFound(err) {
			return policy.Policy{}, nil
		}
		if err != nil {
			return policy.Policy{}, err
		}
		return policy.Policy{AgentTokenMaxTTLHours: p.AgentTokenMaxTTLHours, BadgeMaxExpiresInDays: p.BadgeMaxExpiresInDays, AllowedScopes: p.AllowedScopes, RequireMFA: p.RequireMfa}, nil
	})
}

// SetPolicy replaces the project's policy, with its audit record, in one transaction.
func (s *Service) SetPolicy(ctx context.Context, actorID, projectID string, p policy.Policy, origin audit.Origin) error {
	return database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		u := tx.Project.UpdateOneID(projectID).
			SetNillableAgentTokenMaxTTLHours(p.AgentTokenMaxTTLHours).SetNillableBadgeMaxExpiresInDays(p.BadgeMaxExpiresInDays)
		if p.AgentTokenMaxTTLHours == nil {
			u.ClearAgentTokenMaxTTLHours()
		}
		if p.BadgeMaxExpiresInDays == nil {
			u.ClearBadgeMaxExpiresInDays()
		}
		if p.AllowedScopes == nil {
			u.ClearAllowedScopes()
		} else {
			u.SetAllowedScopes(p.AllowedScopes)
		}
		if err := u.SetRequireMfa(p.RequireMFA).Exec(ctx); err != nil {
			return err
		}
		_, err := s.audit.Record(ctx, tx, audit.Event{ActorID: &actorID, ProjectID: projectID, Action: "project.policy_update",
			Metadata: map[string]any{"agentTokenMaxTtlHours": p.AgentTokenMaxTTLHours, "badgeMaxExpiresInDays": p.BadgeMaxExpiresInDays, "allowedScopes": p.AllowedScopes,
				"requireMfa": p.RequireMFA}, Origin: origin})
		if err != nil {
			return err
		}
		return s.bus.Publish(ctx, tx, policyTopic, projectID)
	})
}
