package scim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	filter "github.com/scim2/filter-parser/v2"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/predicate"
	"github.com/authcore/authcore/ent/scimresource"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/identity"
)

// Paging limits (RFC 7644 §3.4.2.4), and how many resources a filter that no column
// answers may be evaluated over before it is refused as tooMany.
const (
	defaultCount = 100
	maxCount     = 1000
	maxScan      = 50000
)

// Resources serves a directory's Users and Groups and provisions the people they are.
type Resources struct {
	ent         *ent.Client
	audit       *audit.Recorder
	roster      identity.OrgRoster
	domains     identity.OrgDomains
	proven      identity.ProvenUsers
	provisioned identity.ProvisionedUsers
	deprov      identity.Deprovisioning
	clock       clock.Clock
	selfURL     string
	marks       *syncMarks
}

// call is one SCIM request: the directory its token opened, and where it came from.
type call struct {
	dir    *ent.SCIMDirectory
	origin audit.Origin
}

// actor is how the roster and the deprovisioning name a directory (SPEC §27).
func (c call) actor() string { return "directory:" + c.dir.ID }

func (s *Resources) record(ctx context.Context, tx *ent.Tx, c call, action string, md map[string]any) error {
	md["directoryId"] = c.dir.ID
	md["orgId"] = c.dir.OrgID
	id, org := c.dir.ID, c.dir.OrgID
	_, err := s.audit.Record(ctx, tx, audit.Event{ActorID: &id, ActorType: audit.ActorSCIMDirectory, ProjectID: c.dir.ProjectID,
		OrgID: &org, Action: action, Metadata: md, Origin: c.origin})
	return err
}

// render is a stored resource as the endpoints return it, with id, schemas and meta.
func (s *Resources) render(row *ent.SCIMResource, rt *resourceType) (map[string]any, error) {
	var doc map[string]any
	if err := json.Unmarshal([]byte(row.Attributes), &doc); err != nil {
		return nil, err
	}
	schemas := []any{rt.Core.ID}
	for _, e := range rt.Extensions {
		if _, ok := doc[e.ID]; ok {
			schemas = append(schemas, e.ID)
		}
	}
	doc["schemas"] = schemas
	doc["id"] = row.ID
	if rt == userType {
		doc["active"] = row.Active
	}
	doc["meta"] = map[string]any{
		"resourceType": rt.Name,
		"created":      row.CreatedAt.UTC().Format(time.RFC3339Nano),
		"lastModified": row.UpdatedAt.UTC().Format(time.RFC3339Nano),
		"location":     s.selfURL + "/scim/v2/" + row.DirectoryID + rt.Endpoint + "/" + row.ID,
		"version":      etag(row.Version),
	}
	return doc, nil
}

func etag(version int) string { return `W/"` + strconv.Itoa(version) + `"` }

func typeOf(rt *resourceType) scimresource.ResourceType {
	if rt == userType {
		return scimresource.ResourceTypeUser
	}
	return scimresource.ResourceTypeGroup
}

func (s *Resources) in(c call, rt *resourceType) []predicate.SCIMResource {
	return []predicate.SCIMResource{scimresource.DirectoryID(c.dir.ID), scimresource.ProjectID(c.dir.ProjectID), scimresource.ResourceTypeEQ(typeOf(rt))}
}

// one is the resource id of c's directory.
func (s *Resources) one(ctx context.Context, q *ent.SCIMResourceClient, c call, rt *resourceType, id string) (*ent.SCIMResource, error) {
	row, err := q.Query().Where(append(s.in(c, rt), scimresource.ID(id))...).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, errNotFound
	}
	return row, err
}

// Page is a list request's paging (RFC 7644 §3.4.2.4), already clamped.
type Page struct {
	StartIndex, Count int
}

