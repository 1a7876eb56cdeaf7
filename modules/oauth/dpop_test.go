package oauth_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/authcore/authcore/internal/apptest"
)

const meURL = "/v1/auth-core/ai/me"

// dpopPost posts form to the token endpoint with a proof by key (none when key is nil)
// carrying nonce; header adds to the request.
func dpopPost(t *testing.T, a *apptest.App, key *apptest.DPoPKey, nonce string, form url.Values, header map[string]string) *apptest.Response {
	t.Helper()
	h := map[string]string{}
	for k, v := range header {
		h[k] = v
	}
	if key != nil {
		h["DPoP"] = key.Proof(t, http.MethodPost, a.Config.PublicURL+"/v1/oauth/token", "", nonce, a.Clock.Now())
	}
	return a.PostForm("/v1/oauth/token", form, h)
}

// nonceOf is the DPoP-Nonce a answers with.
func nonceOf(t *testing.T, a *apptest.App) string {
	t.Helper()
	r := a.PostForm("/v1/oauth/token", url.Values{}, nil)
	n := r.Header.Get("DPoP-Nonce")
	if n == "" {
		t.Fatalf("no DPoP-Nonce on the token endpoint's answer (%d)", r.Status)
	}
	return n
}

// DPoP at the token endpoint (RFC 9449 §5, SPEC §22): a proof binds the token to its key;
// every rule of a proof refuses with its own answer.
func TestDPoPAtTheTokenEndpoint(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a, admin, prj := setup(t, st)
		cl := mint(t, a, admin, prj, nil)
		cc := url.Values{"grant_type": {"client_credentials"}}
		key := apptest.NewDPoPKey(t)

		// Without a proof, a bearer token as before, and the nonce to use.
		first := dpopPost(t, a, nil, "", cc, basicFor(cl))
		first.Expect(t, 200, map[string]any{"token_type": "Bearer"})
		if first.Header.Get("DPoP-Nonce") == "" {
			t.Fatal("no DPoP-Nonce")
		}
		if _, bound := claimsOf(t, first.JSON(t)["access_token"].(string))["cnf"]; bound {
			t.Fatal("a token without a proof is bound")
		}

		// A proof without the nonce: told to retry with it (RFC 9449 §8).
		retry := dpopPost(t, a, key, "", cc, basicFor(cl))
		retry.Expect(t, 400, map[string]any{"error": "use_dpop_nonce"})
		nonce := retry.Header.Get("DPoP-Nonce")

		got := dpopPost(t, a, key, nonce, cc, basicFor(cl)).Expect(t, 200, map[string]any{"token_type": "DPoP"})
		at := got["access_token"].(string)
		if cnf, _ := claimsOf(t, at)["cnf"].(map[string]any); cnf["jkt"] != key.JKT {
			t.Fatalf("cnf %v, want jkt %s", cnf, key.JKT)
		}
		in := postTo(a, "/v1/oauth/introspect", url.Values{"token": {at}}, basicFor(cl)).Expect(t, 200, map[string]any{"active": true, "token_type": "DPoP"})
		if cnf, _ := in["cnf"].(map[string]any); cnf["jkt"] != key.JKT {
			t.Fatalf("introspection %v", in)
		}

		refused := func(name, proof, code string) {
			t.Run(name, func(t *testing.T) {
				r := a.PostForm("/v1/oauth/token", cc, merge(basicFor(cl), map[string]string{"DPoP": proof}))
				r.Expect(t, 400, map[string]any{"error": code})
				if r.Header.Get("DPoP-Nonce") == "" {
					t.Fatal("a refusal without the nonce to use")
				}
			})
		}
		token := a.Config.PublicURL + "/v1/oauth/token"
		now := a.Clock.Now()
		replayed := key.Proof(t, http.MethodPost, token, "", nonce, now)
		dpopOK := a.PostForm("/v1/oauth/token", cc, merge(basicFor(cl), map[string]string{"DPoP": replayed}))
		dpopOK.Expect(t, 200, map[string]any{"token_type": "DPoP"})
		refused("a replayed proof", replayed, "invalid_dpop_proof")
		t.Run("a refused request's proof is not spent", func(t *testing.T) {
			again := key.Proof(t, http.MethodPost, token, "", nonce, now)
			a.PostForm("/v1/oauth/token", cc, map[string]string{"Authorization": basic(cl.ID, "wrong")["Authorization"], "DPoP": again}).
				Expect(t, 401, map[string]any{"error": "invalid_client"})
			a.PostForm("/v1/oauth/token", cc, merge(basicFor(cl), map[string]string{"DPoP": again})).Expect(t, 200, map[string]any{"token_type": "DPoP"})
		})
		refused("a proof for another URL", key.Proof(t, http.MethodPost, a.Config.PublicURL+"/v1/oauth/introspect", "", nonce, now), "invalid_dpop_proof")
		refused("a proof for another method", key.Proof(t, http.MethodGet, token, "", nonce, now), "invalid_dpop_proof")
		refused("a proof from two minutes ago", key.Proof(t, http.MethodPost, token, "", nonce, now.Add(-2*time.Minute)), "invalid_dpop_proof")
		refused("a proof naming an access token", key.Proof(t, http.MethodPost, token, at, nonce, now), "invalid_dpop_proof")
		refused("not a proof", "eyJhbGciOiJub25lIn0.e30.", "invalid_dpop_proof")
		t.Run("two proofs", func(t *testing.T) {
			form := cc.Encode()
			status, body := a.Raw(t, fmt.Sprintf("POST /v1/oauth/token HTTP/1.1\r\nHost: x\r\nAuthorization: %s\r\nDPoP: %s\r\nDPoP: %s\r\n"+
				"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
				basicFor(cl)["Authorization"], key.Proof(t, http.MethodPost, token, "", nonce, now), key.Proof(t, http.MethodPost, token, "", nonce, now), len(form), form))
			if status != 400 || !strings.Contains(body, "invalid_dpop_proof") {
				t.Fatalf("%d %s", status, body)
			}
		})
		t.Run("a nonce replayed after it rotated out", func(t *testing.T) {
			a.Clock.Advance(11 * time.Minute)
			refused("stale", key.Proof(t, http.MethodPost, token, "", nonce, a.Clock.Now()), "use_dpop_nonce")
		})
		if st.Name == "postgres" {
			t.Run("on another replica", func(t *testing.T) {
				other := apptest.Start(t, st) // the same database, another process's nonces
				fresh := nonceOf(t, a)
				proof := key.Proof(t, http.MethodPost, other.Config.PublicURL+"/v1/oauth/token", "", fresh, other.Clock.Now())
				other.PostForm("/v1/oauth/token", cc, merge(basicFor(cl), map[string]string{"DPoP": proof})).Expect(t, 400, map[string]any{"error": "use_dpop_nonce"})
				// With the other replica's nonce it is taken there, once.
				theirs := nonceOf(t, other)
				proof = key.Proof(t, http.MethodPost, other.Config.PublicURL+"/v1/oauth/token", "", theirs, other.Clock.Now())
				other.PostForm("/v1/oauth/token", cc, merge(basicFor(cl), map[string]string{"DPoP": proof})).Expect(t, 200, map[string]any{"token_type": "DPoP"})
				other.PostForm("/v1/oauth/token", cc, merge(basicFor(cl), map[string]string{"DPoP": proof})).Expect(t, 400, map[string]any{"error": "invalid_dpop_proof"})
			})
		}
		meta := a.Get("/.well-known/oauth-authorization-server").Expect(t, 200, nil)
		if fmt.Sprint(meta["dpop_signing_alg_values_supported"]) != "[ES256 EdDSA RS256 Ed25519]" {
			t.Fatalf("dpop_signing_alg_values_supported %v", meta["dpop_signing_alg_values_supported"])
		}
	})
}

