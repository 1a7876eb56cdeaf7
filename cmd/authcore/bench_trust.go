package main

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// The scenarios of the OpenID Provider and of enterprise trust (SPEC §21, §22): what each
// signed request costs the server. Every JWT a request carries — a DPoP proof, a client
// assertion, a workload's token — is single use, so the bench signs one per request
// before the run (ES256, as a client library would), and the generator only sends them.

// benchKey is a key signing the bench's JWTs.
type benchKey struct {
	signer jose.Signer
	public jose.JSONWebKey
	jkt    string
}

func newBenchKey(alg jose.SignatureAlgorithm, kid string, opts *jose.SignerOptions) (*benchKey, error) {
	var priv crypto.Signer
	var err error
	switch alg {
	case jose.EdDSA:
		_, priv, err = ed25519.GenerateKey(rand.Reader)
	case jose.RS256:
		priv, err = rsa.GenerateKey(rand.Reader, 2048)
	default:
		priv, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	}
	if err != nil {
		return nil, err
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: priv}, opts.WithHeader("kid", kid))
	if err != nil {
		return nil, err
	}
	pub := jose.JSONWebKey{Key: priv.Public(), KeyID: kid, Algorithm: string(alg), Use: "sig"}
	tp, err := pub.Thumbprint(crypto.SHA256)
	if err != nil {
		return nil, err
	}
	return &benchKey{signer: s, public: pub, jkt: base64.RawURLEncoding.EncodeToString(tp)}, nil
}

