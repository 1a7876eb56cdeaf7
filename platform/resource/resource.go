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
	"strconv"
	"strings"
)

// Resource is a registered resource server.
type Resource struct {
	ID        string
	ProjectID string
	// URI is the resource as its project registered it (see Registered): tokens carry it as
	// their aud, so resource servers compare what they registered, exactly.
	URI  string
	Name string
	// Scopes, when not empty, bound what tokens for this resource may carry.
	Scopes []string
}

// Registry finds the resource registered under a URI.
type Registry interface {
	// Lookup returns the resource registered under uri, which must be in the form
	// Canonical returns (callers canonicalise the URIs a request names once), and false
	// when none is. Every spelling of a URI finds the one registered.
	Lookup(ctx context.Context, uri string) (Resource, bool, error)
}

// MaxURI bounds a resource URI: it is a JWT audience, carried by every token.
const MaxURI = 2048

// ErrInvalid is what Canonical and Registered return for a URI that cannot name a resource.
var ErrInvalid = errors.New("a resource is an absolute https URI (http only on a loopback host), without fragment or user info")

// parts is a resource URI checked and split: scheme and authority lower-cased, the path
// and query as written.
type parts struct {
	scheme, host, port, path, query string
	hasQuery                        bool
}

// parse checks a resource URI: absolute, https (http only for loopback hosts, for local
// development), without a fragment (RFC 8707), user info, a percent-encoded host or
// characters outside printable ASCII.
func parse(raw string) (parts, error) {
	if raw == "" || len(raw) > MaxURI || strings.ContainsRune(raw, '#') {
		return parts{}, ErrInvalid
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] <= ' ' || raw[i] >= 0x7f {
			return parts{}, ErrInvalid
		}
	}
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" || u.User != nil || u.Host == "" || u.Hostname() == "" {
		return parts{}, ErrInvalid
	}
	p := parts{scheme: strings.ToLower(u.Scheme), host: strings.ToLower(u.Hostname()), port: u.Port()}
	if strings.Trim(p.host, ".") == "" {
		return parts{}, ErrInvalid
	}
	switch {
	case p.scheme == "https":
	case p.scheme == "http" && loopback(strings.TrimSuffix(p.host, ".")):
	default:
		return parts{}, ErrInvalid
	}
	// The authority as written (url.Parse would have unescaped it); everything after it
	// is kept byte for byte as given.
	authority, rest := raw[len(u.Scheme)+3:], ""
	if i := strings.IndexAny(authority, "/?"); i >= 0 {
		authority, rest = authority[:i], authority[i:]
	}
	if strings.ContainsRune(authority, '%') { // a percent-encoded host: nobody needs one
		return parts{}, ErrInvalid
	}
	if strings.HasSuffix(authority, ":") { // an empty port is the default one (RFC 3986 §6.2.3)
		p.port = ""
	}
	p.path, p.query, p.hasQuery = strings.Cut(rest, "?")
	if p.port != "" {
		n, err := strconv.Atoi(p.port)
		if err != nil || n < 1 || n > 65535 {
			return parts{}, ErrInvalid
		}
	}
	return p, nil
}

func (p parts) authority(port string) string {
	host := p.host
	if strings.Contains(host, ":") { // an IPv6 literal
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return host
}

// Registered checks a resource URI and returns the form it is registered under and its
// tokens carry: scheme and host lower-cased, dot-segments resolved, everything else — the
// port, a trailing slash, the query — as the project wrote it (MCP: no trailing slash
// unless it matters; the resource server compares aud with what its operator wrote).
func Registered(raw string) (string, error) {
	p, err := parse(raw)
	if err != nil {
		return "", err
	}
	out := p.scheme + "://" + p.authority(p.port) + removeDotSegments(p.path)
	if p.hasQuery {
		out += "?" + p.query
	}
	return out, nil
}

// Canonical checks a resource URI and returns the form resources are compared in, for
// uniqueness across projects and for lookups (SPEC §9b): scheme and host lower-cased, the
// host's trailing dot and the scheme's default port removed, percent-encoding normalised
// (RFC 3986 §6.2.2), dot-segments resolved, empty segments collapsed and trailing slashes
// removed (so …/mcp, …//mcp and …/mcp/ are one resource: servers and proxies commonly
// merge slashes, so they reach one server) with an empty path as /, and no query. Two
// spellings a client could mean alike are one resource, held by one project at most.
func Canonical(raw string) (string, error) {
	p, err := parse(raw)
	if err != nil {
		return "", err
	}
	p.host = strings.TrimRight(p.host, ".")
	port := ""
	if p.port != "" {
		n, _ := strconv.Atoi(p.port) // parse checked it
		if !(p.scheme == "https" && n == 443) && !(p.scheme == "http" && n == 80) {
			port = strconv.Itoa(n)
		}
	}
	// Empty segments collapse after the dot-segments resolve, as the registered form
	// resolves them (a/b//../c is a/b/c there), so a URI and its registered form agree.
	path := strings.TrimRight(collapseSlashes(removeDotSegments(normalizeEscapes(p.path))), "/")
	if path == "" {
		path = "/"
	}
	return p.scheme + "://" + p.authority(port) + path, nil
}

// collapseSlashes turns every run of slashes into one.
func collapseSlashes(path string) string {
	for strings.Contains(path, "//") {
		path = strings.ReplaceAll(path, "//", "/")
	}
	return path
}

func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// normalizeEscapes decodes percent-encoded unreserved characters and upper-cases the hex
// digits of the others (RFC 3986 §6.2.2.1-2): %7e and ~ are one character.
func normalizeEscapes(path string) string {
	var b strings.Builder
	for i := 0; i < len(path); i++ {
		if path[i] == '%' && i+2 < len(path) && ishex(path[i+1]) && ishex(path[i+2]) {
			c := unhex(path[i+1])<<4 | unhex(path[i+2])
			if unreserved(c) {
				b.WriteByte(c)
			} else {
				b.WriteString(strings.ToUpper(path[i : i+3]))
			}
			i += 2
			continue
		}
		b.WriteByte(path[i])
	}
	return b.String()
}

func ishex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

func unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

// removeDotSegments resolves "." and ".." segments, raw or percent-encoded, as RFC 3986
// §5.2.4 does: two URIs that resolve alike must not be two resources. Written here since
// net/url resolves only references, and only unescaped dots.
func removeDotSegments(path string) string {
	if path == "" {
		return ""
	}
	dots := func(seg string) string { return strings.ReplaceAll(strings.ToLower(seg), "%2e", ".") }
	segs := strings.Split(path, "/")
	out := make([]string, 0, len(segs))
	for i, seg := range segs {
		last := i == len(segs)-1
		switch dots(seg) {
		case ".":
			if last {
				out = append(out, "")
			}
		case "..":
			if len(out) > 1 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, seg)
		}
	}
	res := strings.Join(out, "/")
	if !strings.HasPrefix(res, "/") {
		res = "/" + res
	}
	return res
}
