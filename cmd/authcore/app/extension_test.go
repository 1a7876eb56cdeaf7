package app_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"

	"go.uber.org/fx"

	"github.com/authcore/authcore/cmd/authcore/app"
	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/internal/template/deploykey"
	"github.com/authcore/authcore/internal/template/mail"
	"github.com/authcore/authcore/platform/lifecycle"
	"github.com/authcore/authcore/platform/product"
)

func TestMain(m *testing.M) { apptest.Main(m) }

// The recipe of docs/extending.md, done as a team would: the template product added with
// its one line is a full citizen, and answers its own credentials (the console half is
// modules/console's TestConsoleShowsAPluginsCredentials).
func TestAProductIsOneFolderAndOneLine(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		scanner := apptest.NewScanner(t)
		a := apptest.Start(t, st, scanner.Trusted, apptest.WithProducts(append(app.Products(), mail.Plugin)...))
		got := checkProduct(t, a, scanner, "mail")
		own, _ := got["mail"].(map[string]any)
		if own["relay"] != "smtp.example.com:587" || own["username"] != got["badge"].(map[string]any)["id"] {
			t.Fatalf("%v", got)
		}
	})
}

// Every mintable product of the composition root is a full citizen: what a product copied
// from the template into plugins/ and added with its one line is held to
// (TestRecipes does exactly that).
func TestEveryProductIsACitizen(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		scanner := apptest.NewScanner(t)
		var products *product.Registry
		a := apptest.Start(t, st, scanner.Trusted, apptest.WithFx(fx.Populate(&products)))
		for _, p := range products.All() {
			if ok, _ := p.Mintable(); ok {
				t.Run(p.Key(), func(t *testing.T) { checkProduct(t, a, scanner, p.Key()) })
			}
		}
	})
}

// checkProduct holds product key to what SPEC §6, §12 and §15 promise every product's
// badges, over HTTP, and returns a create answer.
func checkProduct(t *testing.T, a *apptest.App, scanner *apptest.Scanner, key string) map[string]any {
	admin := a.SignUp(t)
	prj := a.CreateProject(t, admin)
	rs := a.MintAuthClient(t, admin, prj, nil) // a resource server, to introspect with
	mint := func() (string, map[string]any) {
		got := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + prj + "/service-badges",
			Body: map[string]any{"name": "ci", "product": key, "role": "developer"}, Header: admin.Bearer()}).Expect(t, 201, nil)
		return got["plaintext"].(string), got
	}
	me := func(secret string) *apptest.Response {
		return a.Get("/v1/service-badges/me", "Authorization", "Bearer "+secret)
	}

	secret, got := mint()
	t.Run("mint answers the secret once, and the product's member", func(t *testing.T) {
		if _, ok := got[key]; !strings.HasPrefix(secret, "ac_"+key+"_") || !ok {
			t.Fatalf("%v", got)
		}
		products := a.Do(apptest.Req{Path: "/v1/service-badges/products", Header: admin.Bearer()}).Expect(t, 200, nil)["products"].([]any)
		if !slices.ContainsFunc(products, func(p any) bool { return p.(map[string]any)["key"] == key }) {
			t.Fatalf("%s is not listed: %v", key, products)
		}
		list := a.Do(apptest.Req{Path: "/v1/projects/" + prj + "/service-badges?product=" + key, Header: admin.Bearer()}).Expect(t, 200, nil)
		badges := list["badges"].([]any)
		if len(badges) == 0 || slices.ContainsFunc(badges, func(b any) bool { return b.(map[string]any)["product"] != key }) {
			t.Fatalf("?product=%s lists %v", key, badges)
		}
	})
	t.Run("me knows it", func(t *testing.T) {
		me(secret).Expect(t, 200, map[string]any{"product": key, "role": "developer", "projectId": prj})
	})
	t.Run("introspection names it", func(t *testing.T) {
		a.PostForm("/v1/oauth/introspect", url.Values{"token": {secret}}, apptest.Basic(rs.ID, rs.Secret)).
			Expect(t, 200, map[string]any{"active": true, "kind": "service_badge", "product": key})
	})
	t.Run("roll: a new secret, the old one in its grace", func(t *testing.T) {
		id := got["badge"].(map[string]any)["id"].(string)
		rolled := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + prj + "/service-badges/" + id + "/roll", Header: admin.Bearer()}).
			Expect(t, 200, nil)
		if _, ok := rolled[key]; !ok || rolled["plaintext"] == secret || rolled["previousSecretExpiresAt"] == nil {
			t.Fatalf("%v", rolled)
		}
		me(secret).Expect(t, 200, nil)
		me(rolled["plaintext"].(string)).Expect(t, 200, nil)
		secret = rolled["plaintext"].(string)
	})
	t.Run("a signed leak report revokes it", func(t *testing.T) {
		scanner.Report(t, a, secret).Expect(t, 200, nil)
		me(secret).Expect(t, 401, nil)
	})
	t.Run("RFC 7009 revokes it", func(t *testing.T) {
		other, _ := mint()
		me(other).Expect(t, 200, nil)
		a.PostForm("/v1/oauth/revoke", url.Values{"token": {other}}, nil).Expect(t, 200, map[string]any{})
		me(other).Expect(t, 401, nil)
	})
	t.Run("the served API document describes its member", func(t *testing.T) {
		doc, _ := a.Served(t)
		if doc.Components.Schemas["BadgeCreated"].Value.Properties[key] == nil {
			t.Fatalf("BadgeCreated has no %s", key)
		}
	})
	return got
}