// codeFor runs the authorization code flow for a public client as admin's browser would,
// up to the code.
func codeFor(t *testing.T, a *apptest.App, admin *apptest.Session, prj, clientID, redirect string) (code, verifier string) {
	t.Helper()
	verifier = oauth2.GenerateVerifier()
	return a.ApproveCode(t, admin, prj, url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {redirect}, "state": {"s"},
		"code_challenge": {oauth2.S256ChallengeFromVerifier(verifier)}, "code_challenge_method": {"S256"}, "scope": {"openid email"}}), verifier
}

// A public client's refresh tokens are bound to the key it proved (RFC 9449 §5); one that
// registered dpop_bound_access_tokens cannot get a token without a proof.
func TestDPoPBoundClients(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a, admin, prj := setup(t, st)
		const redirect = "http://127.0.0.1/callback"
		register := func(bound bool) string {
			body := map[string]any{"client_name": "agent", "redirect_uris": []string{redirect}}
			if bound {
				body["dpop_bound_access_tokens"] = true
			}
			got := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/register", Body: body}).Expect(t, 201, nil)
			if bound && got["dpop_bound_access_tokens"] != true {
				t.Fatalf("registration %v", got)
			}
			return got["client_id"].(string)
		}
		key, thief := apptest.NewDPoPKey(t), apptest.NewDPoPKey(t)
		nonce := nonceOf(t, a)

		t.Run("a client that registered dpop_bound_access_tokens", func(t *testing.T) {
			id := register(true)
			code, verifier := codeFor(t, a, admin, prj, id, redirect)
			form := url.Values{"grant_type": {"authorization_code"}, "client_id": {id}, "code": {code}, "redirect_uri": {redirect}, "code_verifier": {verifier}}
			dpopPost(t, a, nil, "", form, nil).Expect(t, 400, map[string]any{"error": "invalid_request"})
			got := dpopPost(t, a, key, nonce, form, nil).Expect(t, 200, map[string]any{"token_type": "DPoP"})
			refresh := url.Values{"grant_type": {"refresh_token"}, "client_id": {id}, "refresh_token": {got["refresh_token"].(string)}}
			dpopPost(t, a, nil, "", refresh, nil).Expect(t, 400, map[string]any{"error": "invalid_request"})
			dpopPost(t, a, thief, nonce, refresh, nil).Expect(t, 400, map[string]any{"error": "invalid_grant"})
			again := dpopPost(t, a, key, nonce, refresh, nil).Expect(t, 200, map[string]any{"token_type": "DPoP"})
			if cnf, _ := claimsOf(t, again["access_token"].(string))["cnf"].(map[string]any); cnf["jkt"] != key.JKT {
				t.Fatalf("refreshed cnf %v", cnf)
			}
		})
		t.Run("a public client's refresh token stays with its key", func(t *testing.T) {
			id := register(false)
			code, verifier := codeFor(t, a, admin, prj, id, redirect)
			got := dpopPost(t, a, key, nonce, url.Values{"grant_type": {"authorization_code"}, "client_id": {id}, "code": {code},
				"redirect_uri": {redirect}, "code_verifier": {verifier}}, nil).Expect(t, 200, map[string]any{"token_type": "DPoP"})
			refresh := url.Values{"grant_type": {"refresh_token"}, "client_id": {id}, "refresh_token": {got["refresh_token"].(string)}}
			dpopPost(t, a, nil, "", refresh, nil).Expect(t, 400, map[string]any{"error": "invalid_grant"})
			dpopPost(t, a, thief, nonce, refresh, nil).Expect(t, 400, map[string]any{"error": "invalid_grant"})
			dpopPost(t, a, key, nonce, refresh, nil).Expect(t, 200, map[string]any{"token_type": "DPoP"})
		})
		t.Run("userinfo takes a bound token only with its key's proof", func(t *testing.T) {
			id := register(false)
			code, verifier := codeFor(t, a, admin, prj, id, redirect)
			at := dpopPost(t, a, key, nonce, url.Values{"grant_type": {"authorization_code"}, "client_id": {id}, "code": {code},
				"redirect_uri": {redirect}, "code_verifier": {verifier}}, nil).Expect(t, 200, map[string]any{"token_type": "DPoP"})["access_token"].(string)
			userinfo := a.Config.PublicURL + "/v1/oauth/userinfo"
			ask := func(scheme string, proof string) *apptest.Response {
				h := map[string]string{"Authorization": scheme + " " + at}
				if proof != "" {
					h["DPoP"] = proof
				}
				return a.Do(apptest.Req{Path: "/v1/oauth/userinfo", Header: h})
			}
			for name, c := range map[string]struct{ scheme, proof string }{
				"as a bearer token":        {"Bearer", ""},
				"as a bearer with a proof": {"Bearer", key.Proof(t, http.MethodGet, userinfo, at, nonce, a.Clock.Now())},
				"without a proof":          {"DPoP", ""},
				"with another key's proof": {"DPoP", thief.Proof(t, http.MethodGet, userinfo, at, nonce, a.Clock.Now())},
				"with a proof for POST":    {"DPoP", key.Proof(t, http.MethodPost, userinfo, at, nonce, a.Clock.Now())},
			} {
				r := ask(c.scheme, c.proof)
				r.Expect(t, 401, map[string]any{"error": "invalid_token"})
				if !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "DPoP ") {
					t.Errorf("%s: WWW-Authenticate %q", name, r.Header.Get("WWW-Authenticate"))
				}
			}
			ask("DPoP", key.Proof(t, http.MethodGet, userinfo, at, nonce, a.Clock.Now())).Expect(t, 200, map[string]any{"email": admin.Email})
		})
		t.Run("a confidential bound client, whatever the grant", func(t *testing.T) {
			got := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/register", Body: map[string]any{"client_name": "agent", "redirect_uris": []string{redirect},
				"token_endpoint_auth_method": "client_secret_basic", "dpop_bound_access_tokens": true}}).Expect(t, 201, nil)
			auth := basic(got["client_id"].(string), got["client_secret"].(string))
			// An ID-JAG's grant (SPEC §22) authenticates the client too: no proof, nothing.
			jag := url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:jwt-bearer"}, "assertion": {"x.y.z"}, "resource": {"https://mcp.example.com/" + prj}}
			dpopPost(t, a, nil, "", jag, auth).Expect(t, 400, map[string]any{"error": "invalid_request"})
			dpopPost(t, a, key, nonce, jag, auth).Expect(t, 400, map[string]any{"error": "invalid_target"}) // on to the grant, which knows no such resource
		})
		t.Run("dpop_bound_access_tokens of the wrong type", func(t *testing.T) {
			a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/oauth/register", Body: map[string]any{"redirect_uris": []string{redirect}, "dpop_bound_access_tokens": "yes"}}).
				Expect(t, 400, map[string]any{"error": "invalid_client_metadata"})
		})
	})
}

