package scim

import (
	"cmp"
	"context"
	"crypto/subtle"
	"sort"
	"sync"
	"time"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/scimdirectory"
	"github.com/authcore/authcore/ent/scimresource"
	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/credential"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/secret"
	"github.com/authcore/authcore/platform/usage"
)

// tokenKind makes directory tokens ac_scim_…; usageKind counts their use (SPEC §19).
const (
	tokenKind = "scim"
	usageKind = "scim_directory"
	kindName  = "scim_directory_token"
)

// Audit actions (SPEC §28); their OCSF mappings are in modules/auditstream/sink.
const (
	actionDirectoryCreate = "scim.directory_create"
	actionDirectoryUpdate = "scim.directory_update"
	actionDirectoryRoll   = "scim.directory_roll"
	actionDirectoryDelete = "scim.directory_delete"
	actionTokenRevoke     = "scim.token_revoke"
	actionUserCreate      = "scim.user_create"
	actionUserUpdate      = "scim.user_update"
	actionUserDelete      = "scim.user_delete"
	actionGroupCreate     = "scim.group_create"
	actionGroupUpdate     = "scim.group_update"
	actionGroupDelete     = "scim.group_delete"
)

// maxDirectories bounds an org's directories.
const maxDirectories = 20

var (
	errOrgNotFound       = apperr.New(apperr.KindNotFound, "org_not_found", "no such organization in this project")
	errDirectoryNotFound = apperr.New(apperr.KindNotFound, "directory_not_found", "no such directory of this organization")
	errTooManyDirs       = apperr.Conflict("directory_limit", "an organization has at most 20 directories")
)

// Directory is a directory as its admins see it.
type Directory struct {
	ID         string            `json:"id"`
	OrgID      string            `json:"orgId"`
	Name       string            `json:"name"`
	BaseURL    string            `json:"baseUrl"`
	TokenHint  string            `json:"tokenHint"`
	TokenLive  bool              `json:"tokenLive"`
	GroupRoles map[string]string `json:"groupRoles"`
	LastSyncAt *time.Time        `json:"lastSyncAt"`
	Users      int               `json:"users"`
	Groups     int               `json:"groups"`
	Usage24h   usage.Totals      `json:"usage24h"`
	CreatedAt  time.Time         `json:"createdAt"`
}

// Actor is who changes a directory: a user, or a setup link's session.
type Actor struct {
	ID      *string
	Type    audit.ActorType
	Project string
	Origin  audit.Origin
}

// Directories keeps an org's directories and checks their tokens.
type Directories struct {
	ent     *ent.Client
	audit   *audit.Recorder
	orgs    identity.Orgs
	roster  identity.OrgRoster
	clock   clock.Clock
	selfURL string
	usage   usage.Counter
	reader  usage.Reader
	marks   *syncMarks
}

func (d *Directories) view(row *ent.SCIMDirectory, users, groups int) Directory {
	var last *time.Time
	if row.LastSyncAt != nil {
		t := row.LastSyncAt.UTC()
		last = &t
	}
	if t, ok := d.marks.pending(row.ID); ok && (last == nil || t.After(*last)) {
		last = &t
	}
	roles := row.GroupRoles
	if roles == nil {
		roles = map[string]string{}
	}
	return Directory{ID: row.ID, OrgID: row.OrgID, Name: row.Name, BaseURL: d.baseURL(row.ID), TokenHint: row.Hint,
		TokenLive: row.TokenRevokedAt == nil, GroupRoles: roles, LastSyncAt: last,
		Users: users, Groups: groups, CreatedAt: row.CreatedAt.UTC()}
}

func (d *Directories) baseURL(id string) string { return d.selfURL + "/scim/v2/" + id }

// checkOrg is nil when orgID is an org of project.
func (d *Directories) checkOrg(ctx context.Context, project, orgID string) error {
	ok, err := d.orgs.OrgExists(ctx, project, orgID)
	if err != nil {
		return err
	}
	if !ok {
		return errOrgNotFound
	}
	return nil
}

