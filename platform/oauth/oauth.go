// Package oauth is where the OAuth authorization server (modules/oauth) meets the owners of
// what it issues (SPEC §15): each grant type and each kind of confidential client is
// contributed through an fx value group by the module that owns it, so removing a product
// removes its grant and nothing else. Grants answer with values and *apperr.Error in the
// RFC 6749 style; the server renders both.
package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"slices"
	"sync/atomic"
	"time"

	"go.uber.org/fx"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/assertion"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/dpop"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/resource"
	"github.com/authcore/authcore/platform/scope"
)

// Paths of the standard OAuth surface (SPEC §11).
const (
	TokenPath      = "/v1/oauth/token"
	IntrospectPath = "/v1/oauth/introspect"
	RevokePath     = "/v1/oauth/revoke"
	MetadataPath   = "/.well-known/oauth-authorization-server"
	JWKSPath       = "/.well-known/jwks.json"
	// AuthorizePath and RegisterPath are served by the module of SPEC §16, when present.
	AuthorizePath = "/oauth/authorize"
	RegisterPath  = "/v1/oauth/register"
	// OpenID Connect (SPEC §21): discovery, userinfo and RP-initiated logout.
	OpenIDConfigurationPath = "/.well-known/openid-configuration"
	UserinfoPath            = "/v1/oauth/userinfo"
	EndSessionPath          = "/oauth/logout"
	// BackchannelPath is OpenID CIBA's backchannel authentication endpoint (SPEC §23).
	BackchannelPath = "/v1/oauth/bc-authorize"
)

// TokenTypeAccess is RFC 8693's token type of an access token.
const TokenTypeAccess = "urn:ietf:params:oauth:token-type:access_token"

// GrantTokenExchange is RFC 8693's grant type.
const GrantTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"

// GrantCIBA is OpenID CIBA's grant type (SPEC §23).
const GrantCIBA = "urn:openid:params:grant-type:ciba"

// TokenTypeUpstreamAccess is the requested_token_type of an upstream provider's access
// token from the token vault (SPEC §23).
const TokenTypeUpstreamAccess = "urn:authcore:token-type:upstream-access-token"

// Exchange is one kind of RFC 8693 token exchange, contributed by the module that owns what
// it takes or gives (SPEC §11 agent tokens for access tokens, §22 id_tokens for ID-JAGs,
// §23 agent credentials for upstream tokens). The OAuth server serves the token-exchange
// grant and hands each request to the exchange its requested_token_type names (the access
// token type when absent), so adding one is a contribution, never a change of the server.
type Exchange interface {
	// RequestedType is the requested_token_type it issues.
	RequestedType() string
	// Metric is the endpoint label its answers are counted under.
	Metric() string
	// ClientAuth reports whether the caller must authenticate as a client; false: the
	// subject token is the credential (a client that authenticates anyway is passed on).
	ClientAuth() bool
	// Token answers the request, or fails with an RFC 6749 style *apperr.Error.
	Token(ctx context.Context, r Request) (Token, error)
	// Live is Grant.Live for the access tokens it issues (false for what it does not own).
	Live(ctx context.Context, from Issued) (bool, error)
}

// AsExchange contributes the Exchange returned by constructor f.
func AsExchange(f any) fx.Option {
	return fx.Provide(fx.Annotate(f, fx.ResultTags(`group:"oauth_exchanges"`)))
}

// Client is a confidential client that proved who it is.
type Client struct {
	// ProjectID and Role are a machine client's (an auth badge's); "" for a client a
	// host registered (SPEC §16, §21), which belongs to no project.
	ID, ProjectID, Role string
	ExpiresAt           *time.Time
	// Scopes are the agent scopes a machine client was granted (SPEC §21).
	Scopes []string
	// Method is how it authenticated: client_secret_basic, client_secret_post or
	// private_key_jwt.
	Method string
	// Registered is the token_endpoint_auth_method the client registered (RFC 7591 §2),
	// the only one it may authenticate with (SPEC §29); "" for a client that registered
	// none and may use any it holds credentials for (an auth badge's secret or keys).
	Registered string
	// Name is what a person is shown of the client when it asks them something (SPEC §23:
	// an agent token's agentName); "" when it has none.
	Name string
	// DPoPBound is a client that registered dpop_bound_access_tokens (RFC 9449 §5.2): the
	// token endpoint issues it nothing without a DPoP proof, whatever the grant.
	DPoPBound bool
}

