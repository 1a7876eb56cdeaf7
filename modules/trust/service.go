package trust

import (
	"context"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/trustedauthorizationserver"
	"github.com/authcore/authcore/ent/trustedissuer"
	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/assertion"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/bearer"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/invalidation"
	"github.com/authcore/authcore/platform/outbound"
	"github.com/authcore/authcore/platform/resource"
	"github.com/authcore/authcore/platform/scope"
)

// Kinds of trusted issuer.
const (
	kindWorkload   = "workload"
	kindEnterprise = "enterprise"
)

// Limits of a project's trust.
const (
	maxIssuers = 50
	maxScopes  = 32
	maxURI     = 2048
	maxName    = 100
	// maxDocument bounds a discovery document or key set fetched.
	maxDocument  = 64 << 10
	fetchTimeout = 5 * time.Second
	// topic invalidates cached issuers on every replica when one is removed.
	topic = "trusted_issuer"
)

// Audit actions (and webhook events) of trust.
const (
	actionIssuerAdd    = "trust.issuer_add"
	actionIssuerRemove = "trust.issuer_remove"
	actionASAdd        = "trust.authorization_server_add"
	actionASRemove     = "trust.authorization_server_remove"
	actionJWTBearer    = "trust.jwt_bearer"
	actionIDJAG        = "trust.id_jag_issue"
)

// service keeps what a project trusts.
type service struct {
	ent     *ent.Client
	clock   clock.Clock
	audit   *audit.Recorder
	bus     invalidation.Bus
	fetcher *outbound.Fetcher
	// issuers caches a project's issuer by (project, issuer URL); a removal anywhere
	// drops it when it commits.
	issuers *bearer.Cache[string, *ent.TrustedIssuer]
}

// key is a cache key, sent to other replicas on removal: a space, which no URL holds, and
// not NUL, which PostgreSQL text refuses.
func key(project, issuer string) string { return project + " " + issuer }

// issuerOf is project's trusted issuer with URL iss, or nil.
func (s *service) issuerOf(ctx context.Context, project, iss string) (*ent.TrustedIssuer, error) {
	return s.issuers.Load(ctx, key(project, iss), func(ctx context.Context) (*ent.TrustedIssuer, error) {
		row, err := s.ent.TrustedIssuer.Query().Where(trustedissuer.ProjectID(project), trustedissuer.Issuer(iss)).Only(ctx)
		if ent.IsNotFound(err) {
			return nil, nil
		}
		return row, err
	})
}

// issuerByID is the trusted issuer with id, or nil: what tokens issued from it are worth.
func (s *service) issuerByID(ctx context.Context, id string) (*ent.TrustedIssuer, error) {
	row, err := s.ent.TrustedIssuer.Get(ctx, id)
	if ent.IsNotFound(err) {
		return nil, nil
	}
	return row, err
}

// keys is where an issuer's keys come from: inline, its jwks_uri, or its discovery
// document's jwks_uri (fetched under the outbound rules, the issuer checked).
func (s *service) keys(ti *ent.TrustedIssuer) assertion.KeySet {
	switch {
	case ti.Jwks != nil:
		set, err := assertion.ParseKeySet(ti.Jwks)
		if err != nil { // checked when added
			return assertion.Static{}
		}
		return assertion.Static{Set: set}
	case ti.JwksURI != "":
		return assertion.Remote{Fetcher: s.fetcher, URL: ti.JwksURI}
	}
	return discovered{fetcher: s.fetcher, issuer: ti.Issuer}
}

// discovered is an issuer's key set by OpenID Connect discovery (or RFC 8414): the
// jwks_uri its document names, the document's issuer the one trusted.
type discovered struct {
	fetcher *outbound.Fetcher
	issuer  string
}

func (d discovered) Keys(ctx context.Context, kid string) ([]jose.JSONWebKey, error) {
	doc := d.fetcher.Get(ctx, strings.TrimRight(d.issuer, "/")+"/.well-known/openid-configuration")
	if doc.Err != nil {
		return nil, &assertion.Error{Why: "the issuer's discovery document: " + doc.Err.Error()}
	}
	var meta struct {
		Issuer  string `json:"issuer"`
		JWKSURI string `json:"jwks_uri"`
	}
	if err := json.Unmarshal(doc.Body, &meta); err != nil || meta.Issuer != d.issuer || meta.JWKSURI == "" {
		return nil, &assertion.Error{Why: "the issuer's discovery document does not name it as issuer with a jwks_uri"}
	}
	return assertion.Remote{Fetcher: d.fetcher, URL: meta.JWKSURI}.Keys(ctx, kid)
}

