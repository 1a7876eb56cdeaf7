package badge

import (
	"context"
	entgo "entgo.io/ent"
	"entgo.io/ent/schema/field"
	"time"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/schema"
	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/credential"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/jsonbody"
	"github.com/authcore/authcore/platform/lifecycle"
	"github.com/authcore/authcore/platform/policy"
	"github.com/authcore/authcore/platform/product"
)

// Kind is the credential kind of badges: the metrics label and invalidation topic.
const Kind = "service_badge"

// Own fields of a badge.
const (
	fieldProduct = "product"
	fieldName    = "name"
	fieldRole    = "role"
	fieldOrgID   = "org_id"
)

// Table is the badges' table (seed 4.4, SPEC §6). Only the SHA-256 of a badge's secret is
// stored.
var Table = lifecycle.Declare(lifecycle.Table{
	Name:  "badges",
	Mixin: schema.KindMixin{IDPrefix: "bdg_"},
	Fields: []entgo.Field{
		field.String(fieldProduct).Immutable().NotEmpty(),
		field.String(fieldName).Immutable().NotEmpty(),
		field.String(fieldRole).Immutable().NotEmpty(),
		// org_id binds the badge to one org of its project (SPEC §26): its answers carry
		// it. Kept in the row, so the verifier's cache holds it.
		field.String(fieldOrgID).Optional().Nillable().Immutable(),
	},
})

var _ credential.Badges = (*Service)(nil)

// names reads badges' names for the products that show them (credential.BadgeNames).
type names struct{ db *database.DB }

func (n names) BadgeName(ctx context.Context, id string) (string, error) {
	r, err := Table.Read(ctx, n.db, id)
	if r == nil || err != nil {
		return "", err
	}
	return r.String(fieldName), nil
}

// Service is badges: the shared lifecycle, with a prefix per product, and the products'
// own credentials minted, rolled and withdrawn in its transactions.
type Service struct {
	life     *lifecycle.Lifecycle
	products *product.Registry
	policies policy.Source
	clock    clock.Clock
	// orgs says which orgs a project has (SPEC §26); nil without the org module.
	orgs identity.Orgs
}

// NewService returns the service.
func NewService(p Params) (*Service, error) {
	s := &Service{products: p.Products, policies: p.Policies, clock: p.Lifecycle.Kit.Clock, orgs: p.Orgs}
	productOf := func(r *lifecycle.Row) string { return r.String(fieldProduct) }
	life, err := lifecycle.New(p.Lifecycle, lifecycle.Spec{
		Name: Kind, Prefixes: p.Products.Keys(), Table: Table, IDField: "badgeId",
	}, lifecycle.Hooks{
		Answer: answer, Introspect: introspect, Label: productOf, Key: productOf,
		Minted: s.minted, Rolled: s.rolled, Revoked: s.revoked,
		CreateMetadata: createMetadata,
		Org:            func(r *lifecycle.Row) string { return r.String(fieldOrgID) },
		RollMetadata:   func(r *lifecycle.Row) map[string]any { return map[string]any{"product": productOf(r)} },
		NotFound:       ErrNotFound,
	})
	if err != nil {
		return nil, err
	}
	s.life = life
	return s, nil
}

// createMetadata is the create's audit metadata: the badge's own fields, its org only
// when it has one, so an unbound badge's record is as it always was.
func createMetadata(r *lifecycle.Row) map[string]any {
	md := map[string]any{"product": r.String(fieldProduct), "name": r.String(fieldName), "role": r.String(fieldRole)}
	if org := r.String(fieldOrgID); org != "" {
		md["orgId"] = org
	}
	return md
}

// contract is a badge as its product is told of it (Options: only at Mint).
func contract(r *lifecycle.Row) product.Badge {
	return product.Badge{ID: r.ID, ProjectID: r.ProjectID, Product: r.String(fieldProduct), Name: r.String(fieldName),
		Role: r.String(fieldRole), ExpiresAt: r.ExpiresAt}
}

// minted issues the product's own credentials in the badge's transaction.
func (s *Service) minted(ctx context.Context, tx *ent.Tx, r *lifecycle.Row, options any) (any, error) {
	p, _ := s.products.Get(r.String(fieldProduct)) // the create checked it
	b := contract(r)
	b.Options = options
	creds, err := p.Mint(ctx, tx, b)
	return creds, mintFailed(err)
}

// rolled renews them in the roll's; the replaced ones work until graceUntil.
func (s *Service) rolled(ctx context.Context, tx *ent.Tx, r *lifecycle.Row, graceUntil *time.Time) (any, error) {
	p, _ := s.products.Get(r.String(fieldProduct)) // mayRoll checked it
	creds, err := p.Roll(ctx, tx, contract(r), graceUntil)
	return creds, mintFailed(err)
}

// revoked withdraws them in the revoke's: a product no longer registered has none.
func (s *Service) revoked(ctx context.Context, tx *ent.Tx, r *lifecycle.Row) error {
	if p, ok := s.products.Get(r.String(fieldProduct)); ok {
		return p.Revoke(ctx, tx, contract(r))
	}
	return nil
}

