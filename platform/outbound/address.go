// Package outbound is where the server calls out to addresses others name — webhook
// deliveries, client metadata documents (SPEC §12, §16) — under one rule against
// server-side request forgery.
package outbound

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Policy decides where the server may call (SPEC §12): https to public addresses; with
// AllowHTTP (AUTHCORE_WEBHOOK_ALLOW_HTTP, development) also plain http and loopback or
// private addresses. Link-local and cloud metadata addresses are refused always. It is
// checked when an address is given and again on the address each call actually dials,
// so a name that resolves elsewhere later (DNS rebinding) gains nothing.
type Policy struct{ AllowHTTP bool }

// ErrAddress is what a dial to an address the policy refuses fails with.
var ErrAddress = errors.New("address not allowed for outbound calls")

// alwaysRefused are ranges no webhook may reach, whatever the setting: the metadata
// services of the clouds and what sits beside them. netip's IsLinkLocalUnicast covers
// 169.254.0.0/16 (AWS, GCP, Azure metadata at 169.254.169.254) and fe80::/10.
var alwaysRefused = []netip.Prefix{
	netip.MustParsePrefix("fd00:ec2::/32"),      // AWS metadata over IPv6 (fd00:ec2::254)
	netip.MustParsePrefix("100.100.100.200/32"), // Alibaba Cloud metadata
	netip.MustParsePrefix("192.0.0.192/32"),     // Oracle Cloud metadata
}

// localRanges are not on the public internet; allowed only in development.
var localRanges = []netip.Prefix{
	netip.MustParsePrefix("100.64.0.0/10"), // carrier-grade NAT
	netip.MustParsePrefix("198.18.0.0/15"), // benchmarking
}

// thisNetwork is 0.0.0.0/8: Linux routes 0.x.y.z to the host itself.
var thisNetwork = netip.MustParsePrefix("0.0.0.0/8")

// IPv6 forms that carry an IPv4 address a packet may end up at: IPv4-compatible (::/96,
// deprecated but still routed by some stacks), NAT64 (64:ff9b::/96 and the local-use
// 64:ff9b:1::/48) and 6to4 (2002::/16, the address in bits 16–48).
var (
	ipv4Compatible = netip.MustParsePrefix("::/96")
	nat64          = netip.MustParsePrefix("64:ff9b::/96")
	nat64Local     = netip.MustParsePrefix("64:ff9b:1::/48")
	sixToFour      = netip.MustParsePrefix("2002::/16")
)

// embeddedIPv4 is the IPv4 address an IPv6 address of those forms reaches.
func embeddedIPv4(a netip.Addr) (netip.Addr, bool) {
	if !a.Is6() {
		return netip.Addr{}, false
	}
	b := a.As16()
	switch {
	case ipv4Compatible.Contains(a) && !a.IsUnspecified() && !a.IsLoopback():
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}), true
	case nat64.Contains(a), nat64Local.Contains(a):
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}), true
	case sixToFour.Contains(a):
		return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}), true
	}
	return netip.Addr{}, false
}

// allowedPort: the web's ports and the unprivileged ones (SPEC §9a), never a system
// service's (SSH, SMTP, a database's admin port below 1024).
func allowedPort(port uint16) bool { return port == 80 || port == 443 || port >= 1024 }

// allowed reports whether a call may connect to a.
func (p Policy) allowed(a netip.Addr) bool {
	a = a.Unmap()
	if v4, ok := embeddedIPv4(a); ok && !p.allowed(v4) {
		return false
	}
	if thisNetwork.Contains(a) {
		return false
	}
	if !a.IsValid() || a.IsUnspecified() || a.IsLinkLocalUnicast() || a.IsMulticast() || a.IsInterfaceLocalMulticast() || a == netip.AddrFrom4([4]byte{255, 255, 255, 255}) {
		return false
	}
	for _, r := range alwaysRefused {
		if r.Contains(a) {
			return false
		}
	}
	if p.AllowHTTP {
		return true
	}
	if a.IsLoopback() || a.IsPrivate() {
		return false
	}
	for _, r := range localRanges {
		if r.Contains(a) {
			return false
		}
	}
	return true
}

// CheckURL validates a URL as given: its scheme, its shape, and every address its host
// resolves to now. The reason is for the validation issue.
func (p Policy) CheckURL(ctx context.Context, raw string) (string, bool) {
	if len(raw) > 2048 {
		return "must be at most 2048 characters", false
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || u.Opaque != "" {
		return "must be an absolute URL", false
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && p.AllowHTTP:
	default:
		return "must be https (plain http only with AUTHCORE_WEBHOOK_ALLOW_HTTP=true)", false
	}
	if u.User != nil {
		return "must not carry credentials", false
	}
	if u.Fragment != "" {
		return "must not have a fragment", false
	}
	if port := u.Port(); port != "" {
		n, err := strconv.ParseUint(port, 10, 16)
		if err != nil || !allowedPort(uint16(n)) {
			return "port must be 80, 443 or 1024–65535", false
		}
	}
	host := u.Hostname()
	if a, err := netip.ParseAddr(host); err == nil {
		if !p.allowed(a) {
			return "must not point at a link-local, metadata, private or loopback address", false
		}
		return "", true
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", strings.TrimSuffix(host, "."))
	if err != nil || len(addrs) == 0 {
		return "host does not resolve", false
	}
	for _, a := range addrs {
		if !p.allowed(a) {
			return "must not resolve to a link-local, metadata, private or loopback address", false
		}
	}
	return "", true
}

// Control refuses, at connect time, an address the policy does not allow: it sees the
// address actually dialled, after resolution. It is a net.Dialer's Control.
func (p Policy) Control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrAddress, address)
	}
	if !p.allowed(ap.Addr()) || !allowedPort(ap.Port()) {
		return fmt.Errorf("%w: %s", ErrAddress, ap)
	}
	return nil
}

// Transport is an HTTP transport that dials only what p allows, through no proxy (a proxy
// would dial for us, out of the policy's sight). roots, when not nil, replace the system's
// certificate authorities (AUTHCORE_OUTBOUND_CA_FILE).
func (p Policy) Transport(timeout time.Duration, roots *x509.CertPool) *http.Transport {
	dialer := &net.Dialer{Timeout: 5 * time.Second, Control: p.Control}
	t := &http.Transport{
		DialContext:           dialer.DialContext,
		Proxy:                 nil,
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: timeout,
		MaxIdleConnsPerHost:   2,
		IdleConnTimeout:       30 * time.Second,
	}
	if roots != nil {
		t.TLSClientConfig = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	}
	return t
}

// Roots reads the PEM certificate authorities in file, added to the system's; nil for
// no file.
func Roots(file string) (*x509.CertPool, error) {
	if file == "" {
		return nil, nil
	}
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("AUTHCORE_OUTBOUND_CA_FILE: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("AUTHCORE_OUTBOUND_CA_FILE: %s holds no PEM certificate", file)
	}
	return pool, nil
}