func (d *Directories) record(ctx context.Context, tx *ent.Tx, a Actor, orgID, action string, md map[string]any) error {
	md["orgId"] = orgID
	_, err := d.audit.Record(ctx, tx, audit.Event{ActorID: a.ID, ActorType: a.Type, ProjectID: a.Project, OrgID: &orgID, Action: action, Metadata: md, Origin: a.Origin})
	return err
}

func hintOf(token string) string { return secret.Prefix(tokenKind) + "…" + token[len(token)-4:] }

// Create makes a directory of orgID and its token, shown this once.
func (d *Directories) Create(ctx context.Context, a Actor, orgID, name string) (Directory, string, error) {
	if err := d.checkOrg(ctx, a.Project, orgID); err != nil {
		return Directory{}, "", err
	}
	token, err := secret.NewToken(tokenKind)
	if err != nil {
		return Directory{}, "", err
	}
	var row *ent.SCIMDirectory
	err = database.WithTx(ctx, d.ent, func(tx *ent.Tx) error {
		n, err := tx.SCIMDirectory.Query().Where(scimdirectory.ProjectID(a.Project), scimdirectory.OrgID(orgID)).Count(ctx)
		if err != nil {
			return err
		}
		if n >= maxDirectories {
			return errTooManyDirs
		}
		row, err = tx.SCIMDirectory.Create().SetProjectID(a.Project).SetOrgID(orgID).SetName(name).
			SetDigest(secret.DigestOf(token).Bytes()).SetHint(hintOf(token)).SetGroupRoles(map[string]string{}).
			SetNillableCreatedBy(a.ID).Save(ctx)
		if err != nil {
			return err
		}
		return d.record(ctx, tx, a, orgID, actionDirectoryCreate, map[string]any{"directoryId": row.ID, "name": name})
	})
	if err != nil {
		return Directory{}, "", err
	}
	return d.view(row, 0, 0), token, nil
}

// row is the directory id of orgID in project; another's is not found.
func (d *Directories) row(ctx context.Context, project, orgID, id string) (*ent.SCIMDirectory, error) {
	if err := d.checkOrg(ctx, project, orgID); err != nil {
		return nil, err
	}
	row, err := d.ent.SCIMDirectory.Query().Where(scimdirectory.ID(id), scimdirectory.ProjectID(project), scimdirectory.OrgID(orgID)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, errDirectoryNotFound
	}
	return row, err
}

// counts are each directory's Users and Groups.
func (d *Directories) counts(ctx context.Context, ids []string) (map[string][2]int, error) {
	var rows []struct {
		DirectoryID  string `json:"directory_id"`
		ResourceType string `json:"resource_type"`
		Count        int    `json:"count"`
	}
	err := d.ent.SCIMResource.Query().Where(scimresource.DirectoryIDIn(ids...)).
		GroupBy(scimresource.FieldDirectoryID, scimresource.FieldResourceType).Aggregate(ent.Count()).Scan(ctx, &rows)
	out := map[string][2]int{}
	for _, r := range rows {
		c := out[r.DirectoryID]
		if r.ResourceType == string(scimresource.ResourceTypeUser) {
			c[0] = r.Count
		} else {
			c[1] = r.Count
		}
		out[r.DirectoryID] = c
	}
	return out, err
}

func (d *Directories) views(ctx context.Context, project string, rows []*ent.SCIMDirectory) ([]Directory, error) {
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	counts, err := d.counts(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]Directory, len(rows))
	for i, r := range rows {
		c := counts[r.ID]
		out[i] = d.view(r, c[0], c[1])
	}
	err = usage.Last24h(ctx, d.reader, d.clock.Now(), project, usageKind, out,
		func(x *Directory) string { return x.ID }, func(x *Directory, t usage.Totals) { x.Usage24h = t })
	return out, err
}

// List is orgID's directories, oldest first.
func (d *Directories) List(ctx context.Context, project, orgID string) ([]Directory, error) {
	if err := d.checkOrg(ctx, project, orgID); err != nil {
		return nil, err
	}
	rows, err := d.ent.SCIMDirectory.Query().Where(scimdirectory.ProjectID(project), scimdirectory.OrgID(orgID)).
		Order(ent.Asc(scimdirectory.FieldCreatedAt), ent.Asc(scimdirectory.FieldID)).All(ctx)
	if err != nil {
		return nil, err
	}
	return d.views(ctx, project, rows)
}

