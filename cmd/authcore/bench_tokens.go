package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	mrand "math/rand/v2"
	"net/http"
	"time"

	"github.com/authcore/authcore/ent"
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

// grow adds rows until the set holds total tokens, written straight to the store in bulk
// (the API would take hours for a million). Every 50th row keeps its plaintext for the
// sample; the rest only need to exist, so their digests are random bytes.
func (ts *tokenSet) grow(ctx context.Context, client *ent.Client, total int) error {
	const batch = 2000
	now := time.Now().UTC()
	for ts.stored < total {
		n := min(batch, total-ts.stored)
		builders := make([]*ent.AgentTokenCreate, 0, n)
		for i := 0; i < n; i++ {
			var digest []byte
			hint := "ac_ai_…"
			if (ts.stored+i)%50 == 0 {
				pt, err := secret.NewToken("ai")
				if err != nil {
					return err
				}
				ts.sample = append(ts.sample, pt)
				digest = secret.DigestOf(pt).Bytes()
				hint = secret.Hint(pt)
			} else {
				digest = make([]byte, 32)
				if _, err := rand.Read(digest); err != nil {
					return err
				}
			}
			builders = append(builders, client.AgentToken.Create().
				SetProjectID(ts.project).SetAgentName("bench").SetScopes([]string{}).
				SetCreatedAt(now).SetExpiresAt(now.Add(720*time.Hour)).
				SetTokenHint(hint).SetDigest(digest))
		}
		if err := client.AgentToken.CreateBulk(builders...).Exec(ctx); err != nil {
			return fmt.Errorf("seeding tokens: %w", err)
		}
		ts.stored += n
	}
	return nil
}

// randomToken sends each request with a token drawn at random from the sample.
func (ts *tokenSet) randomToken() func(worker, i int) (string, map[string]string) {
	return func(worker, i int) (string, map[string]string) {
		return "/v1/auth-core/ai/me", map[string]string{"Authorization": "Bearer " + ts.sample[mrand.IntN(len(ts.sample))]}
	}
}
