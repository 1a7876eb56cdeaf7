package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net/http"
	"time"

	"github.com/authcore/authcore/modules/agenttoken"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/lifecycle"
	"github.com/authcore/authcore/platform/secret"
)

// tokenSet is a project with agent tokens, and the plaintexts of a sample of them.
type tokenSet struct {
	project string
	admin   benchSession
	sample  []string
	stored  int
}

// benchProject signs up an admin and creates a project through the API.
func benchProject(env *benchEnv) (benchSession, string, error) {
	s, err := benchSignUp(env)
	if err != nil {
		return benchSession{}, "", err
	}
	var p struct{ ID string }
	body, _ := json.Marshal(map[string]string{"name": "bench"})
	if err := benchCall(env, http.MethodPost, "/v1/projects", s.AccessToken, body, http.StatusCreated, &p); err != nil {
		return benchSession{}, "", err
	}
	return s, p.ID, nil
}

// mintOne mints a token through the API.
func mintOne(env *benchEnv, admin benchSession, project string) (string, error) {
	var out struct{ Plaintext string }
	err := benchCall(env, http.MethodPost, "/v1/auth-core/projects/"+project+"/ai/agents", admin.AccessToken, []byte(`{}`), http.StatusOK, &out)
	return out.Plaintext, err
}

// grow adds rows until the set holds total tokens, written straight to the agent tokens'
// table in bulk (the API would take hours for a million). Every 50th row keeps its
// plaintext for the sample; the rest only need to exist, so their digests are random.
func (ts *tokenSet) grow(ctx context.Context, db *database.DB, total int) error {
	now := time.Now().UTC()
	expires := now.Add(720 * time.Hour)
	first := ts.stored
	var failed error
	err := agenttoken.Table.Seed(ctx, db, total-first, func(i int) lifecycle.Seeded {
		row := lifecycle.Seeded{ProjectID: ts.project, CreatedAt: now, ExpiresAt: &expires, Hint: "ac_ai_…",
			Digest: make([]byte, 32), Own: map[string]any{"agent_name": "bench", "scopes": []string{}}}
		if (first+i)%50 == 0 {
			pt, err := secret.NewToken("ai")
			if err != nil {
				failed = err
				return row
			}
			ts.sample = append(ts.sample, pt)
			row.Digest, row.Hint = secret.DigestOf(pt).Bytes(), secret.Hint(pt)
		} else if _, err := rand.Read(row.Digest); err != nil {
			failed = err
		}
		return row
	})
	if err = errors.Join(err, failed); err != nil {
		return fmt.Errorf("seeding tokens: %w", err)
	}
	ts.stored = total
	return nil
}

// randomToken sends each request with a token drawn at random from the sample.
func (ts *tokenSet) randomToken() func(worker, i int) (string, map[string]string) {
	return func(worker, i int) (string, map[string]string) {
		return "/v1/auth-core/ai/me", map[string]string{"Authorization": "Bearer " + ts.sample[mrand.IntN(len(ts.sample))]}
	}
}
