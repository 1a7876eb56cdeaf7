package agenttoken

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/agenttoken"
	"github.com/authcore/authcore/platform/secret"
)

// Verify checks a bearer token. ok is false for anything that is not a live token; err
// is only for a store that failed. The checksum is checked before anything else, so
// malformed and guessed tokens never reach the store; known and unknown digests are both
// cached; expiry is checked on every call against the clock, to the second.
func (s *Service) Verify(ctx context.Context, token string) (e *entry, ok bool, err error) {
	if !secret.CheckToken(Kind, token) {
		return nil, false, nil
	}
	d := secret.DigestOf(token)
	if _, unknown := s.negative.Get(d); unknown {
		return nil, false, nil
	}
	e, err = s.cache.Load(ctx, d, func(ctx context.Context) (*entry, error) { return s.lookup(ctx, d) })
	if errors.Is(err, errUnknown) {
		s.negative.Put(d, struct{}{})
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	now := s.clock.Now()
	if e.revoked || !now.Before(e.expires) {
		return nil, false, nil
	}
	s.lastUsed.Touch(e.info.TokenID, now)
	return e, true, nil
}

// errUnknown is a lookup that found no token; it is cached in the negative cache only.
var errUnknown = errors.New("unknown token")

func (s *Service) lookup(ctx context.Context, d secret.Digest) (*entry, error) {
	if s.pool != nil {
		return s.lookupPG(ctx, d)
	}
	t, err := s.ent.AgentToken.Query().Where(agenttoken.Digest(d.Bytes())).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, errUnknown
	}
	if err != nil {
		return nil, err
	}
	// Compared again in constant time: the index lookup found it by equality, this keeps
	// the guarantee independent of how the store compares.
	if !secret.Equal(t.Digest, d.Bytes()) {
		return nil, errUnknown
	}
	info := Verified{TokenID: t.ID, ProjectID: t.ProjectID, AgentName: t.AgentName, Scopes: t.Scopes, CreatedBy: t.CreatedBy, ExpiresAt: t.ExpiresAt.UTC()}
	return buildEntry(info, t.RevokedAt != nil), nil
}

// buildEntry encodes the ai/me answer once, so the hot path only copies bytes.
func buildEntry(info Verified, revoked bool) *entry {
	if info.Scopes == nil {
		info.Scopes = []string{}
	}
	// Marshal cannot fail on these field types.
	body, _ := json.Marshal(meBody{Engine: engineName, Authenticated: true, Kind: "ai_agent", Verified: info})
	return &entry{info: info, revoked: revoked, expires: info.ExpiresAt, response: body}
}

// meBody is the ai/me answer: the verification fields merged into it (seed 4.2).
type meBody struct {
	Engine        string `json:"engine"`
	Authenticated bool   `json:"authenticated"`
	Kind          string `json:"kind"`
	Verified
}

// invalidate drops a digest (hex) from both caches; "" drops everything.
func (s *Service) invalidate(key string) {
	if key == "" {
		s.cache.Purge()
		s.negative.Purge()
		return
	}
	b, err := hex.DecodeString(key)
	if err != nil || len(b) != len(secret.Digest{}) {
		return
	}
	var d secret.Digest
	copy(d[:], b)
	s.cache.Invalidate(d)
	s.negative.Invalidate(d)
}

// writeLastUsed stores a batch of last-used times in one transaction.
func (s *Service) writeLastUsed(ctx context.Context, batch map[string]time.Time) error {
	tx, err := s.ent.Tx(ctx)
	if err != nil {
		return err
	}
	for id, t := range batch {
		if err := tx.AgentToken.UpdateOneID(id).SetLastUsedAt(t).Exec(ctx); err != nil && !ent.IsNotFound(err) {
			_ = tx.Rollback()
			return err
		}
	}
	return tx.Commit()
}

// lookupPG is lookup through pgx directly: on the cold path the database/sql and ent layers
// cost about as much client CPU as the query itself. Same row, same rules as lookup.
func (s *Service) lookupPG(ctx context.Context, d secret.Digest) (*entry, error) {
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
		return nil, errUnknown
	}
	if err != nil {
		return nil, err
	}
	if !secret.Equal(digest, d.Bytes()) {
		return nil, errUnknown
	}
	if err := json.Unmarshal(scopes, &info.Scopes); err != nil {
		return nil, err
	}
	info.ExpiresAt = info.ExpiresAt.UTC()
	return buildEntry(info, revokedAt != nil), nil
}