// signedEach signs n JWTs, claims(i) each, and hands each out once, in order.
func signedEach(k *benchKey, n int, claims func(i int) map[string]any) (func() string, error) {
	out := make([]string, n)
	for i := range out {
		s, err := jwt.Signed(k.signer).Claims(claims(i)).Serialize()
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	var next atomic.Int64
	return func() string { return out[int(next.Add(1)-1)%n] }, nil
}

// benchIssuer is the server's issuer, as its metadata says.
func benchIssuer(env *benchEnv) (string, error) {
	var meta struct{ Issuer string }
	err := benchCall(env, http.MethodGet, "/.well-known/oauth-authorization-server", "", nil, http.StatusOK, &meta)
	return meta.Issuer, err
}

// jwtSeeds is how many single-use JWTs a scenario signs: more than a warm-up and a run
// spend at 40,000/s (the cheapest of them, a DPoP proof on a warm ai/me, runs at ~26,000/s
// on the 2-core build machine).
func jwtSeeds(env *benchEnv) int {
	return 2_000 + int(40_000*env.spend.Seconds())
}

func benchJTI(i int) string { return fmt.Sprintf("bench-%d-%d", time.Now().UnixNano(), i) }

func trustScenarios() []scenario {
	return []scenario{
		// RS256 proofs verify fastest but sign at a millisecond each: signing a run's worth
		// beforehand would take minutes. BenchmarkVerify in platform/dpop has their cost.
		dpopScenario(jose.ES256),
		dpopScenario(jose.EdDSA),
		{name: "POST /v1/oauth/token (jwt-bearer, a workload's token)", setup: func(ctx context.Context, env *benchEnv) (request, error) {
			admin, prj, err := benchProject(env)
			if err != nil {
				return request{}, err
			}
			resource := "https://mcp.example.com/" + strings.ToLower(prj)
			if err := benchCall(env, http.MethodPost, "/v1/projects/"+prj+"/oauth/resources", admin.AccessToken,
				[]byte(`{"uri":"`+resource+`","name":"bench"}`), http.StatusCreated, nil); err != nil {
				return request{}, err
			}
			key, err := newBenchKey(jose.ES256, "k8s", (&jose.SignerOptions{}).WithType("JWT"))
			if err != nil {
				return request{}, err
			}
			const platform = "https://k8s.bench.example"
			body, _ := json.Marshal(map[string]any{"issuer": platform, "kind": "workload", "audience": "authcore", "subjectPattern": "system:serviceaccount:bench:*", "scopes": []string{"mcp:tools"},
				"jwks": jose.JSONWebKeySet{Keys: []jose.JSONWebKey{key.public}}})
			if err := benchCall(env, http.MethodPost, "/v1/projects/"+prj+"/trust/issuers", admin.AccessToken, body, http.StatusCreated, nil); err != nil {
				return request{}, err
			}
			now := time.Now()
			assertion, err := signedEach(key, grantSeeds(env), func(i int) map[string]any {
				return map[string]any{"iss": platform, "sub": "system:serviceaccount:bench:runner", "aud": "authcore", "jti": benchJTI(i),
					"iat": now.Unix(), "exp": now.Add(9 * time.Minute).Unix()}
			})
			if err != nil {
				return request{}, err
			}
			return request{Method: http.MethodPost, Path: "/v1/oauth/token", Header: formHeader, Expect: 200, NextBody: func(int, int) []byte {
				return []byte(url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:jwt-bearer"}, "assertion": {assertion()}, "resource": {resource}}.Encode())
			}}, nil
		}},
		{name: "POST /v1/oauth/token (client credentials, private_key_jwt)", setup: func(ctx context.Context, env *benchEnv) (request, error) {
			admin, prj, err := benchProject(env)
			if err != nil {
				return request{}, err
			}
			var out struct {
				Badge struct{ ID string }
				Auth  struct{ ClientID string }
			}
			if err := benchCall(env, http.MethodPost, "/v1/projects/"+prj+"/service-badges", admin.AccessToken,
				[]byte(`{"name":"bench","product":"auth","role":"developer"}`), http.StatusCreated, &out); err != nil {
				return request{}, err
			}
			key, err := newBenchKey(jose.ES256, "m2m", (&jose.SignerOptions{}).WithType("JWT"))
			if err != nil {
				return request{}, err
			}
			jwk, _ := json.Marshal(map[string]any{"jwk": key.public})
			if err := benchCall(env, http.MethodPost, "/v1/projects/"+prj+"/service-badges/"+out.Badge.ID+"/keys", admin.AccessToken, jwk, http.StatusCreated, nil); err != nil {
				return request{}, err
			}
			iss, err := benchIssuer(env)
			if err != nil {
				return request{}, err
			}
			now, id := time.Now(), out.Auth.ClientID
			assertion, err := signedEach(key, grantSeeds(env), func(i int) map[string]any {
				return map[string]any{"iss": id, "sub": id, "aud": iss + "/v1/oauth/token", "jti": benchJTI(i), "iat": now.Unix(), "exp": now.Add(4 * time.Minute).Unix()}
			})
			if err != nil {
				return request{}, err
			}
			return request{Method: http.MethodPost, Path: "/v1/oauth/token", Header: formHeader, Expect: 200, NextBody: func(int, int) []byte {
				return []byte(url.Values{"grant_type": {"client_credentials"}, "client_assertion": {assertion()},
					"client_assertion_type": {"urn:ietf:params:oauth:client-assertion-type:jwt-bearer"}}.Encode())
			}}, nil
		}},
		codeScenario("POST /v1/oauth/token (authorization code with openid: an id_token)", "openid", "profile", "email"),
	}
}

// dpopScenario is ai/me of a token bound to a key of alg, each request with a fresh proof.
func dpopScenario(alg jose.SignatureAlgorithm) scenario {
	return scenario{name: "GET /v1/auth-core/ai/me (DPoP-bound, " + string(alg) + " proofs, warm cache)", setup: func(ctx context.Context, env *benchEnv) (request, error) {
		admin, prj, err := benchProject(env)
		if err != nil {
			return request{}, err
		}
		key, err := newBenchKey(alg, "dpop", (&jose.SignerOptions{EmbedJWK: true}).WithType("dpop+jwt"))
		if err != nil {
			return request{}, err
		}
		var out struct{ Plaintext string }
		if err := benchCall(env, http.MethodPost, "/v1/auth-core/projects/"+prj+"/ai/agents", admin.AccessToken,
			[]byte(`{"dpopJkt":"`+key.jkt+`"}`), http.StatusOK, &out); err != nil {
			return request{}, err
		}
		nonce, err := dpopNonce(env)
		if err != nil {
			return request{}, err
		}
		iss, err := benchIssuer(env)
		if err != nil {
			return request{}, err
		}
		sum := sha256.Sum256([]byte(out.Plaintext))
		ath, now := base64.RawURLEncoding.EncodeToString(sum[:]), time.Now().Unix()
		proof, err := signedEach(key, jwtSeeds(env), func(i int) map[string]any {
			return map[string]any{"jti": benchJTI(i), "htm": "GET", "htu": iss + "/v1/auth-core/ai/me", "iat": now, "ath": ath, "nonce": nonce}
		})
		if err != nil {
			return request{}, err
		}
		auth := "Bearer " + out.Plaintext
		return request{Method: http.MethodGet, Expect: 200, Next: func(int, int) (string, map[string]string) {
			return "/v1/auth-core/ai/me", map[string]string{"Authorization": auth, "DPoP": proof()}
		}}, nil
	}}
}

// dpopNonce is the DPoP nonce the server hands out now.
func dpopNonce(env *benchEnv) (string, error) {
	res, err := http.Post("http://"+env.addr+"/v1/oauth/token", "application/x-www-form-urlencoded", nil)
	if err != nil {
		return "", err
	}
	res.Body.Close()
	if n := res.Header.Get("DPoP-Nonce"); n != "" {
		return n, nil
	}
	return "", fmt.Errorf("the token endpoint named no DPoP nonce")
}