// The client authentication methods (RFC 6749 §2.3.1, RFC 7523 §2.2, RFC 7591 §2).
const (
	AuthNone          = "none"
	AuthSecretBasic   = "client_secret_basic"
	AuthSecretPost    = "client_secret_post"
	AuthPrivateKeyJWT = "private_key_jwt"
)

// Clients authenticates confidential clients by secret (client_secret_basic and
// client_secret_post). ok is false for any failure the client caused: unknown, wrong
// secret, revoked or expired, all alike.
type Clients interface {
	Authenticate(ctx context.Context, id, secret string) (c Client, ok bool, err error)
}

// KeyedClients is implemented by Clients whose clients may authenticate by a signed
// assertion (private_key_jwt, RFC 7523 §2.2): the client id names, and the keys its
// assertions must verify with. ok is false for a client it does not know, or one that
// registered no keys.
type KeyedClients interface {
	ClientKeys(ctx context.Context, id string) (c Client, keys assertion.KeySet, ok bool, err error)
}

// ClientAuthenticator is supplied by the OAuth server to endpoints served elsewhere that
// authenticate clients exactly as the token endpoint does (SPEC §23: backchannel
// authentication and its grant): the credentials ClientCredentials read
// (client_secret_basic, client_secret_post or private_key_jwt), by whichever contributed
// Clients knows the client; none presented is invalid_client. endpoint is the path the
// request came to (an assertion may name it as its audience). ctx must carry the issuer
// (identity.WithIssuer).
type ClientAuthenticator interface {
	AuthenticateClient(ctx context.Context, creds Credentials, endpoint string) (Client, error)
}

// Agents is supplied by the owner of AI agent tokens to what lets an agent token act as a
// client of its project (SPEC §23): its client_id is the token's id and its secret the
// token itself.
type Agents interface {
	// Agent is the live agent token presented, as a client of its project (ID, ProjectID,
	// Scopes, ExpiresAt, Name); credential.ErrNotLive for anything else.
	Agent(ctx context.Context, token string) (Client, error)
	// Agents lists a project's live agent tokens (ID, ProjectID, Scopes, ExpiresAt, Name),
	// for a person choosing which of them may act for them.
	Agents(ctx context.Context, projectID string) ([]Client, error)
}

// ProjectClients is implemented by Clients that can tell whether a client is a live one of
// a project (SPEC §23: a person chooses the project's agents for a vault connection): an
// auth badge's client of that project, a host's client that holds a live grant there.
// false, not an error, for an id it does not know.
type ProjectClients interface {
	ClientOfProject(ctx context.Context, projectID, id string) (bool, error)
}

// ClientMethods is implemented by Clients to say, for metadata (RFC 8414), how its clients
// authenticate, and whether they belong to a project (only those introspect).
type ClientMethods interface {
	AuthMethods() (methods []string, ofProjects bool)
}

// OptionalClientAuth is implemented by a Grant whose clients may be public or
// confidential (authorization code and refresh, SPEC §21): the server authenticates a
// client that presents credentials and leaves Request.Client nil for one that presents
// none; the grant judges whether its client had to.
type OptionalClientAuth interface{ ClientAuthOptional() }

// AssertionType is client_assertion_type for private_key_jwt (RFC 7523 §2.2).
const AssertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

// MaxAssertionLifetime bounds a client assertion's exp (SPEC §29: at most 60 minutes, as
// stock clients such as Authlib and zitadel/oidc sign for an hour by default); its jti is
// remembered until then.
const MaxAssertionLifetime = 60 * time.Minute

// Request is a token request as a grant sees it.
type Request struct {
	Form url.Values
	// Client is the authenticated client when the grant asks for one; nil otherwise.
	Client *Client
	// Authorization is the request's Authorization header, for a grant that authenticates
	// its clients itself (SPEC §23: agent tokens acting as clients); "" when absent.
	Authorization string
}