// An agent token minted bound to a key (SPEC §22) is worth nothing without a proof by that
// key: copied to another machine, it is refused on ai/me and at token exchange.
func TestDPoPBoundAgentTokens(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		a, admin, prj := setup(t, st)
		key, thief := apptest.NewDPoPKey(t), apptest.NewDPoPKey(t)
		mintPath := "/v1/auth-core/projects/" + prj + "/ai/agents"
		for name, v := range map[string]any{"a number": 7, "too short": key.JKT[:42], "not base64url": strings.Repeat("+", 43), "empty": ""} {
			t.Run("dpopJkt "+name, func(t *testing.T) {
				a.Do(apptest.Req{Method: http.MethodPost, Path: mintPath, Header: admin.Bearer(), Body: map[string]any{"agentName": "x", "dpopJkt": v}}).
					Expect(t, 400, map[string]any{"code": "create_failed"})
			})
		}
		minted := a.Do(apptest.Req{Method: http.MethodPost, Path: mintPath, Header: admin.Bearer(),
			Body: map[string]any{"agentName": "bound", "scopes": []string{"files:read"}, "dpopJkt": key.JKT}}).Expect(t, 200, nil)
		secret := minted["plaintext"].(string)
		if minted["agent"].(map[string]any)["dpopJkt"] != key.JKT {
			t.Fatalf("minted %v", minted["agent"])
		}
		me := a.Config.PublicURL + meURL
		nonce := nonceOf(t, a)
		ask := func(scheme string, proof string) *apptest.Response {
			h := map[string]string{"Authorization": scheme + " " + secret}
			if proof != "" {
				h["DPoP"] = proof
			}
			return a.Do(apptest.Req{Path: meURL, Header: h})
		}
		for name, proof := range map[string]string{
			"no proof (a copied token)":        "",
			"another key's proof":              thief.Proof(t, http.MethodGet, me, secret, nonce, a.Clock.Now()),
			"a proof for another URL":          key.Proof(t, http.MethodGet, a.Config.PublicURL+"/v1/auth-core/session/me", secret, nonce, a.Clock.Now()),
			"a proof for another method":       key.Proof(t, http.MethodPost, me, secret, nonce, a.Clock.Now()),
			"a proof for another token":        key.Proof(t, http.MethodGet, me, "ac_ai_other", nonce, a.Clock.Now()),
			"a proof without the server nonce": key.Proof(t, http.MethodGet, me, secret, "", a.Clock.Now()),
			// The window is half a minute either way (issue 46: it sizes the jti memory).
			"a proof from 31 s ago":  key.Proof(t, http.MethodGet, me, secret, nonce, a.Clock.Now().Add(-31*time.Second)),
			"a proof for 31 s ahead": key.Proof(t, http.MethodGet, me, secret, nonce, a.Clock.Now().Add(31*time.Second)),
		} {
			t.Run(name, func(t *testing.T) {
				r := ask("Bearer", proof)
				r.Expect(t, 401, map[string]any{"code": "invalid_token", "authenticated": false})
				if !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "DPoP error=") || r.Header.Get("DPoP-Nonce") == "" {
					t.Fatalf("headers %v", r.Header)
				}
			})
		}
		proof := key.Proof(t, http.MethodGet, me, secret, nonce, a.Clock.Now())
		ask("Bearer", proof).Expect(t, 200, map[string]any{"agentName": "bound", "authenticated": true})
		t.Run("the proof replayed", func(t *testing.T) {
			ask("Bearer", proof).Expect(t, 401, map[string]any{"code": "invalid_token"})
		})
		t.Run("the DPoP scheme", func(t *testing.T) {
			ask("DPoP", key.Proof(t, http.MethodGet, me, secret, nonce, a.Clock.Now())).Expect(t, 200, map[string]any{"agentName": "bound"})
		})
		if st.Name == "postgres" {
			t.Run("the proof on another replica", func(t *testing.T) {
				other := apptest.Start(t, st)
				fresh := key.Proof(t, http.MethodGet, other.Config.PublicURL+meURL, secret, nonce, other.Clock.Now())
				other.Do(apptest.Req{Path: meURL, Header: map[string]string{"Authorization": "Bearer " + secret, "DPoP": fresh}}).Expect(t, 401, map[string]any{"code": "invalid_token"})
			})
		}

		resource := "https://mcp.example.com/files/" + prj
		a.RegisterResource(t, admin, prj, resource, nil)
		exchange := url.Values{"grant_type": {grantExchange}, "subject_token": {secret}, "subject_token_type": {accessType}, "resource": {resource}}
		t.Run("exchange without a proof", func(t *testing.T) {
			dpopPost(t, a, nil, "", exchange, nil).Expect(t, 400, map[string]any{"error": "invalid_grant"})
		})
		t.Run("exchange with another key's proof", func(t *testing.T) {
			dpopPost(t, a, thief, nonce, exchange, nil).Expect(t, 400, map[string]any{"error": "invalid_grant"})
		})
		got := dpopPost(t, a, key, nonce, exchange, nil).Expect(t, 200, map[string]any{"token_type": "DPoP"})
		if cnf, _ := claimsOf(t, got["access_token"].(string))["cnf"].(map[string]any); cnf["jkt"] != key.JKT {
			t.Fatalf("exchanged cnf %v", cnf)
		}
		introspector := mint(t, a, admin, prj, nil)
		in := postTo(a, "/v1/oauth/introspect", url.Values{"token": {secret}}, basicFor(introspector)).Expect(t, 200, map[string]any{"active": true, "token_type": "DPoP"})
		if cnf, _ := in["cnf"].(map[string]any); cnf["jkt"] != key.JKT {
			t.Fatalf("introspection %v", in)
		}
		// An unbound token is as before: no proof wanted.
		plain, _ := agent(t, a, admin, prj, nil, 24)
		a.Do(apptest.Req{Path: meURL, Header: map[string]string{"Authorization": "Bearer " + plain}}).Expect(t, 200, nil)
	})
}
