// Package browser drives one headless Chromium per test package, for tests of pages and
// of flows a person finishes in a browser (the console, OAuth consent). Elements are found
// by their accessible role and name, as assistive technology sees them.
package browser

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

var (
	once       sync.Once
	browser    context.Context // one Chromium for every test of the package
	browserErr error
	stop       = func() {}
)

// Stop closes the package's browser: call it from TestMain, after the tests ran.
func Stop() { stop() }

// chromium finds the browser: CHROMIUM, else Debian's chromium. The tests skip, saying so,
// only when there is none; .ci/run installs it.
func chromium(t testing.TB) string {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no Chromium installed (Debian: apt-get install chromium; or set CHROMIUM): this package's browser tests did not run")
	return ""
}

// Tab opens a new tab in the shared browser; events go to listen.
func Tab(t testing.TB, listen func(ev any)) context.Context {
	path := chromium(t)
	once.Do(func() {
		dir, err := os.MkdirTemp("", "authcore-chromium-")
		if err != nil {
			browserErr = err
			return
		}
		alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
			chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
			chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(dir), chromedp.WindowSize(1280, 900),
			// This machine's network is closed: no background traffic to fail.
			chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
			chromedp.Flag("disable-sync", true), chromedp.Flag("disable-quic", true))
		ctx, cancel := chromedp.NewContext(alloc)
		if err := chromedp.Do(ctx); err != nil { // starts the browser for ctx's lifetime
			browserErr = err
		}
		browser = ctx
		stop = func() { cancel(); cancelAlloc(); os.RemoveAll(dir) }
	})
	if browserErr != nil {
		t.Fatalf("starting Chromium: %v", browserErr)
	}
	var opts []chromedp.ContextOption
	if listen != nil {
		opts = append(opts, chromedp.WithListener(listen))
	}
	ctx, cancel := chromedp.NewContext(browser, opts...)
	t.Cleanup(cancel)
	// The tab lives as long as the context of its first Run: make that this one, not a
	// step's shorter timeout.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("opening a tab: %v", err)
	}
	return ctx
}

// ByRole finds elements by their computed accessible role and name, as assistive
// technology sees them: the console's names are part of its contract (SPEC §10).
func ByRole(role, name string) chromedp.QueryOption {
	return chromedp.ByFunc(func(ctx context.Context, t *chromedp.Target, n *chromedp.Node) ([]cdp.NodeID, error) {
		res, err := cdp.Call(ctx, t, accessibility.QueryAXTree, accessibility.QueryAXTreeParams{NodeID: n.NodeID, AccessibleName: name, Role: role})
		if err != nil {
			return nil, err
		}
		var ids []cdp.BackendNodeID
		for _, ax := range res.Nodes {
			if !ax.Ignored && ax.BackendDOMNodeID != 0 {
				ids = append(ids, ax.BackendDOMNodeID)
			}
		}
		if len(ids) == 0 {
			return nil, nil
		}
		pushed, err := cdp.Call(ctx, t, dom.PushNodesByBackendIDsToFrontend, dom.PushNodesByBackendIDsToFrontendParams{BackendNodeIDs: ids})
		return pushed.NodeIDs, err
	})
}

func Label(role, name string) string { return role + " " + name }

func Click(role, name string) chromedp.Action[chromedp.Void] {
	return chromedp.Click(Label(role, name), ByRole(role, name), chromedp.NodeVisible)
}

func TypeInto(role, name, text string) chromedp.Action[chromedp.Void] {
	return chromedp.SendKeys(Label(role, name), text, ByRole(role, name), chromedp.NodeVisible)
}

func WaitFor(role, name string) chromedp.Action[chromedp.Void] {
	return chromedp.WaitVisible(Label(role, name), ByRole(role, name))
}

// Page is one tab of a test, with screenshots into the artifacts folder.
type Page struct {
	t   testing.TB
	ctx context.Context
	dir string
	n   int
}

