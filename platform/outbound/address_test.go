package outbound

import (
	"context"
	"crypto/tls"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var (
	strict = Policy{}
	dev    = Policy{AllowHTTP: true}
)

// Every address class of SPEC §9a and §12, under both settings: metadata and link-local
// are refused always, loopback and private only outside development, the public internet
// never; IPv6 forms that carry an IPv4 address are judged by that address.
func TestAllowed(t *testing.T) {
	for _, tc := range []struct {
		addr          string
		strict, devel bool
	}{
		{"93.184.215.14", true, true},
		{"2606:2800:21f:cb07:6820:80da:af6b:8b2c", true, true},
		{"127.0.0.1", false, true},
		{"::1", false, true},
		{"10.1.2.3", false, true},
		{"172.16.0.1", false, true},
		{"192.168.1.1", false, true},
		{"fd12:3456::1", false, true},
		{"100.64.0.1", false, true},    // carrier-grade NAT
		{"198.18.0.1", false, true},    // benchmarking
		{"100.63.255.255", true, true}, // just below carrier-grade NAT
		{"169.254.169.254", false, false},
		{"fe80::1", false, false},
		{"fd00:ec2::254", false, false},
		{"100.100.100.200", false, false},
		{"192.0.0.192", false, false},
		{"0.0.0.0", false, false},
		{"0.1.2.3", false, false}, // this network: the host itself on Linux
		{"::", false, false},
		{"224.0.0.1", false, false},
		{"ff02::1", false, false},
		{"255.255.255.255", false, false},
		{"::ffff:169.254.169.254", false, false}, // IPv4-mapped
		{"::ffff:127.0.0.1", false, true},
		{"::ffff:93.184.215.14", true, true},
		{"64:ff9b::a9fe:a9fe", false, false}, // NAT64 of 169.254.169.254
		{"64:ff9b::7f00:1", false, true},     // NAT64 of 127.0.0.1
		{"64:ff9b:1::a9fe:a9fe", false, false},
		{"64:ff9b::5db8:d70e", true, true},  // NAT64 of 93.184.215.14
		{"2002:a9fe:a9fe::1", false, false}, // 6to4 of 169.254.169.254
		{"2002:0a00:0001::1", false, true},  // 6to4 of 10.0.0.1
		{"::a9fe:a9fe", false, false},       // IPv4-compatible 169.254.169.254
		{"::7f00:1", false, true},           // IPv4-compatible 127.0.0.1
	} {
		a := netip.MustParseAddr(tc.addr)
		if got := strict.allowed(a); got != tc.strict {
			t.Errorf("strict: %s allowed %v, want %v", tc.addr, got, tc.strict)
		}
		if got := dev.allowed(a); got != tc.devel {
			t.Errorf("development: %s allowed %v, want %v", tc.addr, got, tc.devel)
		}
	}
	if strict.allowed(netip.Addr{}) || dev.allowed(netip.Addr{}) {
		t.Error("the zero address is allowed")
	}
}

// CheckURL answers the reason a webhook or client URL is refused, one rule each, at its
// boundaries.
func TestCheckURL(t *testing.T) {
	ctx := context.Background()
	long := "https://93.184.215.14/" + strings.Repeat("a", 2048-len("https://93.184.215.14/"))
	for _, tc := range []struct {
		policy Policy
		url    string
		reason string // "" when allowed
	}{
		{strict, "https://93.184.215.14/hook", ""},
		{strict, "https://93.184.215.14:443/hook", ""},
		{strict, "https://93.184.215.14:80/hook", ""},
		{strict, "https://93.184.215.14:1024/hook", ""},
		{strict, "https://93.184.215.14:65535/hook", ""},
		{strict, "https://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/hook", ""},
		{strict, long, ""},
		{strict, long + "a", "at most 2048"},
		{strict, "", "absolute URL"},
		{strict, "/relative", "absolute URL"},
		{strict, "https:opaque", "absolute URL"},
		{strict, "https://", "absolute URL"},
		{strict, "%zz", "absolute URL"},
		{strict, "http://93.184.215.14/hook", "must be https"},
		{dev, "http://93.184.215.14/hook", ""},
		{dev, "ftp://93.184.215.14/hook", "must be https"},
		{strict, "https://user:pw@93.184.215.14/hook", "credentials"},
		{strict, "https://93.184.215.14/hook#frag", "fragment"},
		{strict, "https://93.184.215.14:22/hook", "port"},
		{strict, "https://93.184.215.14:79/hook", "port"},
		{strict, "https://93.184.215.14:1023/hook", "port"},
		{strict, "https://93.184.215.14:65536/hook", "port"},
		{strict, "https://93.184.215.14:x/hook", "absolute URL"},
		{strict, "https://127.0.0.1/hook", "loopback"},
		{dev, "https://127.0.0.1/hook", ""},
		{dev, "https://169.254.169.254/latest/meta-data", "metadata"},
		{strict, "https://[::ffff:169.254.169.254]/", "metadata"},
		{strict, "https://localhost/hook", "resolve to"},
		{dev, "https://localhost/hook", ""},
		{strict, "https://nothing-here.invalid/hook", "does not resolve"},
	} {
		reason, ok := tc.policy.CheckURL(ctx, tc.url)
		if ok != (tc.reason == "") || !strings.Contains(reason, tc.reason) {
			t.Errorf("AllowHTTP=%v %q: (%q, %v), want %q", tc.policy.AllowHTTP, tc.url, reason, ok, tc.reason)
		}
	}
}

// The rule holds on the address actually dialled, whatever a URL's host said when it was
// checked (DNS rebinding): a name resolving to loopback is refused at connect time, and so
// is a system port.
func TestTransportDialsOnlyWhatThePolicyAllows(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }))
	defer srv.Close()
	_, port, _ := strings.Cut(strings.TrimPrefix(srv.URL, "http://"), ":")
	for _, target := range []string{srv.URL, "http://localhost:" + port} {
		c := &http.Client{Transport: strict.Transport(time.Second, nil)}
		_, err := c.Get(target)
		if !errors.Is(err, ErrAddress) {
			t.Errorf("strict: %s: %v, want ErrAddress", target, err)
		}
		c = &http.Client{Transport: dev.Transport(time.Second, nil)}
		res, err := c.Get(target)
		if err != nil {
			t.Fatalf("development: %s: %v", target, err)
		}
		res.Body.Close()
	}
	for _, addr := range []string{"127.0.0.1:22", "169.254.169.254:80", "[fe80::1]:443", "not an address"} {
		if err := dev.Control("tcp", addr, nil); !errors.Is(err, ErrAddress) {
			t.Errorf("development: Control(%s) = %v", addr, err)
		}
	}
	if err := strict.Control("tcp4", "93.184.215.14:443", nil); err != nil {
		t.Errorf("Control of a public address: %v", err)
	}
}