// List answers a ListResponse: the resources filter matches, in creation order.
func (s *Resources) List(ctx context.Context, c call, rt *resourceType, filterText string, p Page) (map[string]any, error) {
	q := s.ent.SCIMResource.Query().Where(s.in(c, rt)...)
	var (
		expr  filter.Expression
		total int
		rows  []*ent.SCIMResource
		err   error
	)
	if filterText != "" {
		if expr, err = parseFilter(filterText); err != nil {
			return nil, err
		}
		if pred := pushDown(expr, rt); pred != nil {
			q = q.Where(pred)
		}
		n, err := q.Clone().Count(ctx)
		if err != nil {
			return nil, err
		}
		if n > maxScan {
			return nil, scimErr(400, "tooMany", "the filter would be evaluated over more than 50000 resources: filter by userName, externalId or id")
		}
	}
	q = q.Order(ent.Asc(scimresource.FieldCreatedAt), ent.Asc(scimresource.FieldID))
	var out []any
	if expr == nil {
		if total, err = q.Clone().Count(ctx); err != nil {
			return nil, err
		}
		if p.Count > 0 { // ent reads Limit(0) as no limit
			if rows, err = q.Offset(p.StartIndex - 1).Limit(p.Count).All(ctx); err != nil {
				return nil, err
			}
		}
		for _, r := range rows {
			doc, err := s.render(r, rt)
			if err != nil {
				return nil, err
			}
			out = append(out, doc)
		}
	} else {
		if rows, err = q.All(ctx); err != nil {
			return nil, err
		}
		sc := topScope(rt)
		for _, r := range rows {
			doc, err := s.render(r, rt)
			if err != nil {
				return nil, err
			}
			ok, err := matches(expr, doc, sc)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
			total++
			if total >= p.StartIndex && len(out) < p.Count {
				out = append(out, doc)
			}
		}
	}
	if out == nil {
		out = []any{}
	}
	return map[string]any{"schemas": []string{listSchema}, "totalResults": total, "startIndex": p.StartIndex,
		"itemsPerPage": len(out), "Resources": out}, nil
}

// pushDown is a column predicate that selects a superset of what a filter of the forms
// IdPs send before each write (userName eq, displayName eq, externalId eq, id eq) matches,
// so they read one row instead of the directory; nil for any other filter.
func pushDown(e filter.Expression, rt *resourceType) predicate.SCIMResource {
	x, ok := e.(*filter.AttributeExpression)
	if !ok || x.Operator != filter.EQ || x.AttributePath.SubAttribute != nil {
		return nil
	}
	if u := x.AttributePath.URIPrefix; u != nil && !strings.EqualFold(*u, rt.Core.ID) {
		return nil
	}
	v, ok := x.CompareValue.(string)
	if !ok {
		return nil
	}
	name := x.AttributePath.AttributeName
	switch {
	case rt == userType && strings.EqualFold(name, "userName"), rt == groupType && strings.EqualFold(name, "displayName"):
		return scimresource.NameKey(strings.ToLower(v))
	case strings.EqualFold(name, "externalId"):
		return scimresource.ExternalID(v)
	case strings.EqualFold(name, "id"):
		return scimresource.ID(v)
	}
	return nil
}

// Get is one resource.
func (s *Resources) Get(ctx context.Context, c call, rt *resourceType, id string) (map[string]any, error) {
	row, err := s.one(ctx, s.ent.SCIMResource, c, rt, id)
	if err != nil {
		return nil, err
	}
	return s.render(row, rt)
}

// nameOf is the userName or displayName a resource is unique by.
func nameOf(doc map[string]any, rt *resourceType) string {
	if rt == userType {
		s, _ := doc["userName"].(string)
		return s
	}
	s, _ := doc["displayName"].(string)
	return s
}

// activeOf reads active (absent is true).
func activeOf(doc map[string]any) bool {
	b, ok := doc["active"].(bool)
	return !ok || b
}

// addressOf is the address a User is linked by: the primary email, else the work one,
// else the first, else the userName when it is an address.
func addressOf(doc map[string]any) (string, bool) {
	emails, _ := doc["emails"].([]any)
	pick := func(ok func(m map[string]any) bool) (string, bool) {
		for _, e := range emails {
			if m, isMap := e.(map[string]any); isMap && ok(m) {
				if v, _ := m["value"].(string); v != "" {
					return identity.NormalizeEmail(v)
				}
			}
		}
		return "", false
	}
	if a, ok := pick(func(m map[string]any) bool { p, _ := m["primary"].(bool); return p }); ok {
		return a, true
	}
	if a, ok := pick(func(m map[string]any) bool { t, _ := m["type"].(string); return strings.EqualFold(t, "work") }); ok {
		return a, true
	}
	if a, ok := pick(func(map[string]any) bool { return true }); ok {
		return a, true
	}
	return identity.NormalizeEmail(nameOf(doc, userType))
}

