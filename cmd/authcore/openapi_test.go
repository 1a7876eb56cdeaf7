package main

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"go.uber.org/fx"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/authcore/authcore/internal/apptest"
	"github.com/authcore/authcore/platform/credential"
	"github.com/authcore/authcore/platform/httpserver"
)

// Every route the app registers is in api/openapi.yaml, and every operation there is a
// route: the document cannot drift from the code. (The harness checks every response
// of every integration test against it.)
func TestOpenAPIDocumentsEveryRoute(t *testing.T) {
	var srv *httpserver.Server
	a := apptest.StartURL(t, "sqlite", "sqlite::memory:", apptest.WithFx(fx.Populate(&srv)))
	doc, _ := a.Served(t) // api/openapi.yaml with every module's and plugin's fragment
	if !strings.HasPrefix(doc.OpenAPI, "3.1") {
		t.Fatalf("openapi %q, want 3.1", doc.OpenAPI)
	}

	param := regexp.MustCompile(`:([A-Za-z]+)`)
	registered := map[string]bool{}
	for _, r := range srv.App().GetRoutes(true) {
		if r.Method == http.MethodHead {
			continue
		}
		registered[r.Method+" "+param.ReplaceAllString(r.Path, "{$1}")] = true
	}
	documented := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			documented[method+" "+path] = true
		}
	}
	var missing, extra []string
	for op := range registered {
		if !documented[op] {
			missing = append(missing, op)
		}
	}
	for op := range documented {
		if !registered[op] {
			extra = append(extra, op)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing) > 0 || len(extra) > 0 {
		t.Fatalf("api/openapi.yaml lacks %v and documents routes that do not exist: %v", missing, extra)
	}

	// The document is served, as JSON, and says it is OpenAPI 3.1.
	a.Get("/openapi.json").Expect(t, 200, map[string]any{"openapi": "3.1.0"})
}

// Every operation has a unique operationId (generated clients name methods by it) and says
// who may call it: a security requirement, or security: [] for a public one.
func TestOpenAPIOperationsAreNamedAndSecured(t *testing.T) {
	a := apptest.StartURL(t, "sqlite", "sqlite::memory:")
	raw := a.Get("/openapi.json").Body
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	n := 0
	for path, item := range doc.Paths {
		for method, rawOp := range item {
			if method == "parameters" {
				continue
			}
			var op struct {
				OperationID string           `json:"operationId"`
				Security    *json.RawMessage `json:"security"`
			}
			if err := json.Unmarshal(rawOp, &op); err != nil {
				t.Fatal(err)
			}
			n++
			where := strings.ToUpper(method) + " " + path
			if op.OperationID == "" {
				t.Errorf("%s has no operationId", where)
			} else if other, dup := seen[op.OperationID]; dup {
				t.Errorf("%s and %s share operationId %s", where, other, op.OperationID)
			}
			seen[op.OperationID] = where
			if op.Security == nil {
				t.Errorf("%s does not say its security (security: [] when public)", where)
			}
		}
	}
	if n < 50 {
		t.Fatalf("only %d operations read", n)
	}
}

// SPEC §15: the document's enums of credential kinds and event types are the registry's.
// As served, exactly whatever kinds the binary runs with; as written, only kinds and events
// that exist (a kind added as a module is served with no edit to api/openapi.yaml).
func TestOpenAPIEnumsAreTheRegistrys(t *testing.T) {
	var kinds *credential.Registry
	a := apptest.StartURL(t, "sqlite", "sqlite::memory:", apptest.WithFx(fx.Populate(&kinds)))
	written, _ := apptest.Document(t)
	served, _ := a.Served(t)
	enum := func(doc *openapi3.T, name string) []string {
		var out []string
		for _, v := range doc.Components.Schemas[name].Value.Enum {
			out = append(out, v.(string))
		}
		return out
	}
	if got, want := enum(served, "CredentialKind"), kinds.IntrospectedKinds(); !slices.Equal(got, want) {
		t.Errorf("served CredentialKind enum %v, registry %v", got, want)
	}
	for _, k := range enum(written, "CredentialKind") {
		if !slices.Contains(kinds.IntrospectedKinds(), k) {
			t.Errorf("api/openapi.yaml names kind %s, which is not registered", k)
		}
	}
	for _, e := range kinds.Events() {
		if !slices.Contains(enum(served, "EventType"), e) {
			t.Errorf("served EventType enum lacks %s", e)
		}
	}
	// Every event type the document names is one a webhook may subscribe to.
	admin := a.SignUp(t)
	prj := a.CreateProject(t, admin)
	a.Do(apptest.Req{Method: http.MethodPost, Path: "/v1/projects/" + prj + "/webhooks",
		Body: map[string]any{"url": "https://93.184.215.14/hook", "events": enum(served, "EventType")}, Header: admin.Bearer()}).Expect(t, 201, nil)
}

// SPEC §29: every operation names the error responses it can answer — a 4xx or 5xx status,
// or a default response — so a generated client knows the error shape. The document itself
// (GET /openapi.json) is the one operation that cannot fail a caller.
func TestOpenAPINamesErrorResponses(t *testing.T) {
	a := apptest.StartURL(t, "sqlite", "sqlite::memory:")
	doc, _ := a.Served(t)
	var bare []string
	n := 0
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if method == http.MethodGet && path == "/openapi.json" {
				continue
			}
			n++
			if op.Responses == nil || !namesError(op.Responses) {
				bare = append(bare, method+" "+path)
			}
		}
	}
	sort.Strings(bare)
	if len(bare) > 0 {
		t.Errorf("%d of %d operations name no error response (4xx, 5xx or default):\n%s", len(bare), n, strings.Join(bare, "\n"))
	}
	if n < 50 {
		t.Fatalf("only %d operations read", n)
	}
}

// namesError says whether responses has a 4xx or 5xx status, a 4XX/5XX range, or a default.
func namesError(responses *openapi3.Responses) bool {
	for status, r := range responses.Map() {
		if r == nil {
			continue
		}
		if status == "default" || strings.HasPrefix(status, "4") || strings.HasPrefix(status, "5") {
			return true
		}
	}
	return false
}
