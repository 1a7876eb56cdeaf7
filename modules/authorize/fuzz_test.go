package authorize

import (
	"net/url"
	"strings"
	"testing"
)

// FuzzRedirectMatching holds the redirect rule to its statement: a redirect URI is
// allowed only when it is one the client registered, or a loopback http one that differs
// from a registered one in its port alone (RFC 8252 §7.3). Nothing else ever passes, so
// the authorization endpoint can never be made to send a code elsewhere.
func FuzzRedirectMatching(f *testing.F) {
	f.Add("http://127.0.0.1/cb", "http://127.0.0.1:5000/cb")
	f.Add("http://[::1]/cb", "http://[::1]:1/cb")
	f.Add("https://app.example/cb", "https://app.example/cb")
	f.Add("http://127.0.0.1/cb", "http://127.0.0.1:5000/cb?x=1")
	f.Add("http://127.0.0.1/cb", "http://127.0.0.1.evil.example:5000/cb")
	f.Add("http://127.0.0.1/cb", "http://user@127.0.0.1:5000/cb")
	f.Add("com.example.app:/oauth", "com.example.app:/oauth")
	f.Fuzz(func(t *testing.T, registered, presented string) {
		_ = checkRedirectURIs([]string{registered, presented}, "")
		c := client{RedirectURIs: []string{registered}}
		if !c.redirectAllowed(presented) || presented == registered {
			return
		}
		p, err1 := url.Parse(presented)
		r, err2 := url.Parse(registered)
		if err1 != nil || err2 != nil {
			t.Fatalf("%q allowed for %q, and one of them does not parse", presented, registered)
		}
		if p.Scheme != "http" || (p.Hostname() != "127.0.0.1" && p.Hostname() != "::1") || p.Hostname() != r.Hostname() ||
			p.Path != r.Path || p.RawQuery != r.RawQuery || p.User != nil || strings.Contains(presented, "#") {
			t.Fatalf("%q allowed for %q", presented, registered)
		}
	})
}