func displayNameOf(doc map[string]any) *string {
	if n, ok := doc["name"].(map[string]any); ok {
		if f, _ := n["formatted"].(string); f != "" {
			return &f
		}
		g, _ := n["givenName"].(string)
		f, _ := n["familyName"].(string)
		if full := strings.TrimSpace(g + " " + f); full != "" {
			return &full
		}
	}
	if d, _ := doc["displayName"].(string); d != "" {
		return &d
	}
	return nil
}

var errUserNameTaken = scimErr(http.StatusConflict, "uniqueness", "userName is taken in this directory")

// person finds or creates the tenant's user a new User is (SPEC §27). An address in a
// domain the directory's org verified is vouched for: an existing account whose holder
// proved the address is linked, a new one is created verified. An existing account whose
// address nobody proved is refused (409 uniqueness), as a SAML sign-in refuses it: whoever
// signed up with the address may not hold the mailbox, and linking would give their
// password the org's membership (a pre-account takeover). An address of a domain another
// org of the project verified is that org's to provision (SPEC §26): refused, so no
// directory squats another org's people and then deprovisions them. Any other address
// vouches for nothing: a new account is created with the address unverified, and an
// existing one is refused (409 uniqueness), since linking it would hand the org control
// of someone else's account.
func (s *Resources) person(ctx context.Context, tx *ent.Tx, c call, doc map[string]any) (identity.Account, bool, error) {
	addr, ok := addressOf(doc)
	if !ok {
		return identity.Account{}, false, scimErr(400, "invalidValue", "a User needs an email address: in emails, or as its userName")
	}
	domain := addr[strings.LastIndexByte(addr, '@')+1:]
	pol, found, err := s.domains.DomainOrg(ctx, c.dir.ProjectID, domain)
	if err != nil {
		return identity.Account{}, false, err
	}
	trusted := found && pol.OrgID == c.dir.OrgID
	acc, exists, err := s.proven.AccountByEmail(ctx, c.dir.ProjectID, addr)
	switch {
	case err != nil:
		return identity.Account{}, false, err
	case found && !trusted:
		return identity.Account{}, false, scimErr(http.StatusConflict, "uniqueness",
			domain+" is a domain another organization of this project verified: only its directories provision its addresses")
	case exists && trusted && !acc.EmailVerified:
		return identity.Account{}, false, scimErr(http.StatusConflict, "uniqueness",
			"an account with this address exists whose holder has not proven the address: it is linked once they verify it")
	case exists && trusted:
		return acc, true, nil
	case exists:
		return identity.Account{}, false, scimErr(http.StatusConflict, "uniqueness",
			"an account with this address exists, and the organization has not verified "+domain+": verify the domain to link it")
	case trusted:
		acc, err = s.proven.CreateProven(ctx, tx, c.dir.ProjectID, addr, displayNameOf(doc))
	default:
		acc, err = s.provisioned.CreateUnverified(ctx, tx, c.dir.ProjectID, addr, displayNameOf(doc))
	}
	if errors.Is(err, identity.ErrEmailTaken) {
		return identity.Account{}, false, scimErr(http.StatusConflict, "uniqueness", "the address was taken meanwhile: try again")
	}
	return acc, false, err
}