// Token is a successful token answer (RFC 6749 §5.1, RFC 8693 §2.2.1).
type Token struct {
	AccessToken     string `json:"access_token"`
	IssuedTokenType string `json:"issued_token_type,omitempty"`
	TokenType       string `json:"token_type"`
	ExpiresIn       int    `json:"expires_in"`
	Scope           string `json:"scope"`
	RefreshToken    string `json:"refresh_token,omitempty"`
	IDToken         string `json:"id_token,omitempty"` // OpenID Connect (SPEC §21)
	// AuthorizationDetails are the RFC 9396 details the token carries (SPEC §23), compact
	// JSON.
	AuthorizationDetails json.RawMessage `json:"authorization_details,omitempty"`
}

// Grant is one grant type of the token endpoint.
type Grant interface {
	// Type is its grant_type value.
	Type() string
	// Metric is the endpoint label its answers are counted under
	// (authcore_oauth_requests_total).
	Metric() string
	// ClientAuth reports whether the caller must authenticate as a confidential client.
	ClientAuth() bool
	// Repeatable reports whether form parameter name may be given more than once.
	Repeatable(name string) bool
	// Token answers the request, or fails with an RFC 6749 style *apperr.Error.
	Token(ctx context.Context, r Request) (Token, error)
	// Live reports whether what an access token of this grant was issued from is still
	// live: its client, or its grant (SPEC §16); false for ones the grant does not own.
	Live(ctx context.Context, from Issued) (bool, error)
}

// Issued is what an access token says it was issued from: its client_id and, for tokens
// of a person's grant (SPEC §16), its grant_id.
type Issued struct{ ClientID, GrantID string }

// GrantsOf selects people's grants (SPEC §16): those of a project, of a user, or of a
// user on a project, optionally only those naming a resource (any spelling of its URI).
type GrantsOf struct {
	ProjectID, UserID string
	Resource          string
}

// GrantEnding is who ends grants and why, as their audit records say.
type GrantEnding struct {
	ActorID *string
	Reason  string
	Origin  audit.Origin
}

// GrantEnder is supplied by the owner of people's grants to the modules whose changes a
// grant depends on (SPEC §9b): removing a member (project), deleting a resource
// (resource), resetting or changing a password (account). It runs in the caller's
// transaction, so the change and the grants it ends commit together, and every replica
// drops the grants' tokens as it commits.
type GrantEnder interface {
	// EndGrants revokes the live grants of selects and says how many.
	EndGrants(ctx context.Context, tx *ent.Tx, of GrantsOf, e GrantEnding) (int, error)
}

// Metadata adds fields to the RFC 8414 metadata document: a module that serves endpoints
// of its own (SPEC §16: authorization, registration) names them. issuer is the server's.
type Metadata func(issuer string) map[string]any

// AsMetadata contributes the Metadata returned by constructor f.
func AsMetadata(f any) fx.Option {
	return fx.Provide(fx.Annotate(f, fx.ResultTags(`group:"oauth_metadata"`)))
}

// Signer signs JWTs with the key set served at /.well-known/jwks.json. Supplied by the
// session module (which owns the keys) to the OAuth server and its grants.
type Signer interface {
	// SignAccessToken signs an OAuth access token (header typ at+jwt), adding iss (the
	// issuer in ctx). It fails with ErrEngineNotReady before the keys load.
	SignAccessToken(ctx context.Context, claims Claims) (string, error)
	// SignIDToken signs an OpenID Connect id_token (SPEC §21) with alg (IDTokenAlgorithms;
	// "" is RS256), adding iss. It fails with ErrEngineNotReady before the keys load.
	SignIDToken(ctx context.Context, claims map[string]any, alg string) (string, error)
	// SignTyped is SignIDToken for a JWT of another typ: an ID-JAG (oauth-id-jag+jwt).
	SignTyped(ctx context.Context, claims map[string]any, alg, typ string) (string, error)
	// JWKS is the public key set (RFC 7517) of every token signed; an error before the
	// keys load.
	JWKS() ([]byte, error)
}

