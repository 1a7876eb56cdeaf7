package app_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/authcore/authcore/internal/apptest"
)

// inCopy marks the tests running inside TestRecipes' scratch copy, which must not copy again.
const inCopy = "AUTHCORE_RECIPE_COPY"

// docs/extending.md's two recipes, followed word for word in a scratch copy of the
// repository — its rename tables read from the document itself — by a team that has
// nothing but the document: a product (plugins/fax) and a kind (modules/licensekey). Each
// touches one hand-written file outside its folder, the composition root (a kind's
// migration is generated; no ent code is generated for its table), and then the tests of the copy
// pass: the layout rules, the API document's drift tests, and TestEveryProductIsACitizen
// and TestEveryKindModuleIsACitizen over HTTP on both stores, which now include them.
//
// It builds the whole module again and needs PostgreSQL (the migration generator replays
// the migrations there), so go test -short leaves it out.
func TestRecipes(t *testing.T) {
	switch {
	case os.Getenv(inCopy) != "":
		t.Skip("inside a recipe's copy")
	case testing.Short():
		t.Skip("-short: the recipes rebuild the module")
	case os.Getenv(apptest.EnvDatabaseURL) == "" && os.Getenv("CI") != "true":
		t.Skip(apptest.EnvDatabaseURL + " is not set: the migration generator needs PostgreSQL")
	}
	doc, err := os.ReadFile("../../../docs/extending.md")
	if err != nil {
		t.Fatal(err)
	}
	repo := scratchCopy(t)

	// A product: copy, rename, one line.
	product := renames(t, doc, "## Adding a product", map[string]string{"<name>": "fax", "<Name>": "Fax", "<NAME>": "FAX"})
	copyRenamed(t, repo, "internal/template/mail", "plugins/fax", product)
	run(t, repo, "gofmt", "-w", "plugins/fax")
	addLine(t, repo, "cmd/authcore/app/products.go", "pay.Plugin,", "fax.Plugin,", "github.com/authcore/authcore/plugins/fax")

	// A kind: copy the folder, rename, one line, generate its migration.
	kind := renames(t, doc, "## Adding a credential kind", map[string]string{"<name>": "licensekey", "<Name>": "LicenseKey",
		"<name_words>": "license_key", "<name-words>s": "license-keys", "<Name words>s": "License keys", "<name words>": "license key", "<prefix>": "lk"})
	copyRenamed(t, repo, "internal/template/deploykey", "modules/licensekey", kind)
	run(t, repo, "gofmt", "-w", "modules/licensekey")
	addLine(t, repo, "cmd/authcore/app/app.go", "mfa.Module,", "licensekey.Module,", "github.com/authcore/authcore/modules/licensekey")
	run(t, repo, "go", "run", "./platform/database/migrations/gen.go", "-pg", os.Getenv(apptest.EnvDatabaseURL), "add_license_keys")
	// The kind's table is the lifecycle's alone: ent generates nothing for it.
	run(t, repo, "go", "generate", "./...")

	// What each touched outside its folder: hand-written files, and generated ones.
	var handWritten, generated []string
	for _, line := range strings.Split(strings.TrimSpace(run(t, repo, "git", "status", "--porcelain", "--untracked-files=all")), "\n") {
		f := strings.TrimSpace(line[2:])
		switch {
		case strings.HasPrefix(f, "plugins/fax/"), strings.HasPrefix(f, "modules/licensekey/"):
		case strings.HasPrefix(f, "platform/database/migrations/"):
			generated = append(generated, f)
		default:
			handWritten = append(handWritten, f)
		}
	}
	want := []string{"cmd/authcore/app/app.go", "cmd/authcore/app/products.go"}
	if !slices.Equal(handWritten, want) {
		t.Fatalf("hand-written files touched outside the new folders: %v, want %v", handWritten, want)
	}
	t.Logf("outside their folders: hand-written %v; generated %d files", handWritten, len(generated))
	if len(generated) != 4 { // an up-and-down file and a checksum file per dialect
		t.Fatalf("generated outside the new folders: %v, want the kind's migrations", generated)
	}
	t.Logf("lines copied from the templates: product %d, kind %d", lines(t, repo, "plugins/fax"), lines(t, repo, "modules/licensekey"))

	// What CI checks of the copy before its tests: formatting, then vet.
	if out := strings.TrimSpace(run(t, repo, "gofmt", "-l", "cmd", "ent", "modules", "plugins", "platform", "internal")); out != "" {
		t.Fatalf("gofmt would change, after the recipes: %s", out)
	}
	run(t, repo, "go", "vet", "./...")
	// The tests a new product or kind can break: the layout rules, the API document's drift
	// tests and the citizens'. The rest of these two packages (walkthroughs, power loss,
	// replicas, traces) exercises nothing of a recipe and took most of CI's longest package.
	out := run(t, repo, "go", "test", "-count=1", "-v",
		"-run", "^(TestLayering|TestWiringApartFromHandlers|TestRoutesNameTheirModule|TestAuthProductCarriesNoOAuthServer|TestOpenAPI.*|TestAProductIsOneFolderAndOneLine|TestEveryProductIsACitizen|TestAKindIsOneModuleAndOneLine|TestEveryKindModuleIsACitizen|TestExtensionChecklist|TestAPrefixClaimedTwiceStopsTheStart)$",
		"./cmd/authcore/", "./cmd/authcore/app/")
	for _, passed := range []string{"TestEveryProductIsACitizen/sqlite/fax", "TestEveryKindModuleIsACitizen/sqlite/license_key"} {
		if !strings.Contains(out, "--- PASS: "+passed+" ") {
			t.Errorf("the copy's tests did not pass %s", passed)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "ok ") || strings.HasPrefix(line, "--- PASS: TestEvery") {
			t.Log(line)
		}
	}
}

