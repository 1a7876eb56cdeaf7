package agenttoken

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/agenttoken"
	"github.com/authcore/authcore/platform/bearer"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/secret"
)

// Verify checks a bearer token and returns its ai/me answer. ok is false for anything
// that is not a live token; err is only for a store that failed. The checksum is checked
// first, so malformed and guessed tokens never reach the store or the caches.
func (s *Service) Verify(ctx context.Context, token string) ([]byte, bool, error) {
	if !secret.CheckToken(Kind, token) {
		return nil, false, nil
	}
	e, ok, err := s.verifier.Verify(ctx, token)
	if !ok || err != nil {
		return nil, false, err
	}
	return e.Value.response, true, nil
}

func (s *Service) lookup(ctx context.Context, d secret.Digest) (*bearer.Entry[answer], error) {
	if s.pool != nil {
		return s.lookupPG(ctx, d)
	}
	t, err := s.ent.AgentToken.Query().Where(agenttoken.Digest(d.Bytes())).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, bearer.ErrUnknown
	}
	if err != nil {
		return nil, err
	}
	// Compared again in constant time: the index lookup found it by equality, this keeps
	// the guarantee independent of how the store compares.
	if !secret.Equal(t.Digest, d.Bytes()) {
		return nil, bearer.ErrUnknown
	}
	info := Verified{TokenID: t.ID, ProjectID: t.ProjectID, AgentName: t.AgentName, Scopes: t.Scopes, CreatedBy: t.CreatedBy, ExpiresAt: t.ExpiresAt.UTC()}
	return buildEntry(info, t.RevokedAt != nil), nil
}

// buildEntry encodes the ai/me answer once, so the hot path only copies bytes.
func buildEntry(info Verified, revoked bool) *bearer.Entry[answer] {
	if info.Scopes == nil {
		info.Scopes = []string{}
	}
	// Marshal cannot fail on these field types.
	body, _ := json.Marshal(meBody{Engine: engineName, Authenticated: true, Kind: "ai_agent", Verified: info})
	exp := info.ExpiresAt
	return &bearer.Entry[answer]{ID: info.TokenID, ExpiresAt: &exp, Revoked: revoked, Value: answer{info: info, response: body}}
}

// meBody is the ai/me answer: the verification fields merged into it (seed 4.2).
type meBody struct {
	Engine        string `json:"engine"`
	Authenticated bool   `json:"authenticated"`
	Kind          string `json:"kind"`
	Verified
}

// writeLastUsed stores a batch of last-used times in one transaction.
func (s *Service) writeLastUsed(ctx context.Context, batch map[string]time.Time) error {
	return database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		for id, t := range batch {
			if err := tx.AgentToken.UpdateOneID(id).SetLastUsedAt(t).Exec(ctx); err != nil && !ent.IsNotFound(err) {
				return err
			}
		}
		return nil
	})
}

// lookupPG is lookup through pgx directly: on the cold path the database/sql and ent layers
// cost about as much client CPU as the query itself. Same row, same rules as lookup.
func (s *Service) lookupPG(ctx context.Context, d secret.Digest) (*bearer.Entry[answer], error) {
	var (
		info      Verified
		scopes    []byte
		revokedAt *time.Time
		digest    []byte
	)
	err := s.pool.QueryRow(ctx, `SELECT id, project_id, agent_name, scopes, created_by, expires_at, revoked_at, digest
		FROM agent_tokens WHERE digest = $1`, d.Bytes()).
		Scan(&info.TokenID, &info.ProjectID, &info.AgentName, &scopes, &info.CreatedBy, &info.ExpiresAt, &revokedAt, &digest)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, bearer.ErrUnknown
	}
	if err != nil {
		return nil, err
	}
	if !secret.Equal(digest, d.Bytes()) {
		return nil, bearer.ErrUnknown
	}
	if err := json.Unmarshal(scopes, &info.Scopes); err != nil {
		return nil, err
	}
	info.ExpiresAt = info.ExpiresAt.UTC()
	return buildEntry(info, revokedAt != nil), nil
}