// IDTokenAlgorithms are the algorithms id_tokens are signed with: RS256, which OpenID
// Connect requires every party to support (and the default), and EdDSA for clients that
// register id_token_signed_response_alg EdDSA.
var IDTokenAlgorithms = []string{"RS256", "EdDSA"}

// Verifier is supplied by the session module to the OAuth surface: verification of any
// JWT signed with the key set served at /.well-known/jwks.json.
type Verifier interface {
	// VerifyJWT checks the signature and the expiry (to the second) of token and returns
	// its header typ and its claims; credential.ErrNotLive for anything else. It knows
	// nothing of revocation: the caller judges the token's subject.
	VerifyJWT(token string) (typ string, claims map[string]any, err error)
	// VerifySigned checks only that token is signed by a key of the set (an id_token
	// presented as a hint may have expired): its typ and claims, else
	// credential.ErrNotLive. The caller judges everything else.
	VerifySigned(token string) (typ string, claims map[string]any, err error)
}

// Audiences reads the aud of claims VerifySigned returned: a string or a list of them.
func Audiences(claims map[string]any) []string {
	switch a := claims["aud"].(type) {
	case string:
		return []string{a}
	case []any:
		out := make([]string, 0, len(a))
		for _, x := range a {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// AsGrant contributes the Grant returned by constructor f.
func AsGrant(f any) fx.Option {
	return fx.Provide(fx.Annotate(f, fx.ResultTags(`group:"oauth_grants"`)))
}

// AsClients contributes the Clients returned by constructor f.
func AsClients(f any) fx.Option {
	return fx.Provide(fx.Annotate(f, fx.ResultTags(`group:"oauth_clients"`)))
}

// Error is an RFC 6749 §5.2 error of kind.
func Error(kind apperr.Kind, code, description string) *apperr.Error {
	return apperr.OAuth(kind, code, description)
}

// InvalidRequest is invalid_request with description.
func InvalidRequest(description string) *apperr.Error {
	return Error(apperr.KindInvalid, "invalid_request", description)
}

// The errors grants share.
var (
	ErrInvalidClient      = InvalidClient("client authentication failed")
	ErrUnregistered       = Error(apperr.KindInvalid, "invalid_target", "the resource is not registered by this project")
	ErrTarget             = Error(apperr.KindInvalid, "invalid_target", "resource and audience must be absolute https URIs without a fragment")
	ErrScopeGrammar       = Error(apperr.KindInvalid, "invalid_scope", "each scope must match "+scope.Pattern.String()+", separated by spaces")
	errSigningUnavailable = Error(apperr.KindUnavailable, "temporarily_unavailable", "signing keys are not loaded yet")
)

// Claims are an access token's (RFC 9068). A struct, not a map: every grant signs one per
// request, and encoding a struct costs a fraction of encoding a map (BenchmarkSignAccessToken).
type Claims struct {
	Issuer    string `json:"iss"` // set by the signer
	Subject   string `json:"sub"`
	ClientID  string `json:"client_id"`
	Audience  any    `json:"aud"` // a string, or a list of them
	Scope     string `json:"scope"`
	ProjectID string `json:"project_id"`
	AgentName string `json:"agent_name,omitempty"`
	Role      string `json:"role,omitempty"`
	GrantID   string `json:"grant_id,omitempty"`
	// The organisation a person signed in for, their role and its permissions (SPEC §26);
	// for an agent token bound to an org, that org alone.
	OrgID   string `json:"org_id,omitempty"`
	OrgRole string `json:"org_role,omitempty"`
	// A pointer so that a role without permissions says [] rather than nothing.
	OrgPermissions *[]string `json:"org_permissions,omitempty"`
	// Cnf binds the token to a DPoP key (RFC 9449 §6): set by Sign from the context.
	Cnf *Confirmation `json:"cnf,omitempty"`
	// AuthorizationDetails are what a person approved (RFC 9396, SPEC §23), compact JSON.
	AuthorizationDetails json.RawMessage `json:"authorization_details,omitempty"`
	IssuedAt             int64           `json:"iat"`
	NotBefore            int64           `json:"nbf"` // the signer sets it to IssuedAt when zero
	Expires              int64           `json:"exp"`
	ID                   string          `json:"jti"`
}

// Confirmation is a token's cnf claim: the thumbprint of the DPoP key it is bound to.
type Confirmation struct {
	JKT string `json:"jkt"`
}

type dpopKey struct{}

// proven is the key a request proved; Sign marks it used when it binds a token to it.
type proven struct {
	jkt   string
	bound atomic.Bool
	// proof and checker, when set, can forget the proof's jti (ReleaseDPoP).
	proof   dpop.Proof
	checker *dpop.Checker
}

// WithDPoP says that the request proved possession of the key with thumbprint jkt (the
// endpoint checked its DPoP proof, SPEC §22): what Sign binds tokens to.
func WithDPoP(ctx context.Context, jkt string) context.Context {
	return context.WithValue(ctx, dpopKey{}, &proven{jkt: jkt})
}

// ReleaseDPoP forgets the jti of the proof ProveDPoP took for ctx's request, when nothing
// was bound to its key: the request was refused (dpop.Checker.Release).
func ReleaseDPoP(ctx context.Context) {
	if p, ok := ctx.Value(dpopKey{}).(*proven); ok && p.checker != nil && !p.bound.Load() {
		p.checker.Release(p.proof)
	}
}

// DPoPKeyOf is the thumbprint WithDPoP set, or "".
func DPoPKeyOf(ctx context.Context) string {
	if p, ok := ctx.Value(dpopKey{}).(*proven); ok {
		return p.jkt
	}
	return ""
}

// BoundByDPoP reports whether Sign bound a token of this request to its DPoP key: its
// token_type is then DPoP (a grant may also hand out a token it did not sign, such as an
// upstream's from the vault, which stays what it is).
func BoundByDPoP(ctx context.Context) bool {
	p, ok := ctx.Value(dpopKey{}).(*proven)
	return ok && p.bound.Load()
}

// ProveDPoP checks the DPoP proof among proofs (the request's DPoP header values; RFC 9449
// §4.3: one at most) for a request of method to url, and returns ctx saying which key it
// proved; no proof leaves ctx as it is. A refusal is RFC 9449's OAuth error:
// use_dpop_nonce when a retry with the server's nonce will do, else invalid_dpop_proof.
func ProveDPoP(ctx context.Context, checker *dpop.Checker, proofs [][]byte, method, url string) (context.Context, error) {
	var p dpop.Proof
	var err error
	switch len(proofs) {
	case 0:
		return ctx, nil
	case 1:
		p, err = checker.Verify(string(proofs[0]), dpop.Request{Method: method, URL: url})
	default:
		err = &dpop.Error{Why: "send one DPoP proof"}
	}
	var refused *dpop.Error
	if errors.As(err, &refused) {
		return ctx, Error(apperr.KindInvalid, refused.Code(), refused.Why)
	}
	if err != nil {
		return ctx, err
	}
	return context.WithValue(ctx, dpopKey{}, &proven{jkt: p.JKT, proof: p, checker: checker}), nil
}

// ErrDPoPKeyRequired refuses a credential bound to a DPoP key presented without a proof by
// that key (SPEC §22).
func ErrDPoPKeyRequired(code string) error {
	kind := apperr.KindInvalid
	if code == "invalid_client" {
		kind = apperr.KindUnauthenticated
	}
	return Error(kind, code, "this credential is bound to a DPoP key: send a DPoP proof by that key")
}

// Sign signs an access token's claims, bound to the request's DPoP key when it proved one,
// failing in the RFC 6749 style while the signing keys are not loaded.
func Sign(ctx context.Context, signer Signer, claims Claims) (string, error) {
	if p, ok := ctx.Value(dpopKey{}).(*proven); ok {
		claims.Cnf = &Confirmation{JKT: p.jkt}
		p.bound.Store(true)
	}
	tok, err := signer.SignAccessToken(ctx, claims)
	if errors.Is(err, identity.ErrEngineNotReady) {
		return "", errSigningUnavailable
	}
	return tok, err
}

// Targets reads resource (RFC 8707: absolute URIs, repeatable) and, when audience is true,
// audience (RFC 8693): each must be a well-formed resource URI before anything else is
// looked at. It returns their canonical forms.
func Targets(form url.Values, audience bool) ([]string, error) {
	given := slices.Clone(form["resource"])
	if audience {
		given = append(given, form["audience"]...)
	}
	var targets []string
	for _, r := range given {
		canonical, err := resource.Canonical(r)
		if err != nil {
			return nil, ErrTarget
		}
		targets = append(targets, canonical)
	}
	return targets, nil
}

// Registered checks that every target is a resource project registered (SPEC §11): it
// returns the audience to issue for and the scope bounds of the resources that set them.
// Tokens are never issued for another project's resource, nor for an unregistered one.
func Registered(ctx context.Context, resources resource.Registry, project string, targets []string) (audience []string, bounds [][]string, err error) {
	for _, target := range targets {
		r, ok, err := resources.Lookup(ctx, target)
		if err != nil {
			return nil, nil, err
		}
		if !ok || r.ProjectID != project {
			return nil, nil, ErrUnregistered
		}
		if !slices.Contains(audience, r.URI) {
			audience = append(audience, r.URI)
		}
		if len(r.Scopes) > 0 {
			bounds = append(bounds, r.Scopes)
		}
	}
	return audience, bounds, nil
}

// SubjectAccessToken is the subject of a token exchange that takes an access token
// (RFC 8693 §2.1): subject_token given, of the access token type, and no actor_token,
// since no exchange here acts for a delegate. Every such exchange refuses alike.
func SubjectAccessToken(form url.Values) (string, error) {
	subject := form.Get("subject_token")
	switch {
	case subject == "":
		return "", InvalidRequest("subject_token is required")
	case form.Get("subject_token_type") != TokenTypeAccess:
		return "", InvalidRequest("subject_token_type must be " + TokenTypeAccess)
	case form.Get("actor_token") != "":
		return "", InvalidRequest("delegation (actor_token) is not supported")
	}
	return subject, nil
}

// Union is a with b's strings it lacks, in order: a grant widened by what a person
// approved again (scopes, resources), a metadata list joined with a contributor's.
func Union(a, b []string) []string {
	out := slices.Clone(a)
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// Narrow is the scope to grant. Requested scopes must each be covered by one held and by
// every bound (a resource's scopes); with none requested, the grant is every scope, held
// or bounding, that held and every bound both cover.
func Narrow(held, requested []string, bounds [][]string) ([]string, bool) {
	allowed := func(s string) bool {
		if !scope.CoveredBy(held, s) {
			return false
		}
		for _, b := range bounds {
			if !scope.CoveredBy(b, s) {
				return false
			}
		}
		return true
	}
	if len(requested) > 0 {
		for _, r := range requested {
			if !allowed(r) {
				return nil, false
			}
		}
		return requested, true
	}
	candidates := slices.Clone(held)
	for _, b := range bounds {
		candidates = append(candidates, b...)
	}
	out := []string{}
	for _, s := range candidates {
		if allowed(s) && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out, true
}

// Audience is the aud claim for audience: a string when there is one, else the list.
func Audience(audience []string) any {
	if len(audience) == 1 {
		return audience[0]
	}
	return audience
}

// AppSessions is supplied by the logout module to the authorization endpoint (SPEC §25):
// it remembers which apps each SSO session signed its person in to, so that when the
// session ends, however it ends (identity.SessionEnding), each of those apps hears of it
// by back-channel logout, and RP-initiated logout can show their front-channel pages.
type AppSessions interface {
	// Joined records, in tx, that session sid signed userID in to the project's app
	// clientID; again is a no-op.
	Joined(ctx context.Context, tx *ent.Tx, sid, clientID, userID, projectID string) error
	// FrontChannel is the front-channel logout URL (OIDC Front-Channel Logout 1.0, with iss
	// and sid) of each app sid signed in to that registered one.
	FrontChannel(ctx context.Context, sid string) ([]string, error)
}
