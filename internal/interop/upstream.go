package interop

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Upstream is oidc-provider (testdata/upstream.mjs) running as an upstream identity
// provider for the federation tests (SPEC §20): one per test package, started by the
// first test that asks and stopped by StopUpstream from TestMain. Its login and consent
// pages are oidc-provider's own; accounts, clients and tampering are set per test.
type Upstream struct {
	// Issuer is its URL, http://localhost:<port>: another host than authcore's 127.0.0.1,
	// so a browser keeps the two sites' cookies apart.
	Issuer string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *bytes.Buffer
}

var (
	upstreamOnce sync.Once
	upstream     *Upstream
	upstreamErr  error
)

// StartUpstream is the package's upstream, started on first use.
func StartUpstream(t testing.TB) *Upstream {
	t.Helper()
	dir := Dir(t)
	upstreamOnce.Do(func() { upstream, upstreamErr = startUpstream(dir) })
	if upstreamErr != nil {
		t.Fatalf("starting the upstream provider: %v", upstreamErr)
	}
	return upstream
}

func startUpstream(dir string) (*Upstream, error) {
	cmd := exec.Command("node", filepath.Join(dir, "upstream.mjs"))
	cmd.Dir = dir
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	u := &Upstream{cmd: cmd, stdin: stdin, stderr: &bytes.Buffer{}}
	cmd.Stderr = &lockedWriter{w: u.stderr}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if iss, ok := strings.CutPrefix(sc.Text(), "ISSUER "); ok {
				lines <- iss
			}
		}
		close(lines)
	}()
	select {
	case iss, ok := <-lines:
		if !ok {
			_ = cmd.Wait()
			return nil, fmt.Errorf("upstream.mjs exited: %s", u.stderr.String())
		}
		u.Issuer = iss
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		return nil, fmt.Errorf("upstream.mjs did not start within 30 s: %s", u.stderr.String())
	}
	return u, nil
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// StopUpstream stops the package's upstream, if one started: call it from TestMain.
func StopUpstream() {
	if upstream == nil {
		return
	}
	_ = upstream.stdin.Close() // the script exits when its standard input closes
	done := make(chan struct{})
	go func() { _ = upstream.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = upstream.cmd.Process.Kill()
		<-done
	}
	if os.Getenv("AUTHCORE_TEST_UPSTREAM_LOG") != "" {
		fmt.Fprintln(os.Stderr, upstream.stderr.String())
	}
}

func (u *Upstream) post(t testing.TB, path string, body any) {
	t.Helper()
	b, _ := json.Marshal(body)
	res, err := http.Post(u.Issuer+path, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatalf("upstream %s: %v", path, err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusNoContent {
		msg, _ := io.ReadAll(res.Body)
		t.Fatalf("upstream %s: %d %s", path, res.StatusCode, msg)
	}
}

// Account is a person of the upstream: Login is what they type on its login page (and
// their subject); the claims are what it says of them.
type Account struct {
	Login         string
	Email         string
	EmailVerified bool
	Name          string
	// Username is preferred_username, for claim mappings that read it.
	Username string
}

// AddAccount makes an account the login page accepts (with any password).
func (u *Upstream) AddAccount(t testing.TB, a Account) {
	t.Helper()
	body := map[string]any{"id": a.Login, "email_verified": a.EmailVerified}
	if a.Email != "" {
		body["email"] = a.Email
	}
	if a.Name != "" {
		body["name"] = a.Name
	}
	if a.Username != "" {
		body["preferred_username"] = a.Username
	}
	u.post(t, "/__test/accounts", body)
}

// AddClient registers a confidential client with its redirect URIs.
func (u *Upstream) AddClient(t testing.TB, id, secret string, redirectURIs ...string) {
	t.Helper()
	u.post(t, "/__test/clients", map[string]any{"client_id": id, "client_secret": secret, "redirect_uris": redirectURIs})
}

// Tamper sets what the token endpoint does to the client's answers: "" nothing,
// "alg_none", "other_issuer", "other_issuer_our_key", "wrong_nonce", "expired",
// "other_audience", "unavailable" (503, after answering) or "down" (503 before anything
// happens: the provider is down, SPEC §23's vault tests).
func (u *Upstream) Tamper(t testing.TB, clientID, mode string) {
	t.Helper()
	u.post(t, "/__test/tamper", map[string]any{"client_id": clientID, "mode": mode})
}

// Forget makes the upstream forget clientID's refresh tokens, as when a person revokes
// the client's access at the provider itself.
func (u *Upstream) Forget(t testing.TB, clientID string) {
	t.Helper()
	u.post(t, "/__test/forget", map[string]any{"client_id": clientID})
}

// Counts are what the upstream counted of one client: refresh_token grants and
// revocations it answered with 200, and the client's refresh tokens still live there.
type Counts struct {
	Refresh           int `json:"refresh"`
	Revocation        int `json:"revocation"`
	LiveRefreshTokens int `json:"liveRefreshTokens"`
}

// Counts reads the upstream's counts for clientID (SPEC §23's vault tests).
func (u *Upstream) Counts(t testing.TB, clientID string) Counts {
	t.Helper()
	res, err := http.Get(u.Issuer + "/__test/counts?client_id=" + url.QueryEscape(clientID))
	if err != nil {
		t.Fatalf("upstream counts: %v", err)
	}
	defer res.Body.Close()
	var c Counts
	if err := json.NewDecoder(res.Body).Decode(&c); err != nil {
		t.Fatalf("upstream counts: %v", err)
	}
	return c
}
