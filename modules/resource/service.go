package resource

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"entgo.io/ent/dialect/sql"
	"go.uber.org/fx"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/predicate"
	entresource "github.com/authcore/authcore/ent/resource"
	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/bearer"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/invalidation"
	"github.com/authcore/authcore/platform/jsonbody"
	"github.com/authcore/authcore/platform/oauth"
	"github.com/authcore/authcore/platform/resource"
	"github.com/authcore/authcore/platform/scope"
)

const (
	maxResources = 100 // per project
	maxName      = 100
	maxScopes    = 32
	topic        = "resource"
	// cacheTTL bounds how long a lookup is trusted without an invalidation; deletes and
	// registrations invalidate at once, here and on every replica.
	cacheTTL  = 30 * time.Second
	cacheSize = 10_000
)

// Service registers a project's resources and answers the Registry. It imports no HTTP.
type Service struct {
	ent   *ent.Client
	clock clock.Clock
	audit *audit.Recorder
	bus   invalidation.Bus
	// grants ends the grants naming a deleted resource (nil without grants).
	grants oauth.GrantEnder
	// cache maps a canonical URI to its resource; a URI nobody registered is cached as
	// the zero Resource, so unknown audiences cost no store query either.
	cache *bearer.Cache[string, resource.Resource]
	// backfilled is set once a Backfill pass found nothing left to fill: until then a
	// lookup also finds a row written before canonical forms were kept by its URI.
	backfilled atomic.Bool
}

type params struct {
	fx.In
	Ent    *ent.Client
	Clock  clock.Clock
	Audit  *audit.Recorder
	Bus    invalidation.Bus
	Grants oauth.GrantEnder `optional:"true"`
}

func newService(p params) *Service {
	s := &Service{ent: p.Ent, clock: p.Clock, audit: p.Audit, bus: p.Bus, grants: p.Grants,
		cache: bearer.NewCache[string, resource.Resource](cacheSize, cacheTTL)}
	bearer.Follow(p.Bus, topic, s.cache)
	return s
}

// View is a resource as the API shows it.
type View struct {
	ID        string    `json:"id"`
	ProjectID string    `json:"projectId"`
	URI       string    `json:"uri"`
	Name      string    `json:"name"`
	Scopes    []string  `json:"scopes"`
	CreatedAt time.Time `json:"createdAt"`
}

func view(r *ent.Resource) View {
	sc := r.Scopes
	if sc == nil {
		sc = []string{}
	}
	return View{ID: r.ID, ProjectID: r.ProjectID, URI: r.URI, Name: r.Name, Scopes: sc, CreatedAt: r.CreatedAt.UTC()}
}

var (
	errTaken    = apperr.Conflict("resource_taken", "this URI is registered already")
	errTooMany  = apperr.Conflict("too_many_resources", "a project has at most 100 resources")
	errNotFound = apperr.NotFound("no such resource in this project")
)

// Create reads { uri, name, scopes? } and registers the resource for the project.
func (s *Service) Create(ctx context.Context, projectID string, actor *string, raw []byte, origin audit.Origin) (View, error) {
	f := jsonbody.Read(raw)
	uri := f.RequiredString("uri")
	registered, err := resource.Registered(uri)
	if uri != "" && err != nil {
		f.Fail("uri", err.Error())
	}
	// Registered accepts exactly what Canonical does.
	canonical, _ := resource.Canonical(uri)
	name := f.RequiredString("name")
	switch {
	case name == "":
	case utf8.RuneCountInString(name) > maxName:
		f.Fail("name", "must be at most 100 characters")
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		f.Fail("name", "must not contain control characters")
	}
	scopes := []string{}
	switch sc, st := f.Strings("scopes"); st {
	case jsonbody.Absent, jsonbody.Null:
	case jsonbody.OK:
		if len(sc) > maxScopes {
			f.Fail("scopes", "at most 32 scopes")
		}
		for _, x := range sc {
			if !scope.Valid(x) {
				f.Fail("scopes", "every scope must match "+scope.Pattern.String())
				break
			}
		}
		scopes = sc
	default:
		f.Fail("scopes", "must be an array of strings")
	}
	if err := f.Err(); err != nil {
		return View{}, err
	}
	var out *ent.Resource
	err = database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		n, err := tx.Resource.Query().Where(entresource.ProjectID(projectID)).Count(ctx)
		if err != nil {
			return err
		}
		if n >= maxResources {
			return errTooMany
		}
		out, err = tx.Resource.Create().SetProjectID(projectID).SetURI(registered).SetCanonicalURI(canonical).SetName(name).SetScopes(scopes).
			SetNillableCreatedBy(actor).SetCreatedAt(s.clock.Now()).Save(ctx)
		if ent.IsConstraintError(err) {
			return errTaken
		}
		if err != nil {
			return err
		}
		if _, err := s.audit.Record(ctx, tx, audit.Event{ActorID: actor, ProjectID: projectID, Action: "oauth_resource.create",
			Metadata: map[string]any{"resourceId": out.ID, "uri": registered}, Origin: origin}); err != nil {
			return err
		}
		// A URI looked up (and cached as unknown) before it was registered becomes known.
		return s.bus.Publish(ctx, tx, topic, canonical)
	})
	if err != nil {
		return View{}, err
	}
	return view(out), nil
}