// Create provisions a new User or Group.
func (s *Resources) Create(ctx context.Context, c call, rt *resourceType, body []byte) (map[string]any, error) {
	in, err := decodeObject(body)
	if err != nil {
		return nil, err
	}
	doc, err := normalize(in, rt)
	if err != nil {
		return nil, err
	}
	var row *ent.SCIMResource
	err = database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		name := nameOf(doc, rt)
		taken, err := tx.SCIMResource.Query().Where(append(s.in(c, rt), scimresource.NameKey(strings.ToLower(name)))...).Exist(ctx)
		if err != nil {
			return err
		}
		if taken {
			if rt == userType {
				return errUserNameTaken
			}
			return scimErr(http.StatusConflict, "uniqueness", "displayName is taken in this directory")
		}
		create := tx.SCIMResource.Create().SetProjectID(c.dir.ProjectID).SetDirectoryID(c.dir.ID).SetResourceType(typeOf(rt)).
			SetNameKey(strings.ToLower(name)).SetNillableExternalID(externalIDOf(doc)).SetCreatedAt(s.clock.Now()).SetUpdatedAt(s.clock.Now())
		md := map[string]any{"name": name}
		var members []string
		if rt == userType {
			acc, linked, err := s.person(ctx, tx, c, doc)
			if err != nil {
				return err
			}
			if dup, err := tx.SCIMResource.Query().Where(scimresource.DirectoryID(c.dir.ID), scimresource.UserID(acc.ID)).Exist(ctx); err != nil || dup {
				return cmpErr(err, scimErr(http.StatusConflict, "uniqueness", "another User of this directory is this person already"))
			}
			create.SetUserID(acc.ID).SetActive(activeOf(doc))
			if linked && activeOf(doc) {
				// An account linked may be one a User deleted before deprovisioned (a rehire):
				// marked so, settle reprovisions it, as it does a User set active again
				// (nothing when it was not deprovisioned).
				create.SetDeprovisioned(true)
			}
			md["userId"], md["linked"], md["emailVerified"] = acc.ID, linked, acc.EmailVerified
		} else {
			if members, err = s.checkMembers(ctx, tx, c, doc); err != nil {
				return err
			}
		}
		delete(doc, "active")
		raw, err := json.Marshal(doc)
		if err != nil {
			return err
		}
		if row, err = create.SetAttributes(string(raw)).Save(ctx); err != nil {
			if ent.IsConstraintError(err) {
				return scimErr(http.StatusConflict, "uniqueness", "the resource clashes with one created meanwhile")
			}
			return err
		}
		md["scimId"] = row.ID
		if rt == userType {
			if err := s.roster.Enroll(ctx, tx, c.dir.ProjectID, c.dir.OrgID, *row.UserID, "", c.actor()); err != nil {
				return err
			}
			if err := reassignRoles(ctx, tx, s.roster, c.dir, []string{row.ID}); err != nil {
				return err
			}
			return s.record(ctx, tx, c, actionUserCreate, md)
		}
		if err := reassignRoles(ctx, tx, s.roster, c.dir, members); err != nil {
			return err
		}
		md["members"] = len(members)
		return s.record(ctx, tx, c, actionGroupCreate, md)
	})
	if err != nil {
		return nil, err
	}
	s.marks.mark(c.dir.ID, s.clock.Now())
	if err := s.settle(ctx, c, row); err != nil {
		return nil, err
	}
	return s.render(row, rt)
}

func cmpErr(err error, otherwise error) error {
	if err != nil {
		return err
	}
	return otherwise
}

func externalIDOf(doc map[string]any) *string {
	if s, ok := doc["externalId"].(string); ok {
		return &s
	}
	return nil
}