// scratchCopy copies the repository's files (tracked, and untracked ones git does not
// ignore) to a new directory and commits them there, so git can say what the recipes
// changed.
func scratchCopy(t *testing.T) string {
	t.Helper()
	root := strings.TrimSpace(run(t, ".", "git", "rev-parse", "--show-toplevel"))
	dir := t.TempDir()
	for _, f := range strings.Split(strings.TrimSpace(run(t, root, "git", "ls-files", "-co", "--exclude-standard")), "\n") {
		b, err := os.ReadFile(filepath.Join(root, f))
		if os.IsNotExist(err) {
			continue // deleted in the working tree
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run(t, dir, "git", "init", "-q")
	run(t, dir, "git", "add", "-A")
	run(t, dir, "git", "-c", "user.name=recipe", "-c", "user.email=recipe@example.com", "commit", "-qm", "scratch")
	return dir
}

// renames reads the rename table of the document's section heading, with its
// placeholders filled from fill: template text → new text, in the table's order.
func renames(t *testing.T, doc []byte, heading string, fill map[string]string) [][2]string {
	t.Helper()
	_, section, ok := bytes.Cut(doc, []byte(heading+"\n"))
	if !ok {
		t.Fatalf("docs/extending.md has no %q", heading)
	}
	section, _, _ = bytes.Cut(section, []byte("\n## "))
	row := regexp.MustCompile("(?m)^\\s*\\|\\s*`([^`]+)`\\s*\\|\\s*`([^`]+)`\\s*\\|\\s*$")
	var out [][2]string
	for _, m := range row.FindAllSubmatch(section, -1) {
		to := string(m[2])
		for k, v := range fill {
			to = strings.ReplaceAll(to, k, v)
		}
		if strings.Contains(to, "<") {
			t.Fatalf("%s: %q has a placeholder the test does not fill", heading, m[2])
		}
		out = append(out, [2]string{string(m[1]), to})
	}
	if len(out) < 3 {
		t.Fatalf("%s: read %d renames", heading, len(out))
	}
	return out
}

// copyRenamed copies the file or folder from to to, every rename applied to its text.
func copyRenamed(t *testing.T, repo, from, to string, rename [][2]string) {
	t.Helper()
	err := filepath.WalkDir(filepath.Join(repo, from), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(filepath.Join(repo, from), p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		s := string(b)
		for _, r := range rename {
			s = strings.ReplaceAll(s, r[0], r[1])
		}
		dst := filepath.Join(repo, to, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, []byte(s), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// addLine adds line after the one that is after (indented alike), and pkg to the imports.
func addLine(t *testing.T, repo, file, after, line, pkg string) {
	t.Helper()
	p := filepath.Join(repo, file)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, after+"\n")
	if i < 0 || !strings.Contains(s, "import (\n") {
		t.Fatalf("%s: no %q", file, after)
	}
	indent := s[strings.LastIndex(s[:i], "\n")+1 : i]
	s = s[:i] + after + "\n" + indent + line + s[i+len(after):]
	s = strings.Replace(s, "import (\n", "import (\n\t\""+pkg+"\"\n", 1)
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, repo, "gofmt", "-w", file)
}

// lines counts the lines of the file or the files under path.
func lines(t *testing.T, repo, path string) int {
	n := 0
	_ = filepath.WalkDir(filepath.Join(repo, path), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			n += bytes.Count(b, []byte("\n"))
		}
		return nil
	})
	return n
}

// run runs a command in dir, failing the test with its output when it fails.
func run(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), inCopy+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}
