package apidoc

import (
	"encoding/json"
	"strings"
	"testing"
)

// Fragments merge into the document; one documenting what is documented already stops the
// start, naming who did.
func TestMerge(t *testing.T) {
	doc := map[string]any{"paths": map[string]any{"/a": map[string]any{}}, "components": map[string]any{"schemas": map[string]any{"A": map[string]any{}}}}
	b, err := YAML("b", []byte("paths:\n  /b: {get: {operationId: getB}}\ncomponents:\n  schemas:\n    B: {type: string}\n  securitySchemes:\n    bSecret: {type: http, scheme: bearer}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := Merge(doc, []Fragment{b}); err != nil {
		t.Fatal(err)
	}
	comps := doc["components"].(map[string]any)
	if doc["paths"].(map[string]any)["/b"] == nil || comps["schemas"].(map[string]any)["B"] == nil || comps["securitySchemes"].(map[string]any)["bSecret"] == nil {
		t.Fatalf("%v", doc)
	}
	for _, clash := range []Fragment{
		{Owner: "c", Paths: map[string]any{"/a": map[string]any{}}},
		{Owner: "c", Components: map[string]map[string]any{"schemas": {"B": map[string]any{}}}},
	} {
		if err := Merge(doc, []Fragment{clash}); err == nil || !strings.Contains(err.Error(), "c ") {
			t.Errorf("%v: %v", clash, err)
		}
	}
	if _, err := YAML("d", []byte("paths: [")); err == nil || !strings.Contains(err.Error(), "d:") {
		t.Errorf("bad YAML: %v", err)
	}
}

// A plugin's Go type is its schema: json names, required unless omitempty.
func TestSchemaOf(t *testing.T) {
	type creds struct {
		ClientID string `json:"clientId"`
		Port     int    `json:"port"`
		Note     string `json:"note,omitempty"`
		hidden   string
		Skip     string `json:"-"`
	}
	s, err := SchemaOf(creds{hidden: "x"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(s)
	got := string(b)
	for _, want := range []string{`"clientId":{"type":"string"}`, `"port":{"type":"integer"`, `"required":["clientId","port"]`} {
		if !strings.Contains(got, want) {
			t.Errorf("%s lacks %s", got, want)
		}
	}
	if strings.Contains(got, "hidden") || strings.Contains(got, "Skip") {
		t.Errorf("%s shows a field JSON does not", got)
	}
}