// AUTHCORE_OUTBOUND_CA_FILE adds authorities to the system's: a server signed by one is
// trusted with the file and not without; a file that is missing or holds no certificate
// is an error naming the setting.
func TestRoots(t *testing.T) {
	if pool, err := Roots(""); pool != nil || err != nil {
		t.Fatalf("no file: %v %v", pool, err)
	}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }))
	defer srv.Close()
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	roots, err := Roots(ca)
	if err != nil {
		t.Fatal(err)
	}
	res, err := (&http.Client{Transport: dev.Transport(time.Second, roots)}).Get(srv.URL)
	if err != nil {
		t.Fatalf("with the file: %v", err)
	}
	res.Body.Close()
	if tr := dev.Transport(time.Second, roots); tr.TLSClientConfig.MinVersion != tls.VersionTLS12 {
		t.Errorf("MinVersion %x", tr.TLSClientConfig.MinVersion)
	}
	if _, err := (&http.Client{Transport: dev.Transport(time.Second, nil)}).Get(srv.URL); err == nil {
		t.Fatal("without the file the test server's certificate was trusted")
	}
	junk := filepath.Join(dir, "junk.pem")
	_ = os.WriteFile(junk, []byte("not a certificate"), 0o600)
	for _, f := range []string{junk, filepath.Join(dir, "missing.pem")} {
		if _, err := Roots(f); err == nil || !strings.Contains(err.Error(), "AUTHCORE_OUTBOUND_CA_FILE") {
			t.Errorf("%s: %v", f, err)
		}
	}
}
