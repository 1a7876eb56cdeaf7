package authorize

import (
	"cmp"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/idna"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/oauthgrant"
	"github.com/authcore/authcore/platform/assertion"
	"github.com/authcore/authcore/platform/bearer"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/oauth"
	"github.com/authcore/authcore/platform/outbound"
	"github.com/authcore/authcore/platform/scope"
	"github.com/authcore/authcore/platform/secret"
)

// client is a public client as the authorization endpoint and the token endpoint see it:
// a client metadata document's (SPEC §16 (b)) or a registered one's (c).
type client struct {
	ID   string
	Name string // a claim, as is URI; the hosts of its redirect URIs are facts
	// URI is client_uri: a claim of the client's, shown as such.
	URI          string
	RedirectURIs []string
	// AuthMethod is its token_endpoint_auth_method (SPEC §21): none for a public client;
	// client_secret_basic, client_secret_post or private_key_jwt for a confidential one.
	AuthMethod string
	// JWKS (inline) or JWKSURI hold a private_key_jwt client's keys.
	JWKS    map[string]any
	JWKSURI string
	// PostLogoutRedirectURIs are where RP-initiated logout may send the browser back.
	PostLogoutRedirectURIs []string
	// Scope is what it registered it may ask for (RFC 7591 §2); "" for anything.
	Scope string
	// IDTokenAlg is its id_token_signed_response_alg ("" for the default, RS256).
	IDTokenAlg string
	// DPoPBound is dpop_bound_access_tokens (RFC 9449 §5.2): it must send DPoP proofs.
	DPoPBound bool
	// ProjectID is set for an app a project registered (SPEC §25): the project's tenant
	// users sign in to it. FirstParty apps ask no consent.
	ProjectID  string
	AppType    string
	FirstParty bool
	// BackchannelURI and FrontchannelURI hear of the end of SSO sessions that signed in to it.
	BackchannelURI  string
	FrontchannelURI string
	// Claims maps custom claim names to user metadata paths.
	Claims map[string]string
	// GrantTypes are what a registered client or app registered (RFC 7591 §2).
	GrantTypes []string
}

// app reports whether the client is an app of a project (SPEC §25), whose people are
// the project's tenant users rather than dashboard users.
func (c client) app() bool { return c.ProjectID != "" }

// confidential reports whether the client must authenticate at the token endpoint.
func (c client) confidential() bool { return c.AuthMethod != "" && c.AuthMethod != authNone }

// refusedScope is the first of scopes the client did not register, or "".
func (c client) refusedScope(scopes []string) string {
	if c.Scope == "" {
		return ""
	}
	allowed := strings.Fields(c.Scope)
	for _, s := range scopes {
		if !slices.Contains(allowed, s) {
			return s
		}
	}
	return ""
}

// Client authentication methods at the token endpoint (RFC 7591 §2, RFC 7523).
const (
	authNone          = oauth.AuthNone
	authSecretBasic   = oauth.AuthSecretBasic
	authSecretPost    = oauth.AuthSecretPost
	authPrivateKeyJWT = oauth.AuthPrivateKeyJWT
)

// clientSecretKind prefixes the secrets of clients hosts register: ac_rcs_….
const clientSecretKind = "rcs"

// The limits of a client metadata document (SPEC §16).
const (
	maxDocument    = 5 << 10
	maxKeySet      = 64 << 10
	fetchTimeout   = 5 * time.Second
	maxDocumentAge = 24 * time.Hour
	// minDocumentAge is how long an outcome is reused even when the document's caching
	// headers forbid it (SPEC §9b: at most one fetch per document per cache lifetime per
	// process): otherwise every request naming a document would reach its server, and
	// this server would be anyone's request amplifier.
	minDocumentAge = time.Minute
	maxClientName  = 200
	maxRedirects   = 10
	maxURI         = 2048
)

// errClient is why a client_id cannot be used; its text is shown on the error page.
type errClient struct{ why string }

func (e errClient) Error() string { return e.why }

// clients resolves client ids: registered ones from the store, metadata documents by
// fetching them under the outbound policy (platform/outbound's Fetcher: cached as their
// HTTP caching headers allow, a minute at least, a day at most). Key sets named by
// jwks_uri are fetched the same way.
type clients struct {
	ent     *ent.Client
	clock   clock.Clock
	fetcher *outbound.Fetcher
	// keys fetches the key sets private_key_jwt clients name by jwks_uri: the same rules,
	// with room for a few RSA keys.
	keys *outbound.Fetcher
	// registered caches registered clients as resolve reads them: what it reads of a
	// row changes only through an app's admin (SPEC §25), who publishes clientTopic in the
	// change's transaction, so every replica drops it as it commits (a secret is read by
	// Authenticate, uncached). A pruned client had no grants left to present.
	registered *bearer.Cache[string, client]
}

