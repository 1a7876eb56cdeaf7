package badge

import (
	"cmp"
	"context"
	"errors"
	"maps"
	"time"

	"entgo.io/ent/dialect/sql"

	"github.com/authcore/authcore/ent"
	entbadge "github.com/authcore/authcore/ent/badge"
	"github.com/authcore/authcore/ent/predicate"
	"github.com/authcore/authcore/ent/schema"
	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/bearer"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/credential"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/metrics"
	"github.com/authcore/authcore/platform/policy"
	"github.com/authcore/authcore/platform/product"
	"github.com/authcore/authcore/platform/rollover"
	"github.com/authcore/authcore/platform/secret"
	"github.com/authcore/authcore/platform/usage"
)

// Kind is the credential kind of badges: the metrics label and invalidation topic.
const Kind = "service_badge"

var _ credential.Badges = (*Service)(nil)

// Service mints, lists, revokes and verifies badges. It knows products only through the
// contract in platform/product, and imports no HTTP.
type Service struct {
	ent      *ent.Client
	products *product.Registry
	audit    *audit.Recorder
	clock    clock.Clock
	metrics  *metrics.Credentials
	policies policy.Source
	verifier *bearer.Verifier[answer]
	usage    usage.Reader
}

// Badge is the badge record (SPEC §6). Never a digest or a secret.
type Badge struct {
	ID         string     `json:"id"`
	ProjectID  string     `json:"projectId"`
	Product    string     `json:"product"`
	Name       string     `json:"name"`
	Role       string     `json:"role"`
	CreatedBy  *string    `json:"createdBy"`
	CreatedAt  time.Time  `json:"createdAt"`
	ExpiresAt  *time.Time `json:"expiresAt"`
	LastUsedAt *time.Time `json:"lastUsedAt"`
	// Usage24h counts its verifications of the last 24 hours by outcome (SPEC §19).
	Usage24h   usage.Totals `json:"usage24h"`
	SecretHint string       `json:"secretHint"`
}

// deref is an optional byte field's value, nil when absent.
func deref(b *[]byte) []byte {
	if b == nil {
		return nil
	}
	return *b
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

func view(b *ent.Badge) Badge {
	return Badge{
		ID: b.ID, ProjectID: b.ProjectID, Product: b.Product, Name: b.Name, Role: b.Role, CreatedBy: b.CreatedBy,
		CreatedAt: b.CreatedAt.UTC(), ExpiresAt: utc(b.ExpiresAt), LastUsedAt: utc(b.LastUsedAt), SecretHint: b.SecretHint,
	}
}

func contractView(b *ent.Badge) product.Badge {
	return product.Badge{ID: b.ID, ProjectID: b.ProjectID, Product: b.Product, Name: b.Name, Role: b.Role, ExpiresAt: b.ExpiresAt}
}

// Created is a new badge with its one-time secrets.
type Created struct {
	Badge       Badge
	Plaintext   string
	Credentials any // the product's own, or nil
}

// Create mints a badge, its product credentials and its audit record in one transaction.
func (s *Service) Create(ctx context.Context, projectID string, creator *string, req CreateRequest, origin audit.Origin) (Created, error) {
	pol, err := s.policies.Policy(ctx, projectID)
	if err != nil {
		return Created{}, err
	}
	// The project's policy (SPEC §12): a lifetime beyond it is refused, none is clamped to it.
	if max := pol.BadgeMaxExpiresInDays; max != nil {
		switch {
		case req.ExpiresInDays == nil:
			req.ExpiresInDays = max
		case *req.ExpiresInDays > *max:
			return Created{}, apperr.Validation(apperr.Issue{Field: "expiresInDays", Reason: "exceeds_policy"})
		}
	}
	plaintext, err := secret.NewToken(req.Product.Key())
	if err != nil {
		return Created{}, err
	}
	now := s.clock.Now()
	var expires *time.Time
	if req.ExpiresInDays != nil {
		e := now.Add(time.Duration(*req.ExpiresInDays) * 24 * time.Hour)
		expires = &e
	}
	var out Created
	err = database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		b, err := tx.Badge.Create().
			SetProjectID(projectID).SetProduct(req.Product.Key()).SetName(req.Name).SetRole(req.Role).
			SetNillableCreatedBy(creator).SetCreatedAt(now).SetNillableExpiresAt(expires).
			SetSecretHint(secret.Hint(plaintext)).SetDigest(secret.DigestOf(plaintext).Bytes()).
			Save(ctx)
		if err != nil {
			return err
		}
		pb := contractView(b)
		creds, err := req.Product.Mint(ctx, tx, pb)
		if err != nil {
			return mintFailed(err)
		}
		if _, err := s.audit.Record(ctx, tx, audit.Event{
			ActorID: creator, ProjectID: projectID, Action: "service_badge.create",
			Metadata: map[string]any{"badgeId": b.ID, "product": b.Product, "name": b.Name, "role": b.Role}, Origin: origin,
		}); err != nil {
			return err
		}
		out = Created{Badge: view(b), Plaintext: plaintext, Credentials: creds}
		return nil
	})
	if err != nil {
		return Created{}, err
	}
	s.metrics.Issued.WithLabelValues(Kind, req.Product.Key()).Inc()
	return out, nil
}