// checkMembers refuses members that are not Users of the directory (400 invalidValue)
// and returns their ids.
func (s *Resources) checkMembers(ctx context.Context, tx *ent.Tx, c call, doc map[string]any) ([]string, error) {
	var ids []string
	for _, m := range asList(doc["members"]) {
		mm, ok := m.(map[string]any)
		if !ok {
			continue
		}
		v, _ := mm["value"].(string)
		if v == "" {
			return nil, scimErr(400, "invalidValue", "each member needs a value: a User's id")
		}
		ids = append(ids, v)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	n, err := tx.SCIMResource.Query().Where(append(s.in(c, userType), scimresource.IDIn(ids...))...).Count(ctx)
	if err != nil {
		return nil, err
	}
	if n != len(ids) {
		return nil, scimErr(400, "invalidValue", "a member is not a User of this directory")
	}
	return ids, nil
}

// Replace is PUT: the resource's attributes become body's.
func (s *Resources) Replace(ctx context.Context, c call, rt *resourceType, id string, body []byte, ifMatch string) (map[string]any, error) {
	in, err := decodeObject(body)
	if err != nil {
		return nil, err
	}
	return s.write(ctx, c, rt, id, ifMatch, func(cur map[string]any) (map[string]any, error) {
		if v, _, ok := lookup(in, "id"); ok && v != id {
			return nil, scimErr(400, "mutability", "id is read-only")
		}
		return normalize(in, rt)
	})
}

// Patch is PATCH (RFC 7644 §3.5.2).
func (s *Resources) Patch(ctx context.Context, c call, rt *resourceType, id string, body []byte, ifMatch string) (map[string]any, error) {
	in, err := decodeObject(body)
	if err != nil {
		return nil, err
	}
	return s.write(ctx, c, rt, id, ifMatch, func(cur map[string]any) (map[string]any, error) {
		return applyPatch(cur, in, rt, id)
	})
}

// errRaced is a write that found its resource's version changed since it read it.
var errRaced = errors.New("scim: the resource changed while it was written")

// maxWriteTries bounds how often a write without If-Match is tried again after losing a
// race: IdPs send a group's member changes in parallel, each to be kept.
const maxWriteTries = 8

// write changes one resource to what change makes of its attributes, in one
// transaction, and settles its person's state after. The update holds only on the version
// it read: writes at once (Entra adds a group's members one PATCH each, in parallel) would
// otherwise each overwrite the others' (under PostgreSQL's read committed), losing members
// and the roles they give. A write that loses the race is 412 when it named a version
// (If-Match), and is tried again on the new version when it did not.
func (s *Resources) write(ctx context.Context, c call, rt *resourceType, id, ifMatch string, change func(map[string]any) (map[string]any, error)) (map[string]any, error) {
	for try := 1; ; try++ {
		doc, err := s.writeOnce(ctx, c, rt, id, ifMatch, change)
		if !errors.Is(err, errRaced) {
			return doc, err
		}
		if (ifMatch != "" && ifMatch != "*") || try == maxWriteTries {
			return nil, scimErr(http.StatusPreconditionFailed, "", "the resource changed meanwhile: read it again")
		}
	}
}

func (s *Resources) writeOnce(ctx context.Context, c call, rt *resourceType, id, ifMatch string, change func(map[string]any) (map[string]any, error)) (map[string]any, error) {
	var row *ent.SCIMResource
	err := database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		cur, err := s.one(ctx, tx.SCIMResource, c, rt, id)
		if err != nil {
			return err
		}
		if ifMatch != "" && ifMatch != "*" && ifMatch != etag(cur.Version) {
			return scimErr(http.StatusPreconditionFailed, "", "the resource changed: its version is "+etag(cur.Version))
		}
		var doc map[string]any
		if err := json.Unmarshal([]byte(cur.Attributes), &doc); err != nil {
			return err
		}
		if rt == userType {
			doc["active"] = cur.Active
		}
		before := doc
		next, err := change(clone(doc).(map[string]any))
		if err != nil {
			return err
		}
		name := nameOf(next, rt)
		if key := strings.ToLower(name); key != cur.NameKey {
			taken, err := tx.SCIMResource.Query().Where(append(s.in(c, rt), scimresource.NameKey(key))...).Exist(ctx)
			if err != nil {
				return err
			}
			if taken {
				return scimErr(http.StatusConflict, "uniqueness", "that name is taken in this directory")
			}
		}
		up := tx.SCIMResource.UpdateOne(cur).Where(scimresource.Version(cur.Version)).SetNameKey(strings.ToLower(name)).SetVersion(cur.Version + 1).SetUpdatedAt(s.clock.Now())
		if x := externalIDOf(next); x != nil {
			up.SetExternalID(*x)
		} else {
			up.ClearExternalID()
		}
		md := map[string]any{"scimId": id, "name": name}
		var affected []string
		if rt == userType {
			// A write that leaves active out keeps it: RFC 7643 gives it no default, and
			// reading an omission as true let a PUT without it, or a PATCH removing it,
			// reprovision a person their IdP had deactivated.
			active := cur.Active
			if b, ok := next["active"].(bool); ok {
				active = b
			}
			up.SetActive(active)
			md["userId"], md["active"] = *cur.UserID, active
			delete(next, "active")
		} else {
			added, err := s.checkMembers(ctx, tx, c, next)
			if err != nil {
				return err
			}
			old := memberIDs(before)
			affected = append(added, old...)
			md["members"] = len(added)
		}
		raw, err := json.Marshal(next)
		if err != nil {
			return err
		}
		if row, err = up.SetAttributes(string(raw)).Save(ctx); err != nil {
			if ent.IsConstraintError(err) {
				return scimErr(http.StatusConflict, "uniqueness", "the resource clashes with one changed meanwhile")
			}
			if ent.IsNotFound(err) { // another write changed the version it read
				return errRaced
			}
			return err
		}
		if rt == userType {
			return s.record(ctx, tx, c, actionUserUpdate, md)
		}
		if err := reassignRoles(ctx, tx, s.roster, c.dir, affected); err != nil {
			return err
		}
		return s.record(ctx, tx, c, actionGroupUpdate, md)
	})
	if err != nil {
		return nil, err
	}
	s.marks.mark(c.dir.ID, s.clock.Now())
	if err := s.settle(ctx, c, row); err != nil {
		return nil, err
	}
	return s.render(row, rt)
}

