// Package resourceserver is the worked example of a service that accepts the access
// tokens authcore issues (an MCP server, an API behind an agent): it verifies them offline
// against authcore's JWKS with third-party libraries (keyfunc, golang-jwt), or online with
// RFC 7662 introspection, and serves RFC 9728 protected-resource metadata so clients know
// which authorization server to ask. A token bound to a key (cnf.jkt, RFC 9449) is taken
// only with a DPoP proof by that key (dpop.go). It uses nothing of authcore's own code.
package resourceserver

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
)

// Config says where the authorization server is and what this resource is.
type Config struct {
	// Issuer is authcore's issuer (its AUTHCORE_PUBLIC_URL): tokens must name it.
	Issuer string
	// Resource is this server's identifier, the audience its tokens must name (RFC 8707).
	Resource string
	// Scope is required in every token's scope.
	Scope string
	// ProjectID, when set, is the one authcore project whose tokens are accepted. aud
	// already binds a token to this server (authcore issues tokens for a resource only to
	// the project that registered it); checking the project as well keeps a server that
	// serves one project safe even if its URI were registered by mistake elsewhere.
	ProjectID string
	// For introspection only: an auth badge's client id and secret.
	ClientID, ClientSecret string
}

// Claims is what a handler behind the server learns of the caller.
type Claims struct {
	Subject, Scope, ProjectID, AgentName string
	// BoundKey is the thumbprint of the DPoP key the token is bound to (cnf.jkt), which
	// the caller proved it holds; "" for a bearer token.
	BoundKey string
}

type claimsKey struct{}

// ClaimsOf returns the verified caller of a request.
func ClaimsOf(r *http.Request) Claims { c, _ := r.Context().Value(claimsKey{}).(Claims); return c }

// Offline protects next with JWTs verified against the issuer's JWKS, fetched and kept
// fresh by keyfunc: no call to authcore per request. A revoked agent token's JWTs stay
// valid until they expire (15 minutes at most); use Online where that matters.
func Offline(ctx context.Context, cfg Config, next http.Handler) (http.Handler, error) {
	kf, err := keyfunc.NewDefaultCtx(ctx, []string{cfg.Issuer + "/.well-known/jwks.json"})
	if err != nil {
		return nil, err
	}
	parser := jwt.NewParser(jwt.WithValidMethods([]string{"EdDSA"}), jwt.WithIssuer(cfg.Issuer),
		jwt.WithAudience(cfg.Resource), jwt.WithExpirationRequired(), jwt.WithLeeway(5*time.Second))
	return protect(cfg, next, func(r *http.Request, raw string) (Claims, error) {
		var mc jwt.MapClaims
		tok, err := parser.ParseWithClaims(raw, &mc, kf.Keyfunc)
		if err != nil {
			return Claims{}, err
		}
		// RFC 9068: only access tokens, never another kind of JWT signed by the same keys.
		if tok.Header["typ"] != "at+jwt" {
			return Claims{}, errors.New("not an access token")
		}
		return claimsOf(mc["sub"], mc["scope"], mc["project_id"], mc["agent_name"], mc["cnf"]), nil
	}), nil
	// jwt.WithAudience above is the aud check: a token for another resource is refused.
}

// Online protects next with RFC 7662 introspection at the issuer: one call per request,
// and a revoked credential is refused at once.
func Online(cfg Config, next http.Handler) http.Handler {
	client := &http.Client{Timeout: 5 * time.Second}
	return protect(cfg, next, func(r *http.Request, raw string) (Claims, error) {
		req, err := http.NewRequestWithContext(r.Context(), http.MethodPost, cfg.Issuer+"/v1/oauth/introspect",
			strings.NewReader(url.Values{"token": {raw}}.Encode()))
		if err != nil {
			return Claims{}, err
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth(url.QueryEscape(cfg.ClientID), url.QueryEscape(cfg.ClientSecret))
		res, err := client.Do(req)
		if err != nil {
			return Claims{}, err
		}
		defer res.Body.Close()
		var in map[string]any
		if err := json.NewDecoder(res.Body).Decode(&in); err != nil || res.StatusCode != http.StatusOK {
			return Claims{}, errors.New("introspection failed")
		}
		if in["active"] != true || !audienceHas(in["aud"], cfg.Resource) {
			return Claims{}, errors.New("inactive, or not for this resource")
		}
		return claimsOf(in["sub"], in["scope"], in["project_id"], in["agent_name"], in["cnf"]), nil
	})
}

func protect(cfg Config, next http.Handler, verify func(*http.Request, string) (Claims, error)) http.Handler {
	mux := http.NewServeMux()
	metadataURL := strings.TrimRight(cfg.Resource, "/") + "/.well-known/oauth-protected-resource"
	proofs := newProofs()
	// RFC 9728: where a client learns which authorization server issues tokens for us.
	mux.HandleFunc("GET /.well-known/oauth-protected-resource", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"resource": cfg.Resource, "authorization_servers": []string{cfg.Issuer},
			"bearer_methods_supported": []string{"header"}, "scopes_supported": []string{cfg.Scope},
			"dpop_signing_alg_values_supported": proofAlgorithmNames,
		})
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		scheme, raw, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		var c Claims
		var err error
		if scheme == "Bearer" || scheme == "DPoP" {
			c, err = verify(r, raw)
		} else {
			err = errors.New("no token")
		}
		// A bound token needs the DPoP scheme and a proof by its key (RFC 9449 §7); a
		// bearer token sent as DPoP is not one a proof can make safer, so it is refused too.
		switch {
		case err != nil:
		case c.BoundKey != "" && scheme != "DPoP", c.BoundKey == "" && scheme == "DPoP":
			err = errors.New("the token's binding and the scheme disagree")
		case c.BoundKey != "":
			err = proofs.check(r, cfg.Resource, raw, c.BoundKey)
		}
		var proofErr *proofError
		if errors.As(err, &proofErr) {
			w.Header().Set("WWW-Authenticate", `DPoP error="invalid_dpop_proof", error_description="`+proofErr.why+`", algs="`+strings.Join(proofAlgorithmNames, " ")+`"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		if err != nil || (cfg.ProjectID != "" && c.ProjectID != cfg.ProjectID) {
			// RFC 6750 and RFC 9728: say where the metadata is.
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+metadataURL+`", scope="`+cfg.Scope+`"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		if !hasScope(c.Scope, cfg.Scope) {
			// A good token without the scope (RFC 6750 §3.1): 403 insufficient_scope, naming
			// the scope, so an MCP host steps up (asks the person for the added scope) rather
			// than starting over (SPEC §21).
			w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="`+cfg.Scope+`", resource_metadata="`+metadataURL+`"`)
			http.Error(w, "insufficient scope", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), claimsKey{}, c)))
	})
	return mux
}

func claimsOf(sub, scope, project, agent, cnf any) Claims {
	s := func(v any) string { x, _ := v.(string); return x }
	c := Claims{Subject: s(sub), Scope: s(scope), ProjectID: s(project), AgentName: s(agent)}
	if m, ok := cnf.(map[string]any); ok {
		c.BoundKey = s(m["jkt"])
		if c.BoundKey == "" { // bound to something this server cannot check: refuse
			c.BoundKey = "unverifiable"
		}
	}
	return c
}

func hasScope(scopes, want string) bool {
	for _, s := range strings.Fields(scopes) {
		if s == want {
			return true
		}
	}
	return false
}

func audienceHas(aud any, want string) bool {
	switch a := aud.(type) {
	case string:
		return a == want
	case []any:
		for _, x := range a {
			if x == want {
				return true
			}
		}
	}
	return false
}