// List is the project's live badges, newest first, of one product when filter names a
// mintable product (anything else is ignored, SPEC §6).
func (s *Service) List(ctx context.Context, projectID, filter string) ([]Badge, error) {
	q := s.ent.Badge.Query().Where(entbadge.ProjectID(projectID), entbadge.RevokedAtIsNil())
	if p, ok := s.products.Get(filter); ok {
		if mintable, _ := p.Mintable(); mintable {
			q = q.Where(entbadge.Product(filter))
		}
	}
	bs, err := q.Order(entbadge.ByID(sql.OrderDesc())).All(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Badge, 0, len(bs))
	for _, b := range bs {
		out = append(out, view(b))
	}
	err = usage.Last24h(ctx, s.usage, s.clock.Now(), projectID, Kind, out,
		func(b *Badge) string { return b.ID }, func(b *Badge, t usage.Totals) { b.Usage24h = t })
	return out, err
}

// Revoke revokes one of the project's badges: the badge, its product credentials, the
// audit record and the invalidation of every replica's caches in one transaction.
func (s *Service) Revoke(ctx context.Context, projectID, badgeID string, actor *string, origin audit.Origin) error {
	return s.revoke(ctx, []predicate.Badge{entbadge.ID(badgeID), entbadge.ProjectID(projectID)}, actor, origin, nil, "")
}

// RevokePresented revokes the presented badge (RFC 7009 self-revocation, a leak report):
// no actor, audited as r says.
func (s *Service) RevokePresented(ctx context.Context, token string, r credential.Revocation) error {
	if !s.wellFormed(token) {
		return credential.ErrNotLive
	}
	d, now := secret.DigestOf(token).Bytes(), s.clock.Now()
	matches := schema.Presented[predicate.Badge](schema.BadgeLifecycle, d, now)
	err := s.revoke(ctx, []predicate.Badge{matches, schema.Live[predicate.Badge](now)}, nil, r.Origin, r.Metadata, r.Action)
	if errors.Is(err, ErrNotFound) {
		return credential.ErrNotLive
	}
	return err
}

// RevokeLive revokes the live badge with this id as r says — for a product's own secret
// (an auth client secret, an s3 access key) presented in a leak report or to RFC 7009:
// the whole badge goes, with every credential of its product. ErrNotLive when it is not live.
func (s *Service) RevokeLive(ctx context.Context, badgeID string, r credential.Revocation) error {
	err := s.revoke(ctx, []predicate.Badge{entbadge.ID(badgeID), schema.Live[predicate.Badge](s.clock.Now())}, nil, r.Origin, r.Metadata, r.Action)
	if errors.Is(err, ErrNotFound) {
		return credential.ErrNotLive
	}
	return err
}

func (s *Service) revoke(ctx context.Context, where []predicate.Badge, actor *string, origin audit.Origin, extra map[string]any, action string) error {
	var product string
	err := database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		b, err := tx.Badge.Query().Where(where...).Where(entbadge.RevokedAtIsNil()).Only(ctx)
		if ent.IsNotFound(err) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		n, err := tx.Badge.Update().Where(entbadge.ID(b.ID), entbadge.RevokedAtIsNil()).SetRevokedAt(s.clock.Now()).Save(ctx)
		if err != nil {
			return err
		}
		if n == 0 {
			return ErrNotFound
		}
		if p, ok := s.products.Get(b.Product); ok {
			if err := p.Revoke(ctx, tx, contractView(b)); err != nil {
				return err
			}
		}
		if err := s.verifier.Revoked(ctx, tx, b.Digest, deref(b.PreviousDigest)); err != nil {
			return err
		}
		product = b.Product
		metadata := map[string]any{"badgeId": b.ID}
		maps.Copy(metadata, extra)
		_, err = s.audit.Record(ctx, tx, audit.Event{
			ActorID: actor, ProjectID: b.ProjectID, Action: cmp.Or(action, "service_badge.revoke"), Metadata: metadata, Origin: origin,
		})
		return err
	})
	if err != nil {
		return err
	}
	s.metrics.Revoked.WithLabelValues(Kind, product).Inc()
	return nil
}

// Rolled is a badge with its new one-time secrets, and when the replaced ones stop.
type Rolled struct {
	Created
	PreviousSecretExpiresAt time.Time
}