// NewPage is a page of tab ctx (Tab's), for t.
func NewPage(t testing.TB, ctx context.Context) *Page {
	return &Page{t: t, ctx: ctx, dir: artifacts(t)}
}

// Ctx is the page's tab.
func (p *Page) Ctx() context.Context { return p.ctx }

// artifacts is where screenshots go: AUTHCORE_TEST_ARTIFACTS (CI keeps them), else a
// temporary folder named in the log.
func artifacts(t testing.TB) string {
	dir := os.Getenv("AUTHCORE_TEST_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "authcore-console-screenshots")
	}
	dir = filepath.Join(dir, t.Name())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots in %s", dir)
	return dir
}

func (p *Page) Do(steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 15*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		shot, _ := chromedp.Run(p.ctx, chromedp.CaptureScreenshot())
		_ = os.WriteFile(filepath.Join(p.dir, "failure.png"), shot, 0o644)
		body, _ := chromedp.Run(p.ctx, chromedp.Evaluate[string]("document.body.innerText"))
		p.t.Fatalf("%v\npage text:\n%s", err, body)
	}
}

func (p *Page) Eval(js string) string {
	p.t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](js))
	if err != nil {
		p.t.Fatalf("%s: %v", js, err)
	}
	return v
}

// Cookie is the value of the page's cookie name for url, HttpOnly ones included, or "".
func (p *Page) Cookie(url, name string) string {
	p.t.Helper()
	jar, err := chromedp.Run(p.ctx, chromedp.Action[network.GetCookiesResult](func(ctx context.Context, tg *chromedp.Target) (network.GetCookiesResult, error) {
		return cdp.Call(ctx, tg, network.GetCookies, network.GetCookiesParams{URLs: []string{url}})
	}))
	if err != nil {
		p.t.Fatal(err)
	}
	for _, c := range jar.Cookies {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

func (p *Page) Shot(name string) {
	p.t.Helper()
	time.Sleep(100 * time.Millisecond) // let the last render settle
	b, err := chromedp.Run(p.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		p.t.Fatal(err)
	}
	p.n++
	if err := os.WriteFile(filepath.Join(p.dir, fmt.Sprintf("%02d-%s.png", p.n, name)), b, 0o644); err != nil {
		p.t.Fatal(err)
	}
}

// noSideScroll fails when the page is wider than its viewport.
func (p *Page) NoSideScroll(where string) {
	p.t.Helper()
	if v := p.Eval(`String(document.documentElement.scrollWidth <= window.innerWidth)`); v != "true" {
		p.t.Errorf("%s scrolls sideways at %s px: %s px wide", where, p.Eval(`String(window.innerWidth)`), p.Eval(`String(document.documentElement.scrollWidth)`))
	}
}

// The whole flow, as a person would go through it: sign up, create a project, mint an
// agent token and see the API accept it, revoke it and see the API refuse it, mint an s3
// badge, look at sessions, members and the audit trail, sign out and in again. Every

func Text(s string) func(context.Context, *chromedp.Target, *chromedp.Node) ([]cdp.NodeID, error) {
	return func(ctx context.Context, t *chromedp.Target, n *chromedp.Node) ([]cdp.NodeID, error) {
		search, err := cdp.Call(ctx, t, dom.PerformSearch, dom.PerformSearchParams{Query: fmt.Sprintf(`//*[contains(normalize-space(.), %q) and not(*[contains(normalize-space(.), %q)])]`, s, s)})
		if err != nil || search.ResultCount == 0 {
			return nil, err
		}
		defer cdp.Call(ctx, t, dom.DiscardSearchResults, dom.DiscardSearchResultsParams{SearchID: search.SearchID})
		res, err := cdp.Call(ctx, t, dom.GetSearchResults, dom.GetSearchResultsParams{SearchID: search.SearchID, FromIndex: 0, ToIndex: search.ResultCount})
		return res.NodeIDs, err
	}
}
