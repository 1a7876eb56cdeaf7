package main

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"sync/atomic"
	"time"

	"golang.org/x/oauth2"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/platform/secret"
)

// grantSeeds is how many single-use codes or refresh tokens a grant scenario seeds: more
// than a warm-up and a run spend at 12,000/s, so none is presented twice.
func grantSeeds(env *benchEnv) int {
	return 2_000 + int(12_000*env.spend.Seconds())
}

// benchRedirect is the bench client's one redirect URI.
const benchRedirect = "http://127.0.0.1/callback"

// seedGrant registers a public client through the API and writes a person's grant to it
// with scopes straight to the store: the scenarios measure the token endpoint, not the
// consent screen before it.
func seedGrant(ctx context.Context, env *benchEnv, scopes ...string) (*ent.OAuthGrant, error) {
	admin, prj, err := benchProject(env)
	if err != nil {
		return nil, err
	}
	var client struct {
		ClientID string `json:"client_id"`
	}
	body := []byte(`{"client_name":"bench","redirect_uris":["` + benchRedirect + `"]}`)
	if err := benchCall(env, http.MethodPost, "/v1/oauth/register", "", body, http.StatusCreated, &client); err != nil {
		return nil, err
	}
	if len(scopes) == 0 {
		scopes = []string{"tools:call"}
	}
	return env.ent.OAuthGrant.Create().SetClientID(client.ClientID).SetClientName("bench").SetClientHost("127.0.0.1").
		SetUserID(admin.UserID).SetProjectID(prj).SetScopes(scopes).SetResources([]string{}).
		SetUpdatedAt(time.Now()).Save(ctx)
}

// singleUse seeds n secrets with create and hands each out once, in order, as a token
// request body made by form.
func singleUse(ctx context.Context, n int, kind string, create func(digest []byte) error, form func(secret string) url.Values) (func(int, int) []byte, error) {
	bodies := make([][]byte, n)
	for i := range bodies {
		s, err := secret.NewToken(kind)
		if err != nil {
			return nil, err
		}
		if err := create(secret.DigestOf(s).Bytes()); err != nil {
			return nil, err
		}
		bodies[i] = []byte(form(s).Encode())
	}
	var next atomic.Int64
	return func(int, int) []byte { return bodies[int(next.Add(1)-1)%n] }, nil
}

var formHeader = map[string]string{"Content-Type": "application/x-www-form-urlencoded"}

// codeScenario redeems seeded authorization codes of a grant holding scopes; with openid
// the codes carry what an id_token is made of (nonce, auth_time, amr), and each answer
// holds one.
func codeScenario(name string, scopes ...string) scenario {
	return scenario{name: name, setup: func(ctx context.Context, env *benchEnv) (request, error) {
		g, err := seedGrant(ctx, env, scopes...)
		if err != nil {
			return request{}, err
		}
		next, err := seedCodes(ctx, env, g, benchRedirect, true)
		if err != nil {
			return request{}, err
		}
		return request{Method: http.MethodPost, Path: "/v1/oauth/token", Header: formHeader, NextBody: next, Expect: 200}, nil
	}}
}

// seedCodes writes single-use authorization codes of grant g for redirect and hands each
// out once as a token request body; with openid the codes carry what an id_token is made
// of (nonce, auth_time, amr). A public client names itself in the body; a confidential
// one authenticates in a header the scenario sets.
func seedCodes(ctx context.Context, env *benchEnv, g *ent.OAuthGrant, redirect string, public bool) (func(int, int) []byte, error) {
	verifier := oauth2.GenerateVerifier()
	challenge := oauth2.S256ChallengeFromVerifier(verifier)
	codes := make([]*ent.OAuthCodeCreate, 0, 2000)
	flush := func() error {
		err := env.ent.OAuthCode.CreateBulk(codes...).Exec(ctx)
		codes = codes[:0]
		return err
	}
	now := time.Now()
	next, err := singleUse(ctx, grantSeeds(env), "oc", func(digest []byte) error {
		c := env.ent.OAuthCode.Create().SetDigest(digest).SetGrantID(g.ID).SetClientID(g.ClientID).SetRedirectURI(redirect).
			SetCodeChallenge(challenge).SetScopes(g.Scopes).SetResources([]string{}).SetExpiresAt(now.Add(10 * time.Minute))
		if slices.Contains(g.Scopes, "openid") {
			c.SetNonce("bench-nonce").SetAuthTime(now).SetAmr([]string{"pwd"})
		}
		if codes = append(codes, c); len(codes) == cap(codes) {
			return flush()
		}
		return nil
	}, func(code string) url.Values {
		form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirect}, "code_verifier": {verifier}}
		if public {
			form.Set("client_id", g.ClientID)
		}
		return form
	})
	if err != nil {
		return nil, err
	}
	return next, flush()
}

func grantScenarios() []scenario {
	return []scenario{
		codeScenario("POST /v1/oauth/token (authorization code, PKCE)"),
		{name: "POST /v1/oauth/token (refresh, rotating)", durable: true, setup: func(ctx context.Context, env *benchEnv) (request, error) {
			g, err := seedGrant(ctx, env)
			if err != nil {
				return request{}, err
			}
			rows := make([]*ent.GrantRefreshTokenCreate, 0, 2000)
			flush := func() error {
				err := env.ent.GrantRefreshToken.CreateBulk(rows...).Exec(ctx)
				rows = rows[:0]
				return err
			}
			now := time.Now()
			next, err := singleUse(ctx, grantSeeds(env), "gr", func(digest []byte) error {
				rows = append(rows, env.ent.GrantRefreshToken.Create().SetDigest(digest).SetGrantID(g.ID).SetClientID(g.ClientID).
					SetScopes(g.Scopes).SetResources([]string{}).SetExpiresAt(now.Add(30*24*time.Hour)).SetFamilyExpiresAt(now.Add(90*24*time.Hour)))
				if len(rows) == cap(rows) {
					return flush()
				}
				return nil
			}, func(rt string) url.Values {
				return url.Values{"grant_type": {"refresh_token"}, "client_id": {g.ClientID}, "refresh_token": {rt}}
			})
			if err != nil {
				return request{}, err
			}
			if err := flush(); err != nil {
				return request{}, err
			}
			return request{Method: http.MethodPost, Path: "/v1/oauth/token", Header: formHeader, NextBody: next, Expect: 200}, nil
		}},
	}
}