// registeredCache bounds the cache of registered clients; an entry lives a minute.
const registeredCache = 10_000

func newClients(c *ent.Client, clk clock.Clock, policy outbound.Policy, roots *x509.CertPool) *clients {
	return &clients{ent: c, clock: clk, registered: bearer.NewCache[string, client](registeredCache, time.Minute),
		fetcher: outbound.NewFetcher(policy, roots, clk, outbound.FetcherOptions{
			Limit: maxDocument, Timeout: fetchTimeout, MinAge: minDocumentAge, MaxAge: maxDocumentAge, Entries: 1024}),
		keys: outbound.NewFetcher(policy, roots, clk, outbound.FetcherOptions{
			Limit: maxKeySet, Timeout: fetchTimeout, MinAge: minDocumentAge, MaxAge: maxDocumentAge, Entries: 1024})}
}

// resolve finds the client id names: an https URL is a metadata document, a dcr_ id one
// registered here; anything else is unknown.
func (cs *clients) resolve(ctx context.Context, id string) (client, error) {
	switch {
	case strings.HasPrefix(id, "https://"):
		return cs.document(ctx, id)
	case strings.HasPrefix(id, registeredPrefix) && len(id) <= 40:
		cl, err := cs.registered.Load(ctx, id, func(ctx context.Context) (client, error) {
			row, err := cs.ent.OAuthClient.Get(ctx, id)
			if err != nil {
				return client{}, err // not found included: an unknown id is not cached
			}
			return client{ID: row.ID, Name: row.Name, URI: row.ClientURI, RedirectURIs: row.RedirectUris, AuthMethod: row.TokenEndpointAuthMethod,
				JWKS: row.Jwks, JWKSURI: row.JwksURI, PostLogoutRedirectURIs: row.PostLogoutRedirectUris, Scope: row.Scope,
				IDTokenAlg: row.IDTokenSignedResponseAlg, DPoPBound: row.DpopBoundAccessTokens,
				ProjectID: row.ProjectID, AppType: row.AppType, FirstParty: row.FirstParty, BackchannelURI: row.BackchannelLogoutURI, GrantTypes: row.GrantTypes,
				FrontchannelURI: row.FrontchannelLogoutURI, Claims: row.Claims}, nil
		})
		if ent.IsNotFound(err) {
			return client{}, errClient{"no client is registered with this client_id"}
		}
		return cl, err
	}
	return client{}, errClient{"client_id must be a registered client's id or the https URL of a client metadata document"}
}

// metadataDocument is the part of a client metadata document (RFC 7591 §2 fields) read here.
type metadataDocument struct {
	ClientID                string         `json:"client_id"`
	ClientName              string         `json:"client_name"`
	ClientURI               string         `json:"client_uri"`
	LogoURI                 string         `json:"logo_uri"`
	RedirectURIs            []string       `json:"redirect_uris"`
	TokenEndpointAuthMethod string         `json:"token_endpoint_auth_method"`
	JWKS                    map[string]any `json:"jwks"`
	JWKSURI                 string         `json:"jwks_uri"`
	PostLogoutRedirectURIs  []string       `json:"post_logout_redirect_uris"`
	Scope                   string         `json:"scope"`
	IDTokenAlg              string         `json:"id_token_signed_response_alg"`
	DPoPBound               bool           `json:"dpop_bound_access_tokens"`
}

