package authorize

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/pquerna/cachecontrol/cacheobject"
	"golang.org/x/net/idna"
	"golang.org/x/sync/singleflight"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/platform/clock"
	"github.com/authcore/authcore/platform/outbound"
)

// client is a public client as the authorization endpoint and the token endpoint see it:
// a client metadata document's (SPEC §16 (b)) or a registered one's (c).
type client struct {
	ID   string
	Name string // a claim, as is URI; the hosts of its redirect URIs are facts
	// URI is client_uri: a claim of the client's, shown as such.
	URI          string
	RedirectURIs []string
}

// The limits of a client metadata document (SPEC §16).
const (
	maxDocument    = 5 << 10
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
// fetching them under the outbound policy, cached as their HTTP caching headers allow.
type clients struct {
	ent    *ent.Client
	clock  clock.Clock
	policy outbound.Policy
	http   *http.Client
	cache  *lru.Cache[string, cached]
	// fetching collapses concurrent fetches of one document into one.
	fetching singleflight.Group
}

// cached is a document's outcome: the client, or why it cannot be used (a fetch that
// failed is remembered too, so that a document is fetched at most once per minDocumentAge).
type cached struct {
	client  client
	err     error
	expires time.Time
}

func newClients(c *ent.Client, clk clock.Clock, policy outbound.Policy, roots *x509.CertPool) *clients {
	cache, _ := lru.New[string, cached](1024) // cannot fail: the size is positive
	return &clients{ent: c, clock: clk, policy: policy, cache: cache,
		http: &http.Client{Transport: policy.Transport(fetchTimeout, roots), Timeout: fetchTimeout,
			// A redirect is an answer, not an instruction (SPEC §16: no redirects).
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// resolve finds the client id names: an https URL is a metadata document, a dcr_ id one
// registered here; anything else is unknown.
func (cs *clients) resolve(ctx context.Context, id string) (client, error) {
	switch {
	case strings.HasPrefix(id, "https://"):
		return cs.document(ctx, id)
	case strings.HasPrefix(id, registeredPrefix) && len(id) <= 40:
		row, err := cs.ent.OAuthClient.Get(ctx, id)
		if ent.IsNotFound(err) {
			return client{}, errClient{"no client is registered with this client_id"}
		}
		if err != nil {
			return client{}, err
		}
		return client{ID: row.ID, Name: row.Name, URI: row.ClientURI, RedirectURIs: row.RedirectUris}, nil
	}
	return client{}, errClient{"client_id must be a registered client's id or the https URL of a client metadata document"}
}

// document fetches and checks a client metadata document, or takes it from the cache.
func (cs *clients) document(ctx context.Context, id string) (client, error) {
	now := cs.clock.Now()
	if c, ok := cs.cache.Get(id); ok && now.Before(c.expires) {
		return c.client, c.err
	}
	got, err, _ := cs.fetching.Do(id, func() (any, error) {
		c, ttl, err := cs.fetch(ctx, id)
		var why errClient
		if err == nil || errors.As(err, &why) {
			cs.cache.Add(id, cached{client: c, err: err, expires: now.Add(max(ttl, minDocumentAge))})
		}
		return c, err
	})
	if err != nil {
		return client{}, err
	}
	return got.(client), nil
}

// metadataDocument is the part of a client metadata document (RFC 7591 §2 fields) read here.
type metadataDocument struct {
	ClientID                string   `json:"client_id"`
	ClientName              string   `json:"client_name"`
	ClientURI               string   `json:"client_uri"`
	LogoURI                 string   `json:"logo_uri"`
	RedirectURIs            []string `json:"redirect_uris"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
}

func (cs *clients) fetch(ctx context.Context, id string) (client, time.Duration, error) {
	u, err := url.Parse(id)
	if err != nil || len(id) > maxURI || u.Fragment != "" || u.User != nil || strings.Trim(u.Path, "/") == "" {
		return client{}, 0, errClient{"a client metadata document's URL is https, with a path, and no fragment or user info"}
	}
	if why, ok := cs.policy.CheckURL(ctx, id); !ok {
		return client{}, 0, errClient{"the client metadata document's address " + why}
	}
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, id, nil)
	if err != nil {
		return client{}, 0, errClient{"the client metadata document's URL is not usable"}
	}
	req.Header.Set("Accept", "application/json")
	res, err := cs.http.Do(req)
	if err != nil {
		if errors.Is(err, outbound.ErrAddress) {
			return client{}, 0, errClient{"the client metadata document's address is not allowed"}
		}
		return client{}, 0, errClient{"the client metadata document could not be fetched"}
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return client{}, 0, errClient{"fetching the client metadata document answered " + strconv.Itoa(res.StatusCode) + " (redirects are not followed)"}
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, maxDocument+1))
	if err != nil {
		return client{}, 0, errClient{"the client metadata document could not be read"}
	}
	if len(body) > maxDocument {
		return client{}, 0, errClient{"the client metadata document is larger than 5 KiB"}
	}
	var doc metadataDocument
	if err := json.Unmarshal(body, &doc); err != nil {
		return client{}, 0, errClient{"the client metadata document is not a JSON object of client metadata"}
	}
	if doc.ClientID != id {
		return client{}, 0, errClient{"the client metadata document's client_id is not its own URL"}
	}
	if doc.TokenEndpointAuthMethod != "" && doc.TokenEndpointAuthMethod != "none" {
		return client{}, 0, errClient{"only public clients (token_endpoint_auth_method none) may use a client metadata document here"}
	}
	if why := checkRedirectURIs(doc.RedirectURIs, ""); why != "" {
		return client{}, 0, errClient{"the client metadata document's redirect_uris " + why}
	}
	name, ok := clientName(doc.ClientName)
	if !ok {
		return client{}, 0, errClient{"the client metadata document's client_name is longer than 200 characters or holds control or format characters"}
	}
	if !claimURI(doc.ClientURI) || !claimURI(doc.LogoURI) {
		return client{}, 0, errClient{"the client metadata document's client_uri and logo_uri must be https URLs without control or format characters"}
	}
	if displayHost(u) == "" { // the consent screen names it: it must be readable as what it is
		return client{}, 0, errClient{"the client metadata document's host is not a valid host name"}
	}
	return client{ID: id, Name: name, URI: doc.ClientURI, RedirectURIs: doc.RedirectURIs}, cacheFor(res, cs.clock.Now()), nil
}

// cacheFor is how long a fetched document may be reused: what its caching headers say,
// at most 24 hours; not at all when they say nothing or forbid it.
func cacheFor(res *http.Response, now time.Time) time.Duration {
	reasons, expires, err := cacheobject.UsingRequestResponse(res.Request, res.StatusCode, res.Header, false)
	if err != nil || len(reasons) > 0 || expires.IsZero() {
		return 0
	}
	return min(expires.Sub(now), maxDocumentAge)
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