// Roll gives one of the project's live badges a new secret, and its product new
// credentials (SPEC §12): same id and record; the replaced ones keep working until grace
// ends (never past the badge's own expiry), those of an earlier roll stop now. All of it,
// the invalidations and the audit record commit together.
func (s *Service) Roll(ctx context.Context, projectID, badgeID string, grace time.Duration, actor *string, origin audit.Origin) (Rolled, error) {
	pol, err := s.policies.Policy(ctx, projectID)
	if err != nil {
		return Rolled{}, err
	}
	now := s.clock.Now()
	var out Rolled
	err = database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		b, err := tx.Badge.Query().
			Where(entbadge.ID(badgeID), entbadge.ProjectID(projectID), schema.Live[predicate.Badge](now)).
			Only(ctx)
		if ent.IsNotFound(err) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		p, ok := s.products.Get(b.Product)
		if !ok {
			return ErrNotFound // a product no longer registered has nothing to roll into
		}
		// A badge the project's policy no longer allows gets no new secret.
		if max := pol.BadgeMaxExpiresInDays; max != nil && (b.ExpiresAt == nil || b.ExpiresAt.Sub(now) > time.Duration(*max)*24*time.Hour) {
			return apperr.Validation(apperr.Issue{Field: "expiresAt", Reason: "exceeds_policy"})
		}
		plaintext, err := secret.NewToken(b.Product)
		if err != nil {
			return err
		}
		replaced, earlier := b.Digest, deref(b.PreviousDigest)
		until, keep := rollover.Until(now, grace, b.ExpiresAt)
		u := tx.Badge.UpdateOne(b).SetDigest(secret.DigestOf(plaintext).Bytes()).SetSecretHint(secret.Hint(plaintext))
		var graceUntil *time.Time
		if keep {
			graceUntil = &until
			u = u.SetPreviousDigest(replaced).SetPreviousExpiresAt(until)
		} else {
			until = now
			u = u.ClearPreviousDigest().ClearPreviousExpiresAt()
		}
		if b, err = u.Save(ctx); err != nil {
			return err
		}
		if err := s.verifier.Revoked(ctx, tx, replaced, earlier); err != nil {
			return err
		}
		pb := contractView(b)
		creds, err := p.Roll(ctx, tx, pb, graceUntil)
		if err != nil {
			return mintFailed(err)
		}
		if _, err := s.audit.Record(ctx, tx, audit.Event{
			ActorID: actor, ProjectID: projectID, Action: "service_badge.roll", Origin: origin,
			Metadata: map[string]any{"badgeId": b.ID, "product": b.Product, "previousSecretExpiresAt": until.UTC()},
		}); err != nil {
			return err
		}
		out = Rolled{Created: Created{Badge: view(b), Plaintext: plaintext, Credentials: creds}, PreviousSecretExpiresAt: until.UTC()}
		return nil
	})
	if err != nil {
		return Rolled{}, err
	}
	s.metrics.Issued.WithLabelValues(Kind, out.Badge.Product).Inc()
	return out, nil
}

// wellFormed reports whether token is shaped like a badge secret of a registered product.
func (s *Service) wellFormed(token string) bool {
	kind := secret.KindOf(token)
	_, ok := s.products.Get(kind)
	return ok && secret.CheckToken(kind, token)
}

// Grant verifies a presented badge secret for the OAuth surface.
func (s *Service) Grant(ctx context.Context, token string) (liveBadge, error) {
	if !s.wellFormed(token) {
		return liveBadge{}, credential.ErrNotLive
	}
	e, err := s.verifier.Verify(ctx, token) // bearer.ErrInvalid is credential.ErrNotLive
	if err != nil {
		return liveBadge{}, err
	}
	// A replaced secret in its grace ends at the grace's end (SPEC §9a).
	g := e.Value.grant
	if e.ExpiresAt != nil && (g.ExpiresAt == nil || e.ExpiresAt.Before(*g.ExpiresAt)) {
		exp := *e.ExpiresAt
		g.ExpiresAt = &exp
	}
	return g, nil
}

// Me checks any badge secret and returns its pre-encoded service-badges/me answer, or
// bearer.ErrInvalid. Its prefix must name a registered product and its checksum must hold
// before the caches or the store are asked.
func (s *Service) Me(ctx context.Context, token string) ([]byte, error) {
	if !s.wellFormed(token) {
		return nil, bearer.ErrInvalid
	}
	e, err := s.verifier.Verify(ctx, token)
	if err != nil {
		return nil, err
	}
	return e.Value.response, nil
}

// introspect is RFC 7662's answer for a live badge secret of project (nil otherwise).
func (s *Service) introspect(ctx context.Context, token, project string) (map[string]any, error) {
	g, err := s.Grant(ctx, token)
	if errors.Is(err, credential.ErrNotLive) || (err == nil && g.ProjectID != project) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	m := map[string]any{"sub": g.BadgeID, "badge_id": g.BadgeID, "product": g.Product,
		"role": g.Role, "scope": g.Role, "token_type": "Bearer"}
	if g.ExpiresAt != nil {
		m["exp"] = g.ExpiresAt.Unix()
	}
	return m, nil
}
