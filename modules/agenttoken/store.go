package agenttoken

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/agenttoken"
	"github.com/authcore/authcore/ent/schema"
	"github.com/authcore/authcore/platform/bearer"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/secret"
)

// store is the bearer.Store of agent tokens. On PostgreSQL the cold lookup goes through
// pgx directly.
type store struct{}

var _ bearer.Store[answer] = store{}

// answer is what a verified token answers on ai/me, encoded once when it is cached.
type answer struct {
	info     Verified
	response []byte
}

func (s store) Lookup(ctx context.Context, h database.Handle, d secret.Digest) (*bearer.Entry[answer], error) {
	if h.Pool != nil {
		return s.lookupPG(ctx, h.Pool, d)
	}
	t, err := h.Ent.AgentToken.Query().Where(agenttoken.Or(agenttoken.Digest(d.Bytes()), agenttoken.PreviousDigest(d.Bytes()))).Only(ctx)
	if err != nil {
		return nil, err
	}
	info := Verified{TokenID: t.ID, Grant: grantOf(t), ExpiresAt: t.ExpiresAt.UTC()}
	return buildEntry(info, d, t.Digest, bytesOf(t.PreviousDigest), t.PreviousExpiresAt, t.RevokedAt != nil), nil
}

func bytesOf(b *[]byte) []byte {
	if b == nil {
		return nil
	}
	return *b
}

func (store) SetLastUsed(ctx context.Context, tx *ent.Tx, id string, at time.Time) error {
	// Update, not UpdateOneID: that one reads the row back after writing it, which was a
	// third of a large last-used flush.
	return tx.AgentToken.Update().Where(agenttoken.ID(id)).SetLastUsedAt(at).Exec(ctx)
}

// lookupPG is Lookup through pgx directly: on the cold path the database/sql and ent layers
// cost about as much client CPU as the query itself. Same row, same rules.
func (store) lookupPG(ctx context.Context, pool *pgxpool.Pool, d secret.Digest) (*bearer.Entry[answer], error) {
	var (
		info      Verified
		scopes    []byte
		revokedAt *time.Time
		digest    []byte
		previous  []byte
		until     *time.Time
	)
	err := pool.QueryRow(ctx, `SELECT id, project_id, agent_name, scopes, created_by, expires_at, revoked_at, digest,
		previous_digest, previous_expires_at FROM agent_tokens WHERE digest = $1 OR previous_digest = $1`, d.Bytes()).
		Scan(&info.TokenID, &info.ProjectID, &info.AgentName, &scopes, &info.CreatedBy, &info.ExpiresAt, &revokedAt, &digest,
			&previous, &until)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, bearer.ErrUnknown
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(scopes, &info.Scopes); err != nil {
		return nil, err
	}
	info.ExpiresAt = info.ExpiresAt.UTC()
	return buildEntry(info, d, digest, previous, until, revokedAt != nil), nil
}

// buildEntry encodes the ai/me answer once, so the hot path only copies bytes. The entry
// is the key d matched, and lives until that key stops working.
func buildEntry(info Verified, d secret.Digest, current, previous []byte, graceEnd *time.Time, revoked bool) *bearer.Entry[answer] {
	if info.Scopes == nil {
		info.Scopes = []string{}
	}
	// Marshal cannot fail on these field types.
	body, _ := json.Marshal(meBody{Engine: engineName, Authenticated: true, Kind: "ai_agent", Verified: info})
	key, until := schema.Matched(d.Bytes(), current, previous, &info.ExpiresAt, graceEnd)
	return &bearer.Entry[answer]{ID: info.TokenID, ProjectID: info.ProjectID, Digest: key, ExpiresAt: until, Revoked: revoked, Value: answer{info: info, response: body}}
}

// meBody is the ai/me answer: the verification fields merged into it (seed 4.2).
type meBody struct {
	Engine        string `json:"engine"`
	Authenticated bool   `json:"authenticated"`
	Kind          string `json:"kind"`
	Verified
}
