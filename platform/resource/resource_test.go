package resource

import (
	"net/url"
	"strings"
	"testing"
)

func TestCanonical(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"https://mcp.example.com", "https://mcp.example.com"},
		{"HTTPS://MCP.Example.com/Files?x=Y", "https://mcp.example.com/Files?x=Y"},
		{"https://mcp.example.com:8443/a/b", "https://mcp.example.com:8443/a/b"},
		{"http://localhost:3000/mcp", "http://localhost:3000/mcp"},
		{"http://127.0.0.1:9/x", "http://127.0.0.1:9/x"},
		{"http://[::1]:9/x", "http://[::1]:9/x"},
		{"http://mcp.example.com/", ""},            // plain http off loopback
		{"https://mcp.example.com/#frag", ""},      // RFC 8707: no fragment
		{"https://u:p@mcp.example.com/", ""},       // user info
		{"https://mcp.example.com/a/../b", ""},     // dot-segments
		{"https://mcp.example.com/a/%2E%2e/b", ""}, // encoded dot-segments
		{"https://mcp.example.com/./b", ""},
		{"/relative", ""}, {"mcp.example.com", ""}, {"urn:x:y", ""}, {"", ""},
		{"https://", ""}, {"https://mcp.example.com/a b", ""}, {"https://mcp.example.com/é", ""},
		{"ftp://mcp.example.com", ""}, {"https://" + strings.Repeat("a", MaxURI), ""},
		{"https://AAAA%800/x", ""}, {"https://mcp%2eexample.com/", ""}, // percent-encoded hosts (found by FuzzCanonical)
	} {
		got, err := Canonical(c.in)
		if (err != nil) != (c.want == "") || got != c.want {
			t.Errorf("Canonical(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

// FuzzCanonical: an accepted URI is absolute, https or loopback http, has no fragment or
// user info, and canonicalising it again changes nothing.
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{"https://mcp.example.com/x", "HTTP://LOCALHOST:1/", "https://a/%2e%2E/", "https://a#b", "http://[::1]/", "https://a?b#"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := Canonical(in)
		if err != nil {
			return
		}
		u, perr := url.Parse(got)
		if perr != nil || !u.IsAbs() || u.Host == "" || u.Fragment != "" || u.User != nil || (u.Scheme != "https" && !loopback(u.Hostname())) {
			t.Fatalf("Canonical(%q) = %q", in, got)
		}
		if again, err := Canonical(got); err != nil || again != got {
			t.Fatalf("Canonical is not stable on %q: %q, %v", got, again, err)
		}
	})
}