// issuerInput is a validated body of POST …/trust/issuers.
type issuerInput struct {
	Issuer, Kind, Name, JWKSURI, Audience, SubjectClaim, SubjectPattern string
	JWKS                                                                map[string]any
	Scopes, Resources                                                   []string
	TrustEmail                                                          bool
}

// check validates what the body says beyond its types: URLs, scopes, resources
// registered by the project.
func (s *service) check(ctx context.Context, project string, in *issuerInput, resources resource.Registry) error {
	var issues []apperr.Issue
	fail := func(f, r string) { issues = append(issues, apperr.Issue{Field: f, Reason: r}) }
	if u, err := url.Parse(in.Issuer); err != nil || !u.IsAbs() || u.Host == "" || u.Fragment != "" || u.RawQuery != "" || len(in.Issuer) > maxURI ||
		(u.Scheme != "https" && u.Scheme != "http") {
		fail("issuer", "must be an absolute URL without query or fragment")
	}
	if in.Kind != kindWorkload && in.Kind != kindEnterprise {
		fail("kind", "must be workload or enterprise")
	}
	if in.JWKS != nil && in.JWKSURI != "" {
		fail("jwks", "give jwks or jwksUri, not both")
	}
	if in.JWKS != nil {
		if _, err := assertion.ParseKeySet(in.JWKS); err != nil {
			fail("jwks", err.Error())
		}
	}
	if in.JWKSURI != "" {
		if u, err := url.Parse(in.JWKSURI); err != nil || !u.IsAbs() || u.Host == "" || len(in.JWKSURI) > maxURI {
			fail("jwksUri", "must be an absolute URL")
		}
	}
	switch {
	case in.Kind == kindWorkload && in.Audience == "":
		fail("audience", "required for a workload issuer: what its tokens' aud must be")
	case in.Kind == kindWorkload && in.SubjectPattern == "":
		// A shared issuer (a CI service, a cloud's) signs for every tenant's workloads:
		// trusting all its subjects must be said, not a default.
		fail("subjectPattern", "required for a workload issuer: the subjects it may speak for (* for all of them)")
	case in.Kind == kindEnterprise && in.Audience != "":
		fail("audience", "an ID-JAG's audience is this server: leave it out")
	}
	if in.SubjectClaim == "" {
		in.SubjectClaim = "sub"
	}
	if len(in.SubjectClaim) > 64 || len(in.SubjectPattern) > 256 {
		fail("subjectPattern", "subjectClaim is at most 64 characters, subjectPattern 256")
	}
	if len(in.Scopes) > maxScopes {
		fail("scopes", "at most 32")
	}
	for _, sc := range in.Scopes {
		if !scope.Valid(sc) {
			fail("scopes", "each must match "+scope.Pattern.String())
			break
		}
	}
	for i, r := range in.Resources {
		canonical, err := resource.Canonical(r)
		if err != nil {
			fail("resources", "each must be a resource URI")
			break
		}
		got, ok, err := resources.Lookup(ctx, canonical)
		if err != nil {
			return err
		}
		if !ok || got.ProjectID != project {
			fail("resources", "each must be a resource this project registered: "+r)
			break
		}
		in.Resources[i] = got.URI
	}
	if len(issues) > 0 {
		return apperr.Validation(issues...)
	}
	return nil
}

var errExists = apperr.New(apperr.KindConflict, "issuer_exists", "the project trusts this issuer already")

// add records a trusted issuer, audited.
func (s *service) add(ctx context.Context, project string, actor *string, in issuerInput, origin audit.Origin) (*ent.TrustedIssuer, error) {
	var row *ent.TrustedIssuer
	err := database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		n, err := tx.TrustedIssuer.Query().Where(trustedissuer.ProjectID(project)).Count(ctx)
		if err != nil {
			return err
		}
		if n >= maxIssuers {
			return apperr.Validation(apperr.Issue{Field: "issuer", Reason: "a project trusts at most 50 issuers"})
		}
		c := tx.TrustedIssuer.Create().SetProjectID(project).SetIssuer(in.Issuer).SetKind(trustedissuer.Kind(in.Kind)).SetName(in.Name).
			SetJwksURI(in.JWKSURI).SetAudience(in.Audience).SetSubjectClaim(in.SubjectClaim).SetSubjectPattern(in.SubjectPattern).
			SetScopes(nonNil(in.Scopes)).SetResources(nonNil(in.Resources)).SetTrustEmail(in.TrustEmail).SetNillableCreatedBy(actor)
		if in.JWKS != nil {
			c = c.SetJwks(in.JWKS)
		}
		if row, err = c.Save(ctx); ent.IsConstraintError(err) {
			return errExists
		} else if err != nil {
			return err
		}
		_, err = s.audit.Record(ctx, tx, audit.Event{ActorID: actor, ProjectID: project, Action: actionIssuerAdd, Origin: origin,
			Metadata: map[string]any{"issuerId": row.ID, "issuer": row.Issuer, "kind": in.Kind}})
		if err != nil {
			return err
		}
		return s.bus.Publish(ctx, tx, topic, key(project, row.Issuer))
	})
	return row, err
}