// Get is one directory with its counts.
func (d *Directories) Get(ctx context.Context, project, orgID, id string) (Directory, error) {
	row, err := d.row(ctx, project, orgID, id)
	if err != nil {
		return Directory{}, err
	}
	out, err := d.views(ctx, project, []*ent.SCIMDirectory{row})
	if err != nil {
		return Directory{}, err
	}
	return out[0], nil
}

// Update renames a directory or replaces its group roles (each role checked), and gives
// every person it provisioned the role their groups now map to.
func (d *Directories) Update(ctx context.Context, a Actor, orgID, id string, name *string, groupRoles map[string]string) (Directory, error) {
	row, err := d.row(ctx, a.Project, orgID, id)
	if err != nil {
		return Directory{}, err
	}
	var bad []apperr.Issue
	for g, role := range groupRoles {
		ok, err := d.roster.RoleExists(ctx, a.Project, role)
		if err != nil {
			return Directory{}, err
		}
		if !ok || role == "owner" {
			bad = append(bad, apperr.Issue{Field: "groupRoles." + g, Reason: "not a role of this project's orgs (owner is never given by a directory)"})
		}
	}
	if len(bad) > 0 {
		sort.Slice(bad, func(i, j int) bool { return bad[i].Field < bad[j].Field })
		return Directory{}, apperr.Validation(bad...)
	}
	err = database.WithTx(ctx, d.ent, func(tx *ent.Tx) error {
		up := tx.SCIMDirectory.UpdateOne(row)
		md := map[string]any{"directoryId": id}
		if name != nil {
			up.SetName(*name)
			md["name"] = *name
		}
		if groupRoles != nil {
			up.SetGroupRoles(groupRoles)
			md["groupRoles"] = groupRoles
		}
		if row, err = up.Save(ctx); err != nil {
			return err
		}
		if groupRoles != nil {
			if err := reassignRoles(ctx, tx, d.roster, row, nil); err != nil {
				return err
			}
		}
		return d.record(ctx, tx, a, orgID, actionDirectoryUpdate, md)
	})
	if err != nil {
		return Directory{}, err
	}
	return d.Get(ctx, a.Project, orgID, id)
}

// Roll gives a directory a new token: the old one stops at once (the IdP's admin pastes
// the new one; both IdPs retry what failed meanwhile), and a revoked token's directory
// gets a live one again.
func (d *Directories) Roll(ctx context.Context, a Actor, orgID, id string) (Directory, string, error) {
	row, err := d.row(ctx, a.Project, orgID, id)
	if err != nil {
		return Directory{}, "", err
	}
	token, err := secret.NewToken(tokenKind)
	if err != nil {
		return Directory{}, "", err
	}
	err = database.WithTx(ctx, d.ent, func(tx *ent.Tx) error {
		if row, err = tx.SCIMDirectory.UpdateOne(row).SetDigest(secret.DigestOf(token).Bytes()).SetHint(hintOf(token)).
			ClearTokenRevokedAt().Save(ctx); err != nil {
			return err
		}
		return d.record(ctx, tx, a, orgID, actionDirectoryRoll, map[string]any{"directoryId": id})
	})
	if err != nil {
		return Directory{}, "", err
	}
	out, err := d.Get(ctx, a.Project, orgID, id)
	return out, token, err
}

// Delete removes a directory and its SCIM records. The people it provisioned stay users
// and members of the org: deleting the connection is not deprovisioning them.
func (d *Directories) Delete(ctx context.Context, a Actor, orgID, id string) error {
	if _, err := d.row(ctx, a.Project, orgID, id); err != nil {
		return err
	}
	return database.WithTx(ctx, d.ent, func(tx *ent.Tx) error {
		n, err := tx.SCIMResource.Delete().Where(scimresource.DirectoryID(id), scimresource.ProjectID(a.Project)).Exec(ctx)
		if err != nil {
			return err
		}
		if _, err := tx.SCIMDirectory.Delete().Where(scimdirectory.ID(id), scimdirectory.ProjectID(a.Project)).Exec(ctx); err != nil {
			return err
		}
		return d.record(ctx, tx, a, orgID, actionDirectoryDelete, map[string]any{"directoryId": id, "resourcesRemoved": n})
	})
}