func memberIDs(doc map[string]any) []string {
	var ids []string
	for _, m := range asList(doc["members"]) {
		if mm, ok := m.(map[string]any); ok {
			if v, _ := mm["value"].(string); v != "" {
				ids = append(ids, v)
			}
		}
	}
	return ids
}

// settle brings the person a User is to the state the User says (SPEC §27): inactive
// deprovisions them, active again reprovisions them. It runs after the write commits (the
// deprovisioning has transactions of its own) and marks what it did, so a failure is
// tried again on the next write: both calls change nothing when repeated.
func (s *Resources) settle(ctx context.Context, c call, row *ent.SCIMResource) error {
	if row.UserID == nil || row.Active == !row.Deprovisioned {
		return nil
	}
	d := identity.Deprovision{TenantID: c.dir.ProjectID, UserID: *row.UserID, OrgID: c.dir.OrgID, Actor: c.actor(), Origin: c.origin}
	var err error
	if row.Active {
		err = s.deprov.Reprovision(ctx, d)
	} else {
		err = s.deprov.Deprovision(ctx, d)
	}
	if err != nil {
		return err
	}
	return s.ent.SCIMResource.UpdateOneID(row.ID).SetDeprovisioned(!row.Active).Exec(ctx)
}

// Delete removes a resource. A User's person is deprovisioned first (so a failure leaves
// the User to be deleted again), then leaves the org, and the User leaves its groups.
func (s *Resources) Delete(ctx context.Context, c call, rt *resourceType, id string) error {
	row, err := s.one(ctx, s.ent.SCIMResource, c, rt, id)
	if err != nil {
		return err
	}
	if row.UserID != nil {
		d := identity.Deprovision{TenantID: c.dir.ProjectID, UserID: *row.UserID, OrgID: c.dir.OrgID, Actor: c.actor(), Origin: c.origin}
		if err := s.deprov.Deprovision(ctx, d); err != nil {
			return err
		}
	}
	for try := 1; ; try++ {
		// leaveGroups loses a race with a group's write as write does: tried again.
		if err = s.deleteOnce(ctx, c, rt, row); !errors.Is(err, errRaced) || try == maxWriteTries {
			break
		}
	}
	if err == nil {
		s.marks.mark(c.dir.ID, s.clock.Now())
	}
	if errors.Is(err, errRaced) {
		return scimErr(http.StatusConflict, "", "the directory's groups changed meanwhile: try again")
	}
	return err
}

func (s *Resources) deleteOnce(ctx context.Context, c call, rt *resourceType, row *ent.SCIMResource) error {
	id := row.ID
	return database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		n, err := tx.SCIMResource.Delete().Where(append(s.in(c, rt), scimresource.ID(id))...).Exec(ctx)
		if err != nil {
			return err
		}
		if n == 0 {
			return errNotFound
		}
		md := map[string]any{"scimId": id, "name": row.NameKey}
		if rt == groupType {
			var doc map[string]any
			if err := json.Unmarshal([]byte(row.Attributes), &doc); err != nil {
				return err
			}
			if err := reassignRoles(ctx, tx, s.roster, c.dir, memberIDs(doc)); err != nil {
				return err
			}
			return s.record(ctx, tx, c, actionGroupDelete, md)
		}
		if err := s.leaveGroups(ctx, tx, c, id); err != nil {
			return err
		}
		if err := s.roster.Leave(ctx, tx, c.dir.ProjectID, c.dir.OrgID, *row.UserID, c.actor()); err != nil {
			return err
		}
		md["userId"] = *row.UserID
		return s.record(ctx, tx, c, actionUserDelete, md)
	})
}

