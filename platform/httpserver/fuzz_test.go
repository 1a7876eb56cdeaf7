package httpserver

import (
	"net/netip"
	"strings"
	"testing"
)

// FuzzQueryLimit: any ?limit= text gives a limit within 1..max, the default when absent.
func FuzzQueryLimit(f *testing.F) {
	for _, s := range []string{"", "50", "0", "-5", "1e9", "Infinity", "NaN", "12.9", "abc", "0x10", " 7"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got := QueryLimit(raw, 50, 500)
		if got < 1 || got > 500 || (raw == "" && got != 50) {
			t.Fatalf("QueryLimit(%q) = %d", raw, got)
		}
	})
}

// FuzzBearerToken: a token is returned only from a header that starts with "Bearer ",
// trimmed, and never longer than the header.
func FuzzBearerToken(f *testing.F) {
	for _, s := range []string{"Bearer abc", "bearer abc", "Bearer ", "Bearer   x  ", "Basic x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		tok := BearerToken(h)
		if tok != "" && (len(h) < 7 || h[:7] != "Bearer " || len(tok) > len(h)-7) {
			t.Fatalf("BearerToken(%q) = %q", h, tok)
		}
	})
}

// FuzzClientFromForwarded: the client address is the peer, or an address that stood in
// the X-Forwarded-For chain; never a trusted proxy unless every hop was one, and never
// anything from the header when the peer is not trusted.
func FuzzClientFromForwarded(f *testing.F) {
	for _, s := range [][2]string{
		{"10.0.0.2", "203.0.113.9"}, {"10.0.0.2", "1.1.1.1, 203.0.113.9"}, {"10.0.0.2", "203.0.113.9, 10.0.0.7"},
		{"198.51.100.1", "1.2.3.4"}, {"10.0.0.2", "garbage, 203.0.113.9"}, {"10.0.0.2", ""}, {"10.0.0.2", "::ffff:10.0.0.9"},
		{"::1", "2001:db8::1"}, {"10.0.0.2", ",,,"},
	} {
		f.Add(s[0], s[1])
	}
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	f.Fuzz(func(t *testing.T, peer, xff string) {
		got := clientFromForwarded(peer, []byte(xff), trusted)
		p, err := netip.ParseAddr(peer)
		if err != nil || !isTrusted(p, trusted) {
			if got != peer {
				t.Fatalf("untrusted peer %q: got %q from the header %q", peer, got, xff)
			}
			return
		}
		a, err := netip.ParseAddr(got)
		if err != nil {
			t.Fatalf("%q, %q: %q is not an address", peer, xff, got)
		}
		inChain := false
		for _, e := range strings.Split(xff, ",") {
			if h, err := netip.ParseAddr(strings.TrimSpace(e)); err == nil && h.Unmap() == a {
				inChain = true
			}
		}
		if a != p.Unmap() && !inChain {
			t.Fatalf("%q, %q: %q is neither the peer nor in the chain", peer, xff, got)
		}
	})
}

func TestClientFromForwarded(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	for _, c := range []struct{ peer, xff, want string }{
		{"203.0.113.5", "1.2.3.4", "203.0.113.5"},            // not a proxy: the header is the client's word
		{"10.0.0.2", "203.0.113.9", "203.0.113.9"},           // one trusted proxy
		{"10.0.0.2", "1.2.3.4, 203.0.113.9", "203.0.113.9"},  // a forged leftmost entry is ignored
		{"10.0.0.2", "203.0.113.9, 10.0.0.7", "203.0.113.9"}, // two proxies
		{"10.0.0.2", "203.0.113.9,garbage", "10.0.0.2"},      // a malformed hop ends the walk
		{"10.0.0.2", "", "10.0.0.2"},                         // no header: the proxy itself
		{"10.0.0.2", "10.0.0.3, 10.0.0.4", "10.0.0.3"},       // proxies only: the farthest
		{"::ffff:10.0.0.2", "2001:db8::7", "2001:db8::7"},    // IPv4-mapped peer
	} {
		if got := clientFromForwarded(c.peer, []byte(c.xff), trusted); got != c.want {
			t.Errorf("peer %s, X-Forwarded-For %q: got %s, want %s", c.peer, c.xff, got, c.want)
		}
	}
}