// document fetches and checks a client metadata document (SPEC §16 (b), §21).
func (cs *clients) document(ctx context.Context, id string) (client, error) {
	u, err := url.Parse(id)
	if err != nil || len(id) > maxURI || u.Fragment != "" || u.User != nil || strings.Trim(u.Path, "/") == "" {
		return client{}, errClient{"a client metadata document's URL is https, with a path, and no fragment or user info"}
	}
	d := cs.fetcher.Get(ctx, id)
	if d.Err != nil {
		return client{}, errClient{"the client metadata document: " + d.Err.Error()}
	}
	var doc metadataDocument
	if err := json.Unmarshal(d.Body, &doc); err != nil {
		return client{}, errClient{"the client metadata document is not a JSON object of client metadata"}
	}
	if doc.ClientID != id {
		return client{}, errClient{"the client metadata document's client_id is not its own URL"}
	}
	// A document is public: it can hold no secret, only keys (SPEC §21).
	method := cmp.Or(doc.TokenEndpointAuthMethod, authNone)
	if method != authNone && method != authPrivateKeyJWT {
		return client{}, errClient{"a client metadata document's token_endpoint_auth_method is none or private_key_jwt"}
	}
	if why := checkKeys(method, doc.JWKS, doc.JWKSURI); why != "" {
		return client{}, errClient{"the client metadata document's " + why}
	}
	if why := checkRedirectURIs(doc.RedirectURIs, ""); why != "" {
		return client{}, errClient{"the client metadata document's redirect_uris " + why}
	}
	if why := checkPostLogout(doc.PostLogoutRedirectURIs); why != "" {
		return client{}, errClient{"the client metadata document's post_logout_redirect_uris " + why}
	}
	name, ok := clientName(doc.ClientName)
	if !ok {
		return client{}, errClient{"the client metadata document's client_name is longer than 200 characters or holds control or format characters"}
	}
	if !claimURI(doc.ClientURI) || !claimURI(doc.LogoURI) {
		return client{}, errClient{"the client metadata document's client_uri and logo_uri must be https URLs without control or format characters"}
	}
	if displayHost(u) == "" { // the consent screen names it: it must be readable as what it is
		return client{}, errClient{"the client metadata document's host is not a valid host name"}
	}
	if why := checkScope(doc.Scope); why != "" {
		return client{}, errClient{"the client metadata document's " + why}
	}
	if doc.IDTokenAlg != "" && !slices.Contains(oauth.IDTokenAlgorithms, doc.IDTokenAlg) {
		return client{}, errClient{"the client metadata document's id_token_signed_response_alg is RS256 or EdDSA"}
	}
	return client{ID: id, Name: name, URI: doc.ClientURI, RedirectURIs: doc.RedirectURIs, AuthMethod: method, JWKS: doc.JWKS,
		JWKSURI: doc.JWKSURI, PostLogoutRedirectURIs: doc.PostLogoutRedirectURIs, Scope: doc.Scope, IDTokenAlg: doc.IDTokenAlg,
		DPoPBound: doc.DPoPBound}, nil
}

// checkKeys says what is wrong with a client's keys for its method ("" when nothing): a
// private_key_jwt client has a key set, inline or by an https URI, and only public keys;
// another has none.
func checkKeys(method string, jwks map[string]any, jwksURI string) string {
	switch {
	case method != authPrivateKeyJWT && (jwks != nil || jwksURI != ""):
		return "jwks and jwks_uri are for private_key_jwt clients"
	case method != authPrivateKeyJWT:
		return ""
	case (jwks == nil) == (jwksURI == ""):
		return "jwks or jwks_uri (one of them) is required for private_key_jwt"
	case jwksURI != "":
		if u, err := url.Parse(jwksURI); err != nil || u.Scheme != "https" || u.Host == "" || u.Fragment != "" || len(jwksURI) > maxURI {
			return "jwks_uri must be an https URL"
		}
		return ""
	}
	if _, err := assertion.ParseKeySet(jwks); err != nil {
		return "jwks " + err.Error()
	}
	return ""
}

// checkPostLogout checks post_logout_redirect_uris as redirect URIs (none is fine).
func checkPostLogout(uris []string) string {
	if len(uris) == 0 {
		return ""
	}
	return checkRedirectURIs(uris, "")
}

// checkScope checks a registration's scope: the scope grammar, space-separated.
func checkScope(s string) string {
	if s == "" {
		return ""
	}
	if _, ok := scope.Parse(s); !ok || len(s) > maxScopeParamLen {
		return "scope must be scopes matching " + scope.Pattern.String() + ", separated by spaces"
	}
	return ""
}

// clientName checks a display name: at most 200 characters, none a control or a format
// character (Unicode Cf: U+202E would turn "moc.elgoog" into what reads as google.com).
func clientName(name string) (string, bool) {
	if utf8.RuneCountInString(name) > maxClientName || strings.IndexFunc(name, invisible) >= 0 {
		return "", false
	}
	return name, true
}

// invisible is a character a person cannot see for what it is: control or format (Cf).
func invisible(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }

// claimURI checks a URL a client claims for itself (client_uri, logo_uri): absent, or
// https without invisible characters. It is shown as a claim, never as the client's host.
func claimURI(raw string) bool {
	if raw == "" {
		return true
	}
	return len(raw) <= maxURI && strings.IndexFunc(raw, invisible) < 0 && checkRedirectURIs([]string{raw}, "web") == ""
}

// asciiHost is a host name in IDNA ASCII (punycode), lower-cased, as the consent screen
// shows it: a look-alike Unicode name shows as the xn-- label it is. IP literals pass as
// they are; what IDNA's lookup profile refuses is no host at all.
func asciiHost(host string) (string, bool) {
	if host == "" || strings.IndexFunc(host, invisible) >= 0 {
		return "", false
	}
	if ip := net.ParseIP(host); ip != nil {
		return ip.String(), true
	}
	ascii, err := idna.Lookup.ToASCII(strings.TrimSuffix(host, "."))
	if err != nil || ascii == "" {
		return "", false
	}
	return strings.ToLower(ascii), true
}

// hostOf is where a redirect URI sends the code, as the consent screen shows it: its
// host in IDNA ASCII with any port that is not the scheme's default, or for a native
// app's private-use scheme (RFC 8252 §7.1) the scheme, the only name such a URI has.
// Redirect URIs were checked at registration: they parse.
func hostOf(redirect string) string {
	u, err := url.Parse(redirect)
	if err != nil {
		return ""
	}
	if u.Host == "" {
		return strings.ToLower(u.Scheme) + ":"
	}
	return displayHost(u)
}

// displayHost is u's host as a person should read it: IDNA ASCII, and its port unless it
// is the scheme's default. "" when it is no valid host.
func displayHost(u *url.URL) string {
	h, ok := asciiHost(u.Hostname())
	if !ok {
		return ""
	}
	if strings.Contains(h, ":") { // an IPv6 literal
		h = "[" + h + "]"
	}
	if p := u.Port(); p != "" && !(p == "443" && strings.EqualFold(u.Scheme, "https")) && !(p == "80" && strings.EqualFold(u.Scheme, "http")) {
		h += ":" + p
	}
	return h
}

// refusedSchemes could run script or read local files where a browser lands.
var refusedSchemes = []string{"javascript", "data", "file", "vbscript", "about", "blob"}

// checkRedirectURIs says what is wrong with a client's redirect URIs ("" when nothing):
// absolute, no fragment, at most ten. With an application type (RFC 7591 registration),
// web clients redirect to https off loopback and native ones to loopback http, https or
// a private-use scheme (RFC 8252 §7).
func checkRedirectURIs(uris []string, applicationType string) string {
	if len(uris) == 0 {
		return "must list at least one redirect URI"
	}
	if len(uris) > maxRedirects {
		return fmt.Sprintf("must list at most %d redirect URIs", maxRedirects)
	}
	for _, raw := range uris {
		if strings.IndexFunc(raw, invisible) >= 0 {
			return "must not hold control or format characters"
		}
		u, err := url.Parse(raw)
		if err != nil || len(raw) > maxURI || !u.IsAbs() || u.Fragment != "" || u.User != nil || strings.Contains(raw, "#") {
			return "must be absolute URIs without a fragment or user info: " + raw
		}
		if _, ok := asciiHost(u.Hostname()); u.Host != "" && !ok {
			return "must name a valid host: " + raw
		}
		scheme := strings.ToLower(u.Scheme)
		if slices.Contains(refusedSchemes, scheme) {
			return "must not use the " + scheme + " scheme"
		}
		loop := loopbackHost(u.Hostname())
		switch {
		case scheme == "http" && !loop:
			return "must use https, or http only on a loopback address: " + raw
		case (scheme == "http" || scheme == "https") && u.Host == "":
			return "must name a host: " + raw
		case applicationType == "web" && (scheme != "https" || loop):
			return "of a web client must be https off loopback (register a native client for " + raw + ")"
		case applicationType == "native" && scheme == "https" && loop:
			return "of a native client use http on loopback, not https: " + raw
		}
	}
	return ""
}

func loopbackHost(h string) bool { return h == "127.0.0.1" || h == "::1" || h == "localhost" }

