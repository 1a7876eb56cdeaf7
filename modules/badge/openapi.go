package badge

import (
	_ "embed"
	"fmt"

	"github.com/authcore/authcore/platform/apidoc"
	"github.com/authcore/authcore/platform/product"
)

// openapiYAML is the badges' part of the served OpenAPI document.
//
//go:embed openapi.yaml
var openapiYAML []byte

// fragment is openapiYAML with a member of BadgeCreated per registered product, as the
// product describes what its Mint returns: null or its credentials when it is
// product.Documented, any value when it is not.
func fragment(products *product.Registry) (apidoc.Fragment, error) {
	f, err := apidoc.YAML("badge", openapiYAML)
	if err != nil {
		return f, err
	}
	created, _ := f.Components["schemas"]["BadgeCreated"].(map[string]any)
	props, _ := created["properties"].(map[string]any)
	required, _ := created["required"].([]any)
	if props == nil {
		return f, fmt.Errorf("badge: openapi.yaml has no BadgeCreated")
	}
	null := map[string]any{"type": "null"}
	for _, p := range products.All() {
		member := map[string]any{"anyOf": []any{null, map[string]any{}}}
		if d, ok := p.(product.Documented); ok {
			member = null
			if v := d.Credentials(); v != nil {
				s, err := apidoc.SchemaOf(v)
				if err != nil {
					return f, fmt.Errorf("product %s: credentials: %w", p.Key(), err)
				}
				member = map[string]any{"oneOf": []any{null, s}}
			}
		}
		props[p.Key()] = member
		required = append(required, p.Key())
	}
	created["required"] = required
	return f, nil
}
