package app_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// maxMethods bounds what one type of a module carries besides its route handlers: a type
// past it does several jobs, and a newcomer reading it meets all of them at once (issue 47:
// the session engine had 37). Route handlers are left out: a handler type serves its
// module's routes, one method each, and splitting it would only scatter them.
const maxMethods = 20

// No type in modules/ has more than maxMethods methods that are not Fiber route handlers.
func TestModuleTypesStaySmall(t *testing.T) {
	files, _ := filepath.Glob("../../../modules/*/*.go")
	more, _ := filepath.Glob("../../../modules/*/*/*.go")
	counts := map[string][]string{} // "dir.Type" -> its methods
	fset := token.NewFileSet()
	for _, f := range append(files, more...) {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		parsed, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range parsed.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || len(fn.Recv.List) != 1 || isRouteHandler(fn.Type) {
				continue
			}
			recv := receiverName(fn.Recv.List[0].Type)
			key := strings.TrimPrefix(filepath.Dir(f), "../../../") + "." + recv
			counts[key] = append(counts[key], fn.Name.Name)
		}
	}
	if len(counts) < 20 {
		t.Fatalf("found methods of only %d types in modules/", len(counts))
	}
	types := make([]string, 0, len(counts))
	for k := range counts {
		types = append(types, k)
	}
	sort.Strings(types)
	for _, k := range types {
		if n := len(counts[k]); n > maxMethods {
			t.Errorf("%s has %d methods that are not route handlers (at most %d): %s", k, n, maxMethods, strings.Join(counts[k], " "))
		}
	}
}

// receiverName is the type a method is declared on: T of T, *T, T[P] and *T[P].
func receiverName(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return "?"
		}
	}
}

// isRouteHandler: func(*fiber.Ctx) error, Fiber's handler signature.
func isRouteHandler(ft *ast.FuncType) bool {
	if ft.Params == nil || len(ft.Params.List) != 1 || len(ft.Params.List[0].Names) > 1 ||
		ft.Results == nil || len(ft.Results.List) != 1 || len(ft.Results.List[0].Names) > 1 {
		return false
	}
	star, ok := ft.Params.List[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Ctx" {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	res, isIdent := ft.Results.List[0].Type.(*ast.Ident)
	return ok && pkg.Name == "fiber" && isIdent && res.Name == "error"
}
