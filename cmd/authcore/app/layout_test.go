package app_test

import (
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const root = "github.com/authcore/authcore/"

// goList runs go list over the module with format f, one line per package.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list"}, args...)...).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

// The design card's seams, held by the import graph: modules never import one another;
// plugins import no module and no other plugin; the platform imports neither.
func TestLayering(t *testing.T) {
	top := func(path string) (layer, name string) {
		rest, ok := strings.CutPrefix(path, root)
		if !ok {
			return "", ""
		}
		layer, name, _ = strings.Cut(rest, "/")
		name, _, _ = strings.Cut(name, "/")
		return layer, name
	}
	modules := 0
	for _, line := range goList(t, "-f", `{{.ImportPath}} {{join .Imports " "}}`, root+"...") {
		fields := strings.Fields(line)
		layer, name := top(fields[0])
		if layer == "modules" {
			modules++
		}
		for _, imp := range fields[1:] {
			il, in := top(imp)
			switch {
			case layer == "modules" && il == "modules" && in != name,
				layer == "plugins" && (il == "modules" || (il == "plugins" && in != name)),
				layer == "platform" && (il == "modules" || il == "plugins"):
				t.Errorf("%s imports %s", fields[0], imp)
			}
		}
	}
	if modules < 10 {
		t.Fatalf("go list found %d module packages", modules)
	}
}

// SPEC §15: the auth product is a product, not the OAuth server: nothing of token exchange,
// introspection or revocation is in what it builds on.
func TestAuthProductCarriesNoOAuthServer(t *testing.T) {
	for _, dep := range goList(t, "-deps", root+"plugins/auth") {
		if strings.HasPrefix(dep, root+"modules/") {
			t.Errorf("plugins/auth depends on %s", dep)
		}
	}
}

// A module's module.go holds its fx wiring and its handlers speak HTTP: no file of a
// module or plugin imports both fx and Fiber.
func TestWiringApartFromHandlers(t *testing.T) {
	files, _ := filepath.Glob("../../../modules/*/*.go")
	more, _ := filepath.Glob("../../../plugins/*/*.go")
	for _, f := range append(files, more...) {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		imports := map[string]bool{}
		for _, imp := range parsed.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			imports[p] = true
		}
		if imports["go.uber.org/fx"] && imports["github.com/gofiber/fiber/v2"] {
			t.Errorf("%s imports fx and Fiber", f)
		}
	}
	if len(files) == 0 {
		t.Fatal("no module files found")
	}
}

// AUTHCORE_MODULES selects routes by the module that contributed them (SPEC §18): every
// module names itself when it contributes routes, and a plugin's routes are the badge
// module's. A module using the platform's AsRoutes would be served by every process.
func TestRoutesNameTheirModule(t *testing.T) {
	call := regexp.MustCompile(`httpserver\.(AsRoutes|AsModuleRoutes)\(("[^"]*")?`)
	for _, dir := range []string{"modules", "plugins"} {
		files, _ := filepath.Glob("../../../" + dir + "/*/*.go")
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			want := `"` + filepath.Base(filepath.Dir(f)) + `"`
			if dir == "plugins" {
				want = `"badge"`
			}
			for _, m := range call.FindAllStringSubmatch(string(src), -1) {
				if m[1] != "AsModuleRoutes" || m[2] != want {
					t.Errorf("%s: %s; want httpserver.AsModuleRoutes(%s, …)", f, m[0], want)
				}
			}
		}
	}
}
