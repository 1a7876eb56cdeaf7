package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// addressPolicy decides where webhooks may go (SPEC §12): https to public addresses; with
// AUTHCORE_WEBHOOK_ALLOW_HTTP (development) also plain http and loopback or private
// addresses. Link-local and cloud metadata addresses are refused always. It is checked
// when a webhook is created and again on the address each delivery actually dials, so a
// name that resolves elsewhere later (DNS rebinding) gains nothing.
type addressPolicy struct{ allowHTTP bool }

var errAddress = errors.New("address not allowed for webhooks")

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

// allowed reports whether a delivery may connect to a.
func (p addressPolicy) allowed(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || a.IsUnspecified() || a.IsLinkLocalUnicast() || a.IsMulticast() || a.IsInterfaceLocalMulticast() || a == netip.AddrFrom4([4]byte{255, 255, 255, 255}) {
		return false
	}
	for _, r := range alwaysRefused {
		if r.Contains(a) {
			return false
		}
	}
	if p.allowHTTP {
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

// checkURL validates a webhook URL as created: its scheme, its shape, and every address
// its host resolves to now. The reason is for the validation issue.
func (p addressPolicy) checkURL(ctx context.Context, raw string) (string, bool) {
	if len(raw) > 2048 {
		return "must be at most 2048 characters", false
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || u.Opaque != "" {
		return "must be an absolute URL", false
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && p.allowHTTP:
	default:
		return "must be https (plain http only with AUTHCORE_WEBHOOK_ALLOW_HTTP=true)", false
	}
	if u.User != nil {
		return "must not carry credentials", false
	}
	if u.Fragment != "" {
		return "must not have a fragment", false
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

// control refuses, at connect time, an address the policy does not allow: it sees the
// address actually dialled, after resolution.
func (p addressPolicy) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %s", errAddress, address)
	}
	if !p.allowed(ap.Addr()) {
		return fmt.Errorf("%w: %s", errAddress, ap.Addr())
	}
	return nil
}
