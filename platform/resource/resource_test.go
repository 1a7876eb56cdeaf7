package resource

import (
	"net/url"
	"strings"
	"testing"
)

func TestRegistered(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"https://mcp.example.com", "https://mcp.example.com"},
		{"HTTPS://MCP.Example.com/Files?x=Y", "https://mcp.example.com/Files?x=Y"},
		{"https://mcp.example.com:8443/a/b", "https://mcp.example.com:8443/a/b"},
		{"https://mcp.example.com:443/mcp/", "https://mcp.example.com:443/mcp/"}, // as written, but for case
		{"https://mcp.example.com./mcp", "https://mcp.example.com./mcp"},
		{"https://mcp.example.com/a/../b", "https://mcp.example.com/b"},
		{"https://mcp.example.com/a/%2E%2e/b/./c", "https://mcp.example.com/b/c"},
		{"http://localhost:3000/mcp", "http://localhost:3000/mcp"},
		{"http://[::1]:9/x", "http://[::1]:9/x"},
		{"http://mcp.example.com/", ""},       // plain http off loopback
		{"https://mcp.example.com/#frag", ""}, // RFC 8707: no fragment
		{"https://u:p@mcp.example.com/", ""},  // user info
		{"https://mcp.example.com:99999/", ""}, {"https://./", ""},
		{"/relative", ""}, {"mcp.example.com", ""}, {"urn:x:y", ""}, {"", ""},
		{"https://", ""}, {"https://mcp.example.com/a b", ""}, {"https://mcp.example.com/é", ""},
		{"ftp://mcp.example.com", ""}, {"https://" + strings.Repeat("a", MaxURI), ""},
		{"https://AAAA%800/x", ""}, {"https://mcp%2eexample.com/", ""}, // percent-encoded hosts (found by FuzzCanonical)
	} {
		got, err := Registered(c.in)
		if (err != nil) != (c.want == "") || got != c.want {
			t.Errorf("Registered(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

// SPEC §9b: every spelling of one resource has one canonical form.
func TestCanonical(t *testing.T) {
	for _, c := range []struct {
		want  string
		alike []string
	}{
		{"https://mcp.example.com/mcp", []string{
			"https://mcp.example.com/mcp", "HTTPS://MCP.EXAMPLE.COM/mcp", "https://mcp.example.com:443/mcp",
			"https://mcp.example.com:/mcp", "https://mcp.example.com./mcp", "https://mcp.example.com/mcp/",
			"https://mcp.example.com/x/../mcp", "https://mcp.example.com/./mcp", "https://mcp.example.com/%2E%2e/mcp",
			"https://mcp.example.com/%6dcp", "https://mcp.example.com/mcp?x=1", "https://mcp.example.com:0443/mcp//",
			"https://mcp.example.com//mcp", "https://mcp.example.com///mcp", "https://mcp.example.com/.//mcp", "https://mcp.example.com//x/..//mcp",
		}},
		{"https://mcp.example.com/a/b", []string{"https://mcp.example.com/a//b", "https://mcp.example.com//a/b//", "https://mcp.example.com/a/b//c/.."}},
		{"https://mcp.example.com/", []string{"https://mcp.example.com", "https://mcp.example.com/", "https://mcp.example.com:443", "https://mcp.example.com/a/..", "https://mcp.example.com//"}},
		{"https://mcp.example.com:8443/MCP", []string{"https://mcp.example.com:8443/MCP", "https://Mcp.Example.Com:8443/MCP/"}},
		{"https://mcp.example.com/a%2Fb", []string{"https://mcp.example.com/a%2fb", "https://mcp.example.com/a%2Fb/"}},
		{"http://localhost/mcp", []string{"http://localhost:80/mcp", "http://LOCALHOST./mcp/"}},
		{"http://[::1]:9/x", []string{"http://[::1]:9/x/"}},
	} {
		for _, in := range c.alike {
			if got, err := Canonical(in); err != nil || got != c.want {
				t.Errorf("Canonical(%q) = %q, %v; want %q", in, got, err, c.want)
			}
		}
	}
	for _, in := range []string{"https://mcp.example.com/MCP", "https://mcp.example.com:8443/mcp", "http://127.0.0.1/mcp", "https://mcp.example.com/a/b"} {
		if got, _ := Canonical(in); got == "https://mcp.example.com/mcp" {
			t.Errorf("Canonical(%q) is that of another resource", in)
		}
	}
	for _, in := range []string{"https://./", "https://mcp.example.com/#x", "http://mcp.example.com/", ""} {
		if got, err := Canonical(in); err == nil {
			t.Errorf("Canonical(%q) = %q, want an error", in, got)
		}
	}
}

// FuzzCanonical: an accepted URI is absolute, https or loopback http, has no fragment,
// query or user info; canonicalising again changes nothing, and the registered form of a
// URI has the URI's canonical form.
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{"https://mcp.example.com/x", "HTTP://LOCALHOST:1/", "https://a/%2e%2E/", "https://a#b", "http://[::1]/", "https://a?b#", "https://a.:443/x/", "https://a/%7e/../b",
		"https://a//mcp", "https://a/x//../y", "https://a//%2e%2e//b//", "http://[::1]:9///"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := Canonical(in)
		if err != nil {
			if _, rerr := Registered(in); rerr == nil {
				t.Fatalf("Registered(%q) accepts what Canonical refuses: %v", in, err)
			}
			return
		}
		u, perr := url.Parse(got)
		if perr != nil || !u.IsAbs() || u.Host == "" || u.Fragment != "" || u.RawQuery != "" || u.User != nil || (u.Scheme != "https" && !loopback(u.Hostname())) {
			t.Fatalf("Canonical(%q) = %q", in, got)
		}
		if again, err := Canonical(got); err != nil || again != got {
			t.Fatalf("Canonical is not stable on %q: %q, %v", got, again, err)
		}
		reg, err := Registered(in)
		if err != nil {
			t.Fatalf("Registered(%q) refuses what Canonical accepts: %v", in, err)
		}
		if c, err := Canonical(reg); err != nil || c != got {
			t.Fatalf("Canonical(Registered(%q)) = %q, %v; want %q", in, c, err, got)
		}
		if again, err := Registered(reg); err != nil || again != reg {
			t.Fatalf("Registered is not stable on %q: %q, %v", reg, again, err)
		}
	})
}