// Authenticate is the directory id names when token is its live token: a wrong, revoked
// or absent token, another directory's, and an unknown directory are all 401 alike. The
// digest is compared in constant time.
func (d *Directories) Authenticate(ctx context.Context, id, token string) (*ent.SCIMDirectory, error) {
	if !secret.CheckToken(tokenKind, token) || len(id) > 40 {
		return nil, errUnauthorized
	}
	row, err := d.ent.SCIMDirectory.Query().Where(scimdirectory.ID(id)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, errUnauthorized
	}
	if err != nil {
		return nil, err
	}
	if subtle.ConstantTimeCompare(row.Digest, secret.DigestOf(token).Bytes()) != 1 {
		return nil, errUnauthorized
	}
	if row.TokenRevokedAt != nil {
		d.usage.Count(row.ProjectID, usageKind, row.ID, usage.Denied)
		return nil, errUnauthorized
	}
	d.usage.Count(row.ProjectID, usageKind, row.ID, usage.OK)
	return row, nil
}

// revokePresented is the credential kind's Revoke: whoever holds the token may end it
// (RFC 7009), and a leak report does; the directory stays, and a roll gives it a new one.
func (d *Directories) revokePresented(ctx context.Context, token string, r credential.Revocation) error {
	if !secret.CheckToken(tokenKind, token) {
		return credential.ErrNotLive
	}
	return database.WithTx(ctx, d.ent, func(tx *ent.Tx) error {
		row, err := tx.SCIMDirectory.Query().Where(scimdirectory.Digest(secret.DigestOf(token).Bytes()), scimdirectory.TokenRevokedAtIsNil()).Only(ctx)
		if ent.IsNotFound(err) {
			return credential.ErrNotLive
		}
		if err != nil {
			return err
		}
		if err := tx.SCIMDirectory.UpdateOne(row).SetTokenRevokedAt(d.clock.Now()).Exec(ctx); err != nil {
			return err
		}
		id, typ := r.By(audit.ActorSCIMDirectory, row.ID)
		md := map[string]any{"directoryId": row.ID}
		for k, v := range r.Metadata {
			md[k] = v
		}
		return d.record(ctx, tx, Actor{ID: id, Type: typ, Project: row.ProjectID, Origin: r.Origin}, row.OrgID, cmp.Or(r.Action, actionTokenRevoke), md)
	})
}

// syncMarks are the directories' last writes, kept in memory and written in batches off
// the request path (lastSyncAt is for people to read, so a second's delay, or a mark lost
// with a crashed process, costs nothing).
type syncMarks struct {
	mu   sync.Mutex
	last map[string]time.Time
}

func newSyncMarks() *syncMarks { return &syncMarks{last: map[string]time.Time{}} }

func (m *syncMarks) mark(id string, at time.Time) {
	m.mu.Lock()
	m.last[id] = at
	m.mu.Unlock()
}

func (m *syncMarks) pending(id string) (time.Time, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.last[id]
	return t, ok
}

// flush writes the marks; what it could not write it keeps for the next run.
func (m *syncMarks) flush(ctx context.Context, c *ent.Client) error {
	m.mu.Lock()
	batch := m.last
	m.last = map[string]time.Time{}
	m.mu.Unlock()
	var failed error
	for id, at := range batch {
		err := c.SCIMDirectory.Update().Where(scimdirectory.ID(id)).SetLastSyncAt(at).Exec(ctx)
		if err != nil {
			failed = err
			m.mu.Lock()
			if cur, ok := m.last[id]; !ok || cur.Before(at) {
				m.last[id] = at
			}
			m.mu.Unlock()
		}
	}
	return failed
}