var errNoIssuer = apperr.NotFound("the project trusts no issuer with this id")

// remove ends the trust: its grants issue nothing from the commit on, and the access
// tokens they issued introspect inactive, on every replica.
func (s *service) remove(ctx context.Context, project, id string, actor *string, origin audit.Origin) error {
	return database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		row, err := tx.TrustedIssuer.Query().Where(trustedissuer.ID(id), trustedissuer.ProjectID(project)).Only(ctx)
		if ent.IsNotFound(err) {
			return errNoIssuer
		}
		if err != nil {
			return err
		}
		if err := tx.TrustedIssuer.DeleteOne(row).Exec(ctx); err != nil {
			return err
		}
		if _, err := s.audit.Record(ctx, tx, audit.Event{ActorID: actor, ProjectID: project, Action: actionIssuerRemove, Origin: origin,
			Metadata: map[string]any{"issuerId": row.ID, "issuer": row.Issuer}}); err != nil {
			return err
		}
		if err := s.bus.Publish(ctx, tx, topic, key(project, row.Issuer)); err != nil {
			return err
		}
		return s.bus.Publish(ctx, tx, topic, row.ID)
	})
}

var (
	errASExists = apperr.New(apperr.KindConflict, "authorization_server_exists", "the project allows this authorization server already")
	errNoAS     = apperr.NotFound("the project allows no authorization server with this id")
)

// addAS lets project's people's agents get ID-JAGs for the authorization server issuer.
func (s *service) addAS(ctx context.Context, project string, actor *string, issuer, clientID string, origin audit.Origin) (*ent.TrustedAuthorizationServer, error) {
	var row *ent.TrustedAuthorizationServer
	err := database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		var err error
		if row, err = tx.TrustedAuthorizationServer.Create().SetProjectID(project).SetIssuer(issuer).SetClientID(clientID).
			SetNillableCreatedBy(actor).Save(ctx); ent.IsConstraintError(err) {
			return errASExists
		} else if err != nil {
			return err
		}
		_, err = s.audit.Record(ctx, tx, audit.Event{ActorID: actor, ProjectID: project, Action: actionASAdd, Origin: origin,
			Metadata: map[string]any{"authorizationServerId": row.ID, "issuer": issuer, "clientId": clientID}})
		return err
	})
	return row, err
}

func (s *service) removeAS(ctx context.Context, project, id string, actor *string, origin audit.Origin) error {
	return database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		row, err := tx.TrustedAuthorizationServer.Query().Where(trustedauthorizationserver.ID(id), trustedauthorizationserver.ProjectID(project)).Only(ctx)
		if ent.IsNotFound(err) {
			return errNoAS
		}
		if err != nil {
			return err
		}
		if err := tx.TrustedAuthorizationServer.DeleteOne(row).Exec(ctx); err != nil {
			return err
		}
		_, err = s.audit.Record(ctx, tx, audit.Event{ActorID: actor, ProjectID: project, Action: actionASRemove, Origin: origin,
			Metadata: map[string]any{"authorizationServerId": row.ID, "issuer": row.Issuer}})
		return err
	})
}

// matches reports whether subject fits pattern, where * stands for any run of
// characters ("" matches anything). Hand-written: path.Match's * stops at a slash, which
// SPIFFE IDs are made of, and a glob library is more than one wildcard needs.
func matches(pattern, subject string) bool {
	if pattern == "" {
		return true
	}
	parts := strings.Split(pattern, "*")
	if !strings.HasPrefix(subject, parts[0]) {
		return false
	}
	rest := subject[len(parts[0]):]
	for i, p := range parts[1:] {
		last := i == len(parts)-2
		if last {
			return strings.HasSuffix(rest, p) && len(rest) >= len(p)
		}
		j := strings.Index(rest, p)
		if j < 0 {
			return false
		}
		rest = rest[j+len(p):]
	}
	return rest == ""
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// intersect is the scopes of requested each covered by allowed: an issuer listed with no
// scopes is given none.
func intersect(requested, allowed []string) []string {
	out := []string{}
	for _, r := range requested {
		if scope.CoveredBy(allowed, r) && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}