// List is the project's resources, newest first.
func (s *Service) List(ctx context.Context, projectID string) ([]View, error) {
	rs, err := s.ent.Resource.Query().Where(entresource.ProjectID(projectID)).Order(entresource.ByID(sql.OrderDesc())).All(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]View, len(rs))
	for i, r := range rs {
		out[i] = view(r)
	}
	return out, nil
}

// Delete unregisters one of the project's resources: no token is issued for it from the
// moment this returns, on any replica. Tokens already issued live out their minutes.
func (s *Service) Delete(ctx context.Context, projectID, id string, actor *string, origin audit.Origin) error {
	return database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		r, err := tx.Resource.Query().Where(entresource.ID(id), entresource.ProjectID(projectID)).Only(ctx)
		if ent.IsNotFound(err) {
			return errNotFound
		}
		if err != nil {
			return err
		}
		if err := tx.Resource.DeleteOne(r).Exec(ctx); err != nil {
			return err
		}
		if _, err := s.audit.Record(ctx, tx, audit.Event{ActorID: actor, ProjectID: projectID, Action: "oauth_resource.delete",
			Metadata: map[string]any{"resourceId": r.ID, "uri": r.URI}, Origin: origin}); err != nil {
			return err
		}
		if s.grants != nil {
			// A grant for it would go on minting for the URI once another project holds
			// it (SPEC §9b): it ends with the registration.
			if _, err := s.grants.EndGrants(ctx, tx, oauth.GrantsOf{ProjectID: projectID, Resource: r.URI},
				oauth.GrantEnding{ActorID: actor, Reason: "resource_deleted", Origin: origin}); err != nil {
				return err
			}
		}
		return s.bus.Publish(ctx, tx, topic, canonicalOf(r))
	})
}

// canonicalOf is the canonical form of a registered resource.
func canonicalOf(r *ent.Resource) string {
	if r.CanonicalURI != nil {
		return *r.CanonicalURI
	}
	c, _ := resource.Canonical(r.URI)
	return c
}

// Lookup is the Registry: the resource registered under the canonical uri, whatever
// spelling its project registered, from the cache when it can.
func (s *Service) Lookup(ctx context.Context, canonical string) (resource.Resource, bool, error) {
	r, err := s.cache.Load(ctx, canonical, func(ctx context.Context) (resource.Resource, error) {
		e, err := s.ent.Resource.Query().Where(entresource.CanonicalURI(canonical)).Only(ctx)
		if ent.IsNotFound(err) && !s.backfilled.Load() {
			e, err = s.ent.Resource.Query().Where(entresource.CanonicalURIIsNil(), entresource.URI(canonical)).Only(ctx)
		}
		if ent.IsNotFound(err) {
			return resource.Resource{}, nil
		}
		if err != nil {
			return resource.Resource{}, err
		}
		return resource.Resource{ID: e.ID, ProjectID: e.ProjectID, URI: e.URI, Name: e.Name, Scopes: e.Scopes}, nil
	})
	return r, err == nil && r.ID != "", err
}

// Backfill gives resources registered before canonical forms were kept (SPEC §9b) theirs,
// oldest first. A resource equivalent to an older one of another project keeps none: it
// is found by no lookup, since one URI is one project's, and the log names both. Once a
// pass completes, later ones do nothing.
func (s *Service) Backfill(ctx context.Context, log *slog.Logger) error {
	if s.backfilled.Load() {
		return nil
	}
	// Canonical forms kept before empty path segments collapsed (…//mcp) are redone too:
	// lookups compute the collapsed form, which would find them no more.
	uncollapsed := predicate.Resource(func(sel *sql.Selector) { sel.Where(sql.Like(sel.C(entresource.FieldCanonicalURI), "%://%//%")) })
	rows, err := s.ent.Resource.Query().Where(entresource.Or(entresource.CanonicalURIIsNil(), uncollapsed)).Order(entresource.ByID()).All(ctx)
	if err != nil {
		return err
	}
	for _, r := range rows {
		c, err := resource.Canonical(r.URI)
		if err != nil {
			log.WarnContext(ctx, "a registered resource URI is no longer valid; it is found by no lookup", "resourceId", r.ID, "uri", r.URI)
			continue
		}
		unchanged := entresource.CanonicalURIIsNil()
		if r.CanonicalURI != nil {
			if *r.CanonicalURI == c {
				continue
			}
			unchanged = entresource.CanonicalURI(*r.CanonicalURI)
		}
		err = database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
			if err := tx.Resource.Update().Where(entresource.ID(r.ID), unchanged).SetCanonicalURI(c).Exec(ctx); err != nil {
				return err
			}
			// Found by its canonical form from now on: lookups cached before ask again.
			return s.bus.Publish(ctx, tx, topic, c)
		})
		if ent.IsConstraintError(err) {
			holder, _ := s.ent.Resource.Query().Where(entresource.CanonicalURI(c)).Only(ctx)
			if holder != nil {
				log.WarnContext(ctx, "a registered resource URI is equivalent to an older one; it is found by no lookup",
					"resourceId", r.ID, "uri", r.URI, "projectId", r.ProjectID, "heldBy", holder.ID, "heldByProject", holder.ProjectID)
			}
			continue
		}
		if err != nil {
			return err
		}
	}
	s.backfilled.Store(true)
	return nil
}
