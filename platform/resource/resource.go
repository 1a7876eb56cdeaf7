// Package resource is the contract of registered resources (SPEC §11): the resource
// servers — APIs, MCP servers — a project's tokens may be issued for. The project that
// registered a URI owns it; every grant that names a resource (token exchange, client
// credentials) asks the Registry, so no token is ever issued for another tenant's server.
package resource

import (
	"context"
	"errors"
	"net"
	"net/url"
	"strings"
)

// Resource is a registered resource server.
type Resource struct {
	ID        string
	ProjectID string
	URI       string // canonical (see Canonical)
	Name      string
	// Scopes, when not empty, bound what tokens for this resource may carry.
	Scopes []string
}

// Registry finds the resource registered under a URI.
type Registry interface {
	// Lookup returns the resource registered under uri, which must be in the form
	// Canonical returns (callers canonicalise the URIs a request names once), and false
	// when none is.
	Lookup(ctx context.Context, uri string) (Resource, bool, error)
}

// MaxURI bounds a resource URI: it is a JWT audience, carried by every token.
const MaxURI = 2048

// ErrInvalid is what Canonical returns for a URI that cannot name a resource.
var ErrInvalid = errors.New("a resource is an absolute https URI (http only on a loopback host), without fragment, user info or dot-segments")

// Canonical checks a resource URI and returns the form it is registered and compared
// under: scheme and host lower-cased, the rest exactly as given. A resource is an absolute
// https URI (http only for loopback hosts, for local development), without a fragment
// (RFC 8707), user info, dot-segments or characters outside printable ASCII.
func Canonical(raw string) (string, error) {
	if raw == "" || len(raw) > MaxURI || strings.ContainsRune(raw, '#') {
		return "", ErrInvalid
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] <= ' ' || raw[i] >= 0x7f {
			return "", ErrInvalid
		}
	}
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" || u.User != nil || u.Host == "" || u.Hostname() == "" {
		return "", ErrInvalid
	}
	scheme := strings.ToLower(u.Scheme)
	switch {
	case scheme == "https":
	case scheme == "http" && loopback(u.Hostname()):
	default:
		return "", ErrInvalid
	}
	if dotSegments(u.EscapedPath()) {
		return "", ErrInvalid
	}
	// The authority as written (url.Parse would have unescaped it), lower-cased;
	// everything after it stays byte for byte what was registered.
	authority, rest := raw[len(u.Scheme)+3:], ""
	if i := strings.IndexAny(authority, "/?"); i >= 0 {
		authority, rest = authority[:i], authority[i:]
	}
	if strings.ContainsRune(authority, '%') { // a percent-encoded host: nobody needs one
		return "", ErrInvalid
	}
	return scheme + "://" + strings.ToLower(authority) + rest, nil
}

func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// dotSegments reports a "." or ".." path segment, raw or percent-encoded: two URIs that
// resolve alike must not be two resources.
func dotSegments(path string) bool {
	for _, seg := range strings.Split(path, "/") {
		s := strings.ToLower(strings.ReplaceAll(strings.ToLower(seg), "%2e", "."))
		if s == "." || s == ".." {
			return true
		}
	}
	return false
}
