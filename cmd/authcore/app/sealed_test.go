package app_test

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.uber.org/fx"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/internal/testkit"
	"github.com/authcore/authcore/platform/secret"
)

// One resealer: `keys reseal` re-seals by the columns' declarations alone, so nothing
// outside platform/secret re-seals by hand. A hand-written one is known by its name or by
// what it must do: select the values not yet sealed under the current key (an ent
// "…SealedHasPrefix" predicate, or the "v2." format spelled out).
func TestNoResealerOutsideSecret(t *testing.T) {
	named := regexp.MustCompile(`(?i)reseal`)
	selects := regexp.MustCompile(`(?i)sealed\w*(HasPrefix|Contains)`)
	// The command itself only hands the work to secret.Resealer.
	allowed := map[string]bool{"cmd/authcore/main.go keysResealCmd": true, "cmd/authcore/main.go keysCmd.Reseal": true}
	files := 0
	err := filepath.WalkDir("../../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("../../..", path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			switch rel {
			case ".git", "ent", "platform/secret", "node_modules", "data":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		files++
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		bad := func(what, name string) {
			if !allowed[rel+" "+name] {
				t.Errorf("%s: %s %s: re-sealing belongs to platform/secret; declare the column (docs/extending.md)", rel, what, name)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				if named.MatchString(n.Name.Name) {
					bad("func", n.Name.Name)
				}
			case *ast.TypeSpec:
				if named.MatchString(n.Name.Name) {
					bad("type", n.Name.Name)
				}
				if st, ok := n.Type.(*ast.StructType); ok {
					for _, fl := range st.Fields.List {
						for _, fn := range fl.Names {
							if named.MatchString(fn.Name) {
								bad("field", n.Name.Name+"."+fn.Name)
							}
						}
					}
				}
			case *ast.Ident:
				if selects.MatchString(n.Name) {
					bad("selects by key", n.Name)
				}
			case *ast.BasicLit:
				if s, err := strconv.Unquote(n.Value); err == nil && n.Kind == token.STRING && (strings.HasPrefix(s, "v2.") || strings.HasPrefix(s, "v1.")) {
					bad("spells the sealed format", n.Value)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("found %d Go files", files)
	}
}

// Every sealed column is declared and contributed, so `keys reseal` covers it: sealing
// outside platform/secret goes through a declaration (the keyring's own seal is
// unexported), every declaration in the binary is contributed to the app, every declared
// table and column exists on both stores, every column named "…_sealed" is declared, and
// every value in the store in the sealed format is in a declared column.
func TestEverySealedColumnIsDeclared(t *testing.T) {
	apptest.ForEachStore(t, func(t *testing.T, st apptest.Store) {
		var r secret.Resealer
		a := apptest.Start(t, st, apptest.WithFx(fx.Populate(&r)))

		contributed := map[string]bool{}
		for _, c := range r.Columns {
			d := c.Declaration()
			key := d.Table + "." + d.Column
			if contributed[key] {
				t.Errorf("%s is contributed twice", key)
			}
			contributed[key] = true
		}
		declared := map[string]secret.Declaration{}
		for _, c := range secret.Declared() {
			d := c.Declaration()
			declared[d.Table+"."+d.Column] = d
			if !contributed[d.Table+"."+d.Column] {
				t.Errorf("%s.%s is declared but not contributed with secret.AsSealed: keys reseal would skip it", d.Table, d.Column)
			}
		}
		if len(declared) < 10 {
			t.Fatalf("only %d declared columns: %v", len(declared), declared)
		}

		// Values in as many sealed columns as a few calls fill.
		admin := a.SignUp(t)
		prj := a.CreateProject(t, admin)
		minted := a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + prj + "/service-badges",
			Body: map[string]any{"name": "files", "product": "s3"}, Header: admin.Bearer()}).Expect(t, 201, nil)
		a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + prj + "/service-badges/" + minted["badge"].(map[string]any)["id"].(string) + "/roll",
			Header: admin.Bearer()}).Expect(t, 200, nil)
		a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + prj + "/webhooks", Body: map[string]any{"url": "https://93.184.215.14/hook"},
			Header: admin.Bearer()}).Expect(t, 201, nil)
		a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + prj + "/auth/providers",
			Body: map[string]any{"preset": "google", "clientId": "g", "clientSecret": "provider-secret"}, Header: admin.Bearer()}).Expect(t, 201, nil)
		a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/auth-core/mfa/totp", Header: admin.Bearer()}).Expect(t, 201, nil)

		sealedFormat := regexp.MustCompile(`^v2\.[0-9a-f]{8}\.[A-Za-z0-9+/]{16,}$`)
		ctx := context.Background()
		tableQuery := "SELECT name FROM sqlite_master WHERE type = 'table'"
		if st.Name == "postgres" {
			tableQuery = "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
		}
		tables := testkit.QueryStrings(t, a.DB.SQL, tableQuery)
		seen := map[string]bool{}
		filled := map[string]bool{}
		for _, table := range tables {
			rows, err := a.DB.SQL.QueryContext(ctx, fmt.Sprintf(`SELECT * FROM %q`, table))
			if err != nil {
				t.Fatal(err)
			}
			cols, _ := rows.Columns()
			for _, c := range cols {
				seen[table+"."+c] = true
				if _, ok := declared[table+"."+c]; !ok && strings.HasSuffix(c, "_sealed") {
					t.Errorf("%s.%s holds sealed values but is not declared with secret.Declare", table, c)
				}
			}
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			for rows.Next() {
				if err := rows.Scan(ptrs...); err != nil {
					t.Fatal(err)
				}
				for i, v := range vals {
					var s string
					switch x := v.(type) {
					case string:
						s = x
					case []byte:
						s = string(x)
					}
					if !sealedFormat.MatchString(s) {
						continue
					}
					filled[table+"."+cols[i]] = true
					if _, ok := declared[table+"."+cols[i]]; !ok {
						t.Errorf("%s.%s holds a sealed value but is not declared with secret.Declare", table, cols[i])
					}
				}
			}
			rows.Close()
		}
		for key, d := range declared {
			for _, c := range []string{d.Column, d.ID, d.AAD} {
				if !seen[d.Table+"."+c] {
					t.Errorf("%s declares column %s.%s, which the store does not have", key, d.Table, c)
				}
			}
		}
		for _, want := range []string{"signing_keys.private_sealed", "s3credentials.secret_sealed", "s3credentials.previous_secret_sealed",
			"webhooks.secret_sealed", "sign_in_providers.client_secret_sealed", "mfa_factors.secret_sealed"} {
			if !filled[want] {
				t.Errorf("no sealed value in %s: the scan above saw nothing there (filled: %v)", want, slices.Sorted(maps.Keys(filled)))
			}
		}

		// And the one routine re-seals them all (nothing to do: one key), on this store.
		names := map[string]bool{}
		if err := r.ResealAll(ctx, 2, func(name string, n int) {
			names[name] = true
			if n != 0 {
				t.Errorf("re-sealed %d %s under the key that sealed them", n, name)
			}
		}); err != nil {
			t.Fatal(err)
		}
		for _, d := range declared {
			if !names[d.Name] {
				t.Errorf("keys reseal does not report %q", d.Name)
			}
		}
	})
}