// A kind is one module and one line: the template deploy key, added to the app, is a full
// citizen (checkCitizen).
func TestAKindIsOneModuleAndOneLine(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		checkCitizen(t, startCitizen(t, st, "deploy_key", apptest.WithFx(deploykey.Module)))
	})
}

// Every kind the composition root lists through lifecycle.Module is a full citizen: what
// a kind copied from the template into modules/ and added with its one line is held to
// (TestTheKindTemplateCopiedIntoModules does exactly that). The stock binary has none yet.
func TestEveryKindModuleIsACitizen(t *testing.T) {
	var screens []lifecycle.Screen
	apptest.StartURL(t, "sqlite", "sqlite::memory:", apptest.WithFx(fx.Invoke(func(s lifecycle.Screens) { screens = s.All })))
	if len(screens) == 0 {
		t.Skip("the composition root lists no kind made by lifecycle.Module")
	}
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		for _, s := range screens {
			t.Run(s.Kind, func(t *testing.T) { checkCitizen(t, startCitizen(t, st, s.Kind)) })
		}
	})
}

// startCitizen starts the app (with opts) for checking kind.
func startCitizen(t *testing.T, st apptest.Store, kind string, opts ...apptest.Option) citizen {
	c := citizen{scanner: apptest.NewScanner(t)}
	var screens []lifecycle.Screen
	c.a = apptest.Start(t, st, append(opts, c.scanner.Trusted,
		apptest.WithFx(fx.Populate(&c.kinds, &c.usage), fx.Invoke(func(s lifecycle.Screens) { screens = s.All })))...)
	for _, s := range screens {
		if s.Kind == kind {
			c.screen = s
		}
	}
	for _, k := range c.kinds.Kinds() {
		if k.Name == kind {
			c.prefix = k.Prefix
		}
	}
	if c.screen.Kind == "" || c.prefix == "" {
		t.Fatalf("no screen or prefix of kind %s", kind)
	}
	return c
}

// docs/extending.md's checklist names only what exists: every path in it is in the tree
// and every pkg.Name is declared in that package.
func TestExtensionChecklist(t *testing.T) {
	repo, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	repo += "/"
	doc, err := os.ReadFile(repo + "docs/extending.md")
	if err != nil {
		t.Fatal(err)
	}
	_, list, ok := strings.Cut(string(doc), "## Checklist")
	if !ok {
		t.Fatal("docs/extending.md has no checklist")
	}
	list, _, _ = strings.Cut(list, "\n## ")
	// Package directories by name.
	dirs := map[string][]string{}
	_ = filepath.WalkDir(repo, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && !strings.Contains(p, "/.") && !strings.Contains(p, "/ent/") {
			dirs[d.Name()] = append(dirs[d.Name()], p)
		}
		return nil
	})
	declared := func(pkg, name string) bool {
		fset := token.NewFileSet()
		var files []string
		for _, dir := range dirs[pkg] {
			more, _ := filepath.Glob(filepath.Join(dir, "*.go"))
			files = append(files, more...)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			parsed, err := parser.ParseFile(fset, f, nil, 0)
			if err == nil && parsed.Scope.Lookup(name) != nil {
				return true
			}
		}
		return false
	}
	dirs["schema"] = []string{repo + "ent/schema"}
	items, names := 0, 0
	for _, line := range strings.Split(list, "\n") {
		if !strings.HasPrefix(line, "- [ ] ") {
			continue
		}
		items++
		for i, part := range strings.Split(line, "`") {
			if i%2 == 0 || strings.ContainsAny(part, "<> ") {
				continue
			}
			if pkg, name, ok := strings.Cut(part, "."); ok && !strings.Contains(part, "/") && name != "" && unicode.IsUpper(rune(name[0])) {
				names++
				if !declared(pkg, name) {
					t.Errorf("checklist names %s, which package %s does not declare", part, pkg)
				}
				continue
			}
			if !strings.Contains(part, "/") {
				continue
			}
			if _, err := os.Stat(repo + part); err != nil {
				t.Errorf("checklist names %s, which does not exist", part)
			}
		}
	}
	if items < 5 || names < 8 {
		t.Fatalf("read %d items naming %d declarations", items, names)
	}
}