// leaveGroups takes a deleted User out of every group of the directory.
func (s *Resources) leaveGroups(ctx context.Context, tx *ent.Tx, c call, userID string) error {
	groups, err := tx.SCIMResource.Query().Where(append(s.in(c, groupType), scimresource.AttributesContains(userID))...).All(ctx)
	if err != nil {
		return err
	}
	for _, g := range groups {
		var doc map[string]any
		if err := json.Unmarshal([]byte(g.Attributes), &doc); err != nil {
			return err
		}
		var keep []any
		for _, m := range asList(doc["members"]) {
			if mm, ok := m.(map[string]any); ok && mm["value"] == userID {
				continue
			}
			keep = append(keep, m)
		}
		setOrDelete(doc, "members", keep)
		raw, err := json.Marshal(doc)
		if err != nil {
			return err
		}
		n, err := tx.SCIMResource.Update().Where(scimresource.ID(g.ID), scimresource.Version(g.Version)).
			SetAttributes(string(raw)).SetVersion(g.Version + 1).SetUpdatedAt(s.clock.Now()).Save(ctx)
		if err != nil {
			return err
		}
		if n == 0 {
			return errRaced
		}
	}
	return nil
}

// rolePriority orders the roles groups map to when a person is in several: admin, then
// the roles the project defines by name, then member — member is what everyone has
// anyway, so a defined role says more. The owner role is never given by a directory.
func rolePriority(roles []string) string {
	best := ""
	rank := func(r string) string {
		switch r {
		case "admin":
			return "0"
		case "member":
			return "2"
		}
		return "1" + r
	}
	for _, r := range roles {
		if best == "" || rank(r) < rank(best) {
			best = r
		}
	}
	return best
}

// reassignRoles gives each User of users (every User of the directory when nil) the org
// role its groups map to through the directory's groupRoles, member when none does; a
// directory without groupRoles leaves roles to the org's admins. Tokens issued afterwards
// carry the new role (SPEC §27).
func reassignRoles(ctx context.Context, tx *ent.Tx, roster identity.OrgRoster, dir *ent.SCIMDirectory, users []string) error {
	if len(dir.GroupRoles) == 0 || (users != nil && len(users) == 0) {
		return nil
	}
	groups, err := tx.SCIMResource.Query().Where(scimresource.DirectoryID(dir.ID), scimresource.ResourceTypeEQ(scimresource.ResourceTypeGroup)).All(ctx)
	if err != nil {
		return err
	}
	mapped := map[string][]string{} // User id → roles of its mapped groups
	for _, g := range groups {
		var doc map[string]any
		if err := json.Unmarshal([]byte(g.Attributes), &doc); err != nil {
			return err
		}
		role, ok := dir.GroupRoles[nameOf(doc, groupType)]
		if !ok {
			continue
		}
		for _, m := range memberIDs(doc) {
			mapped[m] = append(mapped[m], role)
		}
	}
	q := tx.SCIMResource.Query().Where(scimresource.DirectoryID(dir.ID), scimresource.ResourceTypeEQ(scimresource.ResourceTypeUser))
	if users != nil {
		q = q.Where(scimresource.IDIn(users...))
	}
	rows, err := q.Order(ent.Asc(scimresource.FieldID)).All(ctx)
	if err != nil {
		return err
	}
	for _, r := range rows {
		role := rolePriority(mapped[r.ID])
		if role == "" {
			role = "member"
		}
		err := roster.Enroll(ctx, tx, dir.ProjectID, dir.OrgID, *r.UserID, role, "directory:"+dir.ID)
		if errors.Is(err, identity.ErrNoOrgRole) {
			return scimErr(http.StatusConflict, "", fmt.Sprintf("group role %q no longer exists: fix the directory's groupRoles", role))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

var _ = sort.Strings
