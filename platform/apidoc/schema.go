package apidoc

import (
	"encoding/json"
	"reflect"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3gen"
)

// SchemaOf is the JSON schema of v's type, as encoding/json encodes it: every field named
// by its json tag, and required unless the tag says omitempty. For documenting what a
// plugin answers from its Go type, so the document cannot drift from the code.
func SchemaOf(v any) (map[string]any, error) {
	ref, err := openapi3gen.NewSchemaRefForValue(v, nil, openapi3gen.SchemaCustomizer(required))
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(ref.Value)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	return out, json.Unmarshal(raw, &out)
}

// required marks a struct's fields required unless their json tag says omitempty.
func required(_ string, t reflect.Type, _ reflect.StructTag, s *openapi3.Schema) error {
	if t.Kind() != reflect.Struct {
		return nil
	}
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if !strings.Contains(opts, "omitempty") && !strings.Contains(opts, "omitzero") {
			s.Required = append(s.Required, name)
		}
	}
	return nil
}
