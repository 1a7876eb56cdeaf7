package app_test

import (
	"bytes"
	"cmp"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/authcore/authcore/internal/apptest"
)

// Every page the server renders carries the same security headers: no framing, no
// sniffing, no Referer, a policy that forbids framing. Held over HTTP, page by page, so a
// page added with its own headers (or none) shows here.
func TestEveryPageCarriesTheSameSecurityHeaders(t *testing.T) {
	a := apptest.Start(t, apptest.Stores(t)[0])
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	pages := []string{
		"/console", "/console/reset", "/console/verify", "/console/invite", "/console/authorize",
		"/console/signin-link", "/console/domain",
		"/oauth/authorize?client_id=no-such-client", // the authorization endpoint's error page
		"/oauth/logout", // the signed-out page
		"/v1/auth-core/providers/no-such-provider/start",           // a provider sign-in that cannot start
		"/v1/auth-core/providers/no-such-provider/callback?code=x", // nor finish
	}
	want := map[string]string{"X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"}
	for _, p := range pages {
		req, _ := http.NewRequest(http.MethodGet, a.Base+p, nil)
		req.Header.Set("Accept", "text/html")
		res, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
			t.Errorf("%s: %d %s, not a page", p, res.StatusCode, res.Header.Get("Content-Type"))
			continue
		}
		for h, v := range want {
			if got := res.Header.Get(h); got != v {
				t.Errorf("%s: %s %q, want %q", p, h, got, v)
			}
		}
		if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Errorf("%s: Content-Security-Policy %q", p, csp)
		}
	}
}

// The headers are written once, in platform/httpserver: no other production file names
// them, so the pages cannot drift apart again.
func TestSecurityHeadersWrittenOnce(t *testing.T) {
	header := regexp.MustCompile(`"(Content-Security-Policy|X-Frame-Options|X-Content-Type-Options|Referrer-Policy)"|HeaderContentSecurityPolicy|HeaderXFrameOptions|HeaderReferrerPolicy`)
	owner := filepath.Join("platform", "httpserver", "page.go")
	for _, f := range productionGo(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if header.Match(b) && !strings.HasSuffix(f, owner) {
			t.Errorf("%s sets a security header itself; use httpserver.SecurePage", f)
		}
	}
}