// redirectAllowed matches a redirect URI exactly against the client's, except that a
// loopback one (http://127.0.0.1 or [::1]) matches whatever its port (RFC 8252 §7.3): a
// native host listens on whichever port it gets.
func (c client) redirectAllowed(raw string) bool {
	if slices.Contains(c.RedirectURIs, raw) {
		return true
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" || (u.Hostname() != "127.0.0.1" && u.Hostname() != "::1") ||
		u.User != nil || u.Opaque != "" || strings.Contains(raw, "#") {
		return false
	}
	for _, r := range c.RedirectURIs {
		ru, err := url.Parse(r)
		if err == nil && ru.Scheme == "http" && ru.Hostname() == u.Hostname() &&
			ru.Path == u.Path && ru.RawQuery == u.RawQuery {
			return true
		}
	}
	return false
}

// The authorize module authenticates the confidential clients hosts register (SPEC
// §21): by secret (client_secret_basic, client_secret_post) or by key (private_key_jwt,
// registered clients and metadata documents alike).
var (
	_ oauth.Clients        = (*clients)(nil)
	_ oauth.KeyedClients   = (*clients)(nil)
	_ oauth.ProjectClients = (*clients)(nil)
)

// ClientOfProject: a host's client belongs to no project, but acts in one through a
// grant: a registered client with a live grant of the project is one of its clients.
func (cs *clients) ClientOfProject(ctx context.Context, projectID, id string) (bool, error) {
	if !strings.HasPrefix(id, registeredPrefix) {
		return false, nil
	}
	return cs.ent.OAuthGrant.Query().Where(oauthgrant.ClientID(id), oauthgrant.ProjectID(projectID), oauthgrant.RevokedAtIsNil()).Exist(ctx)
}

// AuthMethods: hosts' clients authenticate by secret or key; they belong to no project.
func (*clients) AuthMethods() ([]string, bool) {
	return []string{authSecretBasic, authSecretPost, authPrivateKeyJWT}, false
}

// Authenticate checks a registered client's secret.
func (cs *clients) Authenticate(ctx context.Context, id, sec string) (oauth.Client, bool, error) {
	if !strings.HasPrefix(id, registeredPrefix) || len(id) > 40 || !secret.CheckToken(clientSecretKind, sec) {
		return oauth.Client{}, false, nil
	}
	row, err := cs.ent.OAuthClient.Get(ctx, id)
	if ent.IsNotFound(err) {
		return oauth.Client{}, false, nil
	}
	if err != nil {
		return oauth.Client{}, false, err
	}
	// The current secret, or the one a rotation retired while its grace lasts (SPEC §25);
	// both compared, in constant time, whichever matches.
	d := secret.DigestOf(sec).Bytes()
	current := row.SecretDigest != nil && secret.Equal(d, *row.SecretDigest)
	previous := row.PreviousSecretDigest != nil && row.PreviousSecretExpiresAt != nil &&
		secret.Equal(d, *row.PreviousSecretDigest) && cs.clock.Now().Before(*row.PreviousSecretExpiresAt)
	if !current && !previous {
		return oauth.Client{}, false, nil
	}
	return oauth.Client{ID: id, DPoPBound: row.DpopBoundAccessTokens, Registered: row.TokenEndpointAuthMethod}, true, nil
}

// ClientKeys is the key set of a private_key_jwt client, registered or by document.
func (cs *clients) ClientKeys(ctx context.Context, id string) (oauth.Client, assertion.KeySet, bool, error) {
	if !strings.HasPrefix(id, "https://") && !strings.HasPrefix(id, registeredPrefix) {
		return oauth.Client{}, nil, false, nil
	}
	cl, err := cs.resolve(ctx, id)
	var unusable errClient
	if errors.As(err, &unusable) {
		return oauth.Client{}, nil, false, nil
	}
	if err != nil || cl.AuthMethod != authPrivateKeyJWT {
		return oauth.Client{}, nil, false, err
	}
	if cl.JWKSURI != "" {
		return oauth.Client{ID: id, DPoPBound: cl.DPoPBound, Registered: cl.AuthMethod}, assertion.Remote{Fetcher: cs.keys, URL: cl.JWKSURI}, true, nil
	}
	set, err := assertion.ParseKeySet(cl.JWKS)
	if err != nil { // checked at registration and on fetch
		return oauth.Client{}, nil, false, nil
	}
	return oauth.Client{ID: id, DPoPBound: cl.DPoPBound, Registered: cl.AuthMethod}, assertion.Static{Set: set}, true, nil
}