// meBody is the service-badges/me answer (SPEC §6).
type meBody struct {
	Authenticated bool       `json:"authenticated"`
	Kind          string     `json:"kind"`
	BadgeID       string     `json:"badgeId"`
	ProjectID     string     `json:"projectId"`
	Product       string     `json:"product"`
	Role          string     `json:"role"`
	ExpiresAt     *time.Time `json:"expiresAt"`
	// OrgID is the org the badge is bound to (SPEC §26), absent for an unbound one.
	OrgID string `json:"orgId,omitempty"`
}

func answer(dst []byte, r *lifecycle.Row) ([]byte, error) {
	return appendMe(dst, meBody{Authenticated: true, Kind: Kind, BadgeID: r.ID, ProjectID: r.ProjectID, Product: r.String(fieldProduct),
		Role: r.String(fieldRole), ExpiresAt: r.ExpiresAt, OrgID: r.String(fieldOrgID)})
}

// appendMe appends m as encoding/json encodes it, by hand: it is encoded on every
// service-badges/me request, where encoding/json's reflection cost about 2 µs.
// FuzzMeMatchesEncodingJSON holds the two to the same bytes.
func appendMe(dst []byte, m meBody) ([]byte, error) {
	o := jsonbody.Begin(dst)
	o.Bool("authenticated", m.Authenticated)
	o.String("kind", m.Kind)
	o.String("badgeId", m.BadgeID)
	o.String("projectId", m.ProjectID)
	o.String("product", m.Product)
	o.String("role", m.Role)
	o.TimeOrNull("expiresAt", m.ExpiresAt)
	if m.OrgID != "" {
		o.String("orgId", m.OrgID)
	}
	return o.End()
}

// introspect is RFC 7662's answer for a live badge secret (SPEC §11): its role is its scope.
func introspect(r lifecycle.Row, fields map[string]any) {
	role := r.String(fieldRole)
	fields["badge_id"], fields["product"], fields["role"], fields["scope"] = r.ID, r.String(fieldProduct), role, role
	if org := r.String(fieldOrgID); org != "" {
		fields["org_id"] = org
	}
}

// mint is what Create hands the lifecycle: the request within the project's policy (SPEC
// §12): a lifetime beyond it is refused, none is clamped to it; and the product's own
// fields of body, which a Configurable product checks.
func (s *Service) mint(ctx context.Context, projectID string, req CreateRequest, body []byte) (lifecycle.Mint, error) {
	pol, err := s.policies.Policy(ctx, projectID)
	if err != nil {
		return lifecycle.Mint{}, err
	}
	if max := pol.BadgeMaxExpiresInDays; max != nil {
		switch {
		case req.ExpiresInDays == nil:
			req.ExpiresInDays = max
		case *req.ExpiresInDays > *max:
			return lifecycle.Mint{}, apperr.Validation(apperr.Issue{Field: "expiresInDays", Reason: "exceeds_policy"})
		}
	}
	m := lifecycle.Mint{Key: req.Product.Key(), Own: map[string]any{fieldProduct: req.Product.Key(), fieldName: req.Name, fieldRole: req.Role}}
	if req.OrgID != "" {
		ok := false
		if s.orgs != nil {
			if ok, err = s.orgs.OrgExists(ctx, projectID, req.OrgID); err != nil {
				return lifecycle.Mint{}, err
			}
		}
		if !ok { // another project's org is none of this one's either
			return lifecycle.Mint{}, apperr.Validation(apperr.Issue{Field: "orgId", Reason: "names no org of this project"})
		}
		m.Own[fieldOrgID] = req.OrgID
	}
	if req.ExpiresInDays != nil {
		e := s.clock.Now().Add(time.Duration(*req.ExpiresInDays) * 24 * time.Hour)
		m.ExpiresAt = &e
	}
	if p, ok := req.Product.(product.Configurable); ok {
		opts, err := p.MintOptions(ctx, projectID, body)
		if err != nil {
			return lifecycle.Mint{}, err
		}
		m.Options, m.Metadata = opts.Value, opts.Audit
	}
	return m, nil
}

// mayRoll reads the project's policy: a badge of a product no longer registered has
// nothing to roll into, and one the policy no longer allows gets no new secret.
func (s *Service) mayRoll(ctx context.Context, projectID string) (func(*lifecycle.Row, time.Time) error, error) {
	pol, err := s.policies.Policy(ctx, projectID)
	if err != nil {
		return nil, err
	}
	return func(r *lifecycle.Row, now time.Time) error {
		if _, ok := s.products.Get(r.String(fieldProduct)); !ok {
			return ErrNotFound
		}
		if max := pol.BadgeMaxExpiresInDays; max != nil && (r.ExpiresAt == nil || r.ExpiresAt.Sub(now) > time.Duration(*max)*24*time.Hour) {
			return apperr.Validation(apperr.Issue{Field: "expiresAt", Reason: "exceeds_policy"})
		}
		return nil
	}, nil
}

// RevokeLive revokes the live badge with this id as r says — for a product's own secret
// (an auth client secret, an s3 access key) presented in a leak report or to RFC 7009:
// the whole badge goes, with every credential of its product. ErrNotLive when it is not live.
func (s *Service) RevokeLive(ctx context.Context, badgeID string, r credential.Revocation) error {
	return s.life.RevokeLive(ctx, badgeID, r)
}