// productionGo lists the hand-written production Go files: modules, plugins, platform and
// cmd, without tests and generated code.
func productionGo(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, dir := range []string{"modules", "plugins", "platform", "cmd"} {
		err := filepath.WalkDir(filepath.Join("..", "..", "..", dir), func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(files) < 100 {
		t.Fatalf("found %d production files", len(files))
	}
	return files
}

// ent/schema owns the id prefix of every entity (tok_, usr_, cli_, …), and a credential
// kind's own folder the prefix of its table (lifecycle.Declare: bdg_, dk_): a production
// file elsewhere that spells one as a literal would let the prefix and its checks drift
// apart.
func TestIDPrefixesSpelledOnce(t *testing.T) {
	declared := regexp.MustCompile(`"([a-z]{2,4}_)"`)
	owners := map[string]string{} // prefix → the file that owns it ("" for ent/schema)
	schemas, _ := filepath.Glob("../../../ent/schema/*.go")
	for _, f := range schemas {
		b, _ := os.ReadFile(f)
		for _, m := range regexp.MustCompile(`Prefix(?:: *| *= *)"([a-z]{2,4}_)"|[A-Za-z]+IDPrefix *= *"([a-z]{2,4}_)"`).FindAllSubmatch(b, -1) {
			owners[string(m[1])+string(m[2])] = ""
		}
	}
	files := append(productionGo(t), "../../../internal/template/deploykey/deploykey.go")
	kinds := 0
	for _, f := range files {
		b, _ := os.ReadFile(f)
		if bytes.Contains(b, []byte("lifecycle.Declare(")) {
			for _, m := range regexp.MustCompile(`IDPrefix: *"([a-z]{2,4}_)"`).FindAllSubmatch(b, -1) {
				owners[string(m[1])] = f
				kinds++
			}
		}
	}
	if _, ok := owners["tok_"]; !ok || len(owners) < 30 || kinds < 2 {
		t.Fatalf("found %d prefixes, %d in kinds' folders: %v", len(owners), kinds, owners)
	}
	for _, f := range files {
		b, _ := os.ReadFile(f)
		for _, m := range declared.FindAllSubmatch(b, -1) {
			if owner, ok := owners[string(m[1])]; ok && owner != f {
				t.Errorf("%s spells the id prefix %q; use its owner's constant (%s)", f, m[1], cmp.Or(owner, "ent/schema"))
			}
		}
	}
}

// Handlers do not log: a route handler returns its error to the one renderer in
// platform/httpserver, which logs what must be logged once (and httpserver.Page for an
// error a person sees as a page). Any function of a module or plugin that takes a
// *fiber.Ctx and calls a logger fails here.
func TestHandlersDoNotLog(t *testing.T) {
	levels := map[string]bool{"Debug": true, "Info": true, "Warn": true, "Error": true, "Log": true, "LogAttrs": true,
		"DebugContext": true, "InfoContext": true, "WarnContext": true, "ErrorContext": true}
	takesCtx := func(ft *ast.FuncType) bool {
		for _, f := range ft.Params.List {
			if star, ok := f.Type.(*ast.StarExpr); ok {
				if sel, ok := star.X.(*ast.SelectorExpr); ok && sel.Sel.Name == "Ctx" {
					return true
				}
			}
		}
		return false
	}
	checked := 0
	for _, f := range productionGo(t) {
		if !strings.Contains(f, "/modules/") && !strings.Contains(f, "/plugins/") {
			continue
		}
		fset := token.NewFileSet()
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			var ft *ast.FuncType
			var body *ast.BlockStmt
			switch fn := n.(type) {
			case *ast.FuncDecl:
				ft, body = fn.Type, fn.Body
			case *ast.FuncLit:
				ft, body = fn.Type, fn.Body
			default:
				return true
			}
			if body == nil || !takesCtx(ft) {
				return true
			}
			checked++
			ast.Inspect(body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok || !levels[sel.Sel.Name] || len(call.Args) == 0 {
					return true
				}
				var recv string
				switch x := sel.X.(type) {
				case *ast.Ident:
					recv = x.Name
				case *ast.SelectorExpr:
					recv = x.Sel.Name
				}
				if strings.Contains(strings.ToLower(recv), "log") {
					t.Errorf("%s: a handler logs (%s.%s); return the error to the renderer", fset.Position(call.Pos()), recv, sel.Sel.Name)
				}
				return true
			})
			return true
		})
	}
	if checked < 100 {
		t.Fatalf("found %d handlers", checked)
	}
}

// One function normalises addresses (platform/identity NormalizeEmail, FoldEmail for a
// key): a production file elsewhere that declares its own normaliser, or lower-cases or
// case-folds an address itself, fails here. The behaviour (one account however it is
// spelled) is held at sign-up, sign-in, invitations, mail sign-in and domain checks by the
// account, project and federation tests.
func TestEmailNormalisedOnce(t *testing.T) {
	own := regexp.MustCompile(`(?i)(func|var)\s+normali[sz]e_?e?mail`)
	fold := regexp.MustCompile(`(?i)(strings\.ToLower|strings\.EqualFold)\([^\n]*mail`)
	owner := filepath.Join("platform", "identity", "email.go")
	for _, f := range productionGo(t) {
		if strings.HasSuffix(f, owner) {
			continue
		}
		b, _ := os.ReadFile(f)
		if m := own.Find(b); m != nil {
			t.Errorf("%s declares its own normaliser (%s); use identity.NormalizeEmail", f, m)
		}
		if m := fold.Find(b); m != nil {
			t.Errorf("%s folds an address itself (%s); use identity.NormalizeEmail or FoldEmail", f, m)
		}
	}
}
