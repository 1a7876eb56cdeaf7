package interop

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// SAMLIdP is npm's saml-idp (a stock SAML 2.0 identity provider for testing service
// providers, on Node's samlp and xml-crypto: another ecosystem than crewjam/saml's) run
// on loopback for SPEC §27's tests: one per test package, started by the first test that
// asks and stopped by StopSAMLIdP from TestMain. It signs assertions with RSA-SHA256 and
// a SHA-256 digest, reads the SP's (signed) AuthnRequest from the HTTP-Redirect binding,
// and shows its own sign-in page, where a person sets who they are.
type SAMLIdP struct {
	// URL is its base, http://localhost:<port>; MetadataURL its metadata.
	URL, MetadataURL string
	cmd              *exec.Cmd
	stderr           *bytes.Buffer
	keys             string // the folder of its key pair
}

var (
	samlIdPOnce sync.Once
	samlIdP     *SAMLIdP
	samlIdPErr  error
)

// StartSAMLIdP is the package's saml-idp, started on first use.
func StartSAMLIdP(t testing.TB) *SAMLIdP {
	t.Helper()
	dir := Dir(t)
	samlIdPOnce.Do(func() { samlIdP, samlIdPErr = startSAMLIdP(dir) })
	if samlIdPErr != nil {
		t.Fatalf("starting saml-idp: %v", samlIdPErr)
	}
	return samlIdP
}

func startSAMLIdP(dir string) (*SAMLIdP, error) {
	keys, err := os.MkdirTemp("", "authcore-saml-idp-")
	if err != nil {
		return nil, err
	}
	if err := writeKeyPair(keys); err != nil {
		return nil, err
	}
	// saml-idp takes a port, not 0: ask the kernel for a free one and hand it over.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	base := "http://localhost:" + strconv.Itoa(port)
	// The SP is set per test through /settings (saml-idp's own settings form): until
	// then, an audience and ACS that answer nothing.
	cmd := exec.Command("node", filepath.Join(dir, "node_modules", "saml-idp", "bin", "run.js"),
		"--host", "localhost", "--port", strconv.Itoa(port),
		"--cert", filepath.Join(keys, "cert.pem"), "--key", filepath.Join(keys, "key.pem"),
		"--issuer", base+"/metadata", "--acsUrl", "http://localhost:9/unset", "--audience", "urn:authcore:unset",
		"--configFile", filepath.Join(dir, "node_modules", "saml-idp", "config.js"))
	cmd.Dir = dir
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p := &SAMLIdP{URL: base, MetadataURL: base + "/metadata", cmd: cmd, stderr: &bytes.Buffer{}, keys: keys}
	cmd.Stderr = &lockedWriter{w: p.stderr}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		said := false
		for sc.Scan() {
			if !said && strings.Contains(sc.Text(), "IdP server ready") {
				said = true
				ready <- true
			}
			if os.Getenv("AUTHCORE_TEST_UPSTREAM_LOG") != "" {
				fmt.Fprintln(os.Stderr, "saml-idp:", sc.Text())
			}
		}
		close(ready)
	}()
	select {
	case ok := <-ready:
		if !ok {
			_ = cmd.Wait()
			return nil, fmt.Errorf("saml-idp exited: %s", p.stderr.String())
		}
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		return nil, fmt.Errorf("saml-idp did not start within 30 s: %s", p.stderr.String())
	}
	return p, nil
}

func writeKeyPair(dir string) error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "saml-idp on loopback"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(7 * 24 * time.Hour), KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return err
	}
	pk, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "cert.pem"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "key.pem"), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pk}), 0o600)
}

// Serve points the IdP at one SP: its entity ID (the audience) and ACS. saml-idp serves
// one SP at a time, so tests that use it do so one after the other.
func (p *SAMLIdP) Serve(t testing.TB, spEntityID, acs string) {
	t.Helper()
	form := url.Values{"audience": {spEntityID}, "serviceProviderId": {spEntityID}, "acsUrl": {acs}, "recipient": {acs}, "destination": {acs}}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.PostForm(p.URL+"/settings", form)
	if err != nil {
		t.Fatalf("saml-idp settings: %v", err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusFound {
		t.Fatalf("saml-idp settings: %d", res.StatusCode)
	}
}

// StopSAMLIdP stops the package's saml-idp, if one started: call it from TestMain.
func StopSAMLIdP() {
	if samlIdP == nil {
		return
	}
	_ = samlIdP.cmd.Process.Kill()
	_ = samlIdP.cmd.Wait()
	os.RemoveAll(samlIdP.keys)
	if os.Getenv("AUTHCORE_TEST_UPSTREAM_LOG") != "" {
		fmt.Fprintln(os.Stderr, samlIdP.stderr.String())
	}
}
