package badge

import (
	"context"
	"encoding/json"
	"time"

	"github.com/authcore/authcore/ent"
	entbadge "github.com/authcore/authcore/ent/badge"
	"github.com/authcore/authcore/ent/schema"
	"github.com/authcore/authcore/platform/bearer"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/secret"
)

// store is the bearer.Store of badges.
type store struct{}

var _ bearer.Store[answer] = store{}

// liveBadge is a live badge, as introspection sees it.
type liveBadge struct {
	BadgeID, ProjectID, Product, Role string
	ExpiresAt                         *time.Time
}

// answer is a cached badge: its pre-encoded service-badges/me answer and its grant.
type answer struct {
	response []byte
	grant    liveBadge
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
}

func (store) Lookup(ctx context.Context, h database.Handle, d secret.Digest) (*bearer.Entry[answer], error) {
	b, err := h.Ent.Badge.Query().Where(entbadge.Or(entbadge.Digest(d.Bytes()), entbadge.PreviousDigest(d.Bytes()))).Only(ctx)
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(meBody{Authenticated: true, Kind: Kind, BadgeID: b.ID, ProjectID: b.ProjectID, Product: b.Product, Role: b.Role, ExpiresAt: utc(b.ExpiresAt)})
	if err != nil {
		return nil, err
	}
	grant := liveBadge{BadgeID: b.ID, ProjectID: b.ProjectID, Product: b.Product, Role: b.Role, ExpiresAt: utc(b.ExpiresAt)}
	var previous []byte
	if b.PreviousDigest != nil {
		previous = *b.PreviousDigest
	}
	digest, expires := schema.Matched(d.Bytes(), b.Digest, previous, b.ExpiresAt, b.PreviousExpiresAt)
	return &bearer.Entry[answer]{ID: b.ID, ProjectID: b.ProjectID, Digest: digest, ExpiresAt: expires, Revoked: b.RevokedAt != nil, Value: answer{response: body, grant: grant}}, nil
}

func (store) SetLastUsed(ctx context.Context, tx *ent.Tx, id string, at time.Time) error {
	// Update, not UpdateOneID: that one reads the row back after writing it, which was a
	// third of a large last-used flush.
	return tx.Badge.Update().Where(entbadge.ID(id)).SetLastUsedAt(at).Exec(ctx)
}
