// Package apidoc is how modules and plugins describe their own API (SPEC §15): each
// contributes a fragment of the OpenAPI document — its paths, its schemas, its security
// schemes — and the served document (package api) is api/openapi.yaml with every fragment
// merged in. A kind added as a module, or a product added as a plugin, is documented with
// no edit to api/openapi.yaml.
package apidoc

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"go.uber.org/fx"
	"sigs.k8s.io/yaml"
)

// Fragment is a part of an OpenAPI 3.1 document: its paths and its components (schemas,
// securitySchemes, parameters, responses), as JSON values.
type Fragment struct {
	// Owner names who contributed it, for the error when two fragments clash.
	Owner      string
	Paths      map[string]any
	Components map[string]map[string]any
}

// YAML reads a fragment written as an OpenAPI document (paths and components only).
func YAML(owner string, src []byte) (Fragment, error) {
	raw, err := ToJSON(src)
	if err != nil {
		return Fragment{}, fmt.Errorf("%s: openapi fragment: %w", owner, err)
	}
	var doc struct {
		Paths      map[string]any            `json:"paths"`
		Components map[string]map[string]any `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return Fragment{}, fmt.Errorf("%s: openapi fragment: %w", owner, err)
	}
	return Fragment{Owner: owner, Paths: doc.Paths, Components: doc.Components}, nil
}

// AsFragment contributes the Fragment returned by constructor f.
func AsFragment(f any) fx.Option {
	return fx.Provide(fx.Annotate(f, fx.ResultTags(`group:"api_fragments"`)))
}

// Fragments are every contributed fragment.
type Fragments struct {
	fx.In
	All []Fragment `group:"api_fragments"`
}

// Merge adds the fragments to doc (an OpenAPI document as decoded JSON). A path or a
// component that doc or another fragment already has is an error: nobody documents
// another's route.
func Merge(doc map[string]any, fragments []Fragment) error {
	fragments = slices.Clone(fragments)
	slices.SortFunc(fragments, func(a, b Fragment) int { return strings.Compare(a.Owner, b.Owner) })
	paths := section(doc, "paths")
	components := section(doc, "components")
	for _, f := range fragments {
		for p, item := range f.Paths {
			if _, dup := paths[p]; dup {
				return fmt.Errorf("openapi: %s documents %s, which is documented already", f.Owner, p)
			}
			paths[p] = item
		}
		for kind, entries := range f.Components {
			into := section(components, kind)
			for name, v := range entries {
				if _, dup := into[name]; dup {
					return fmt.Errorf("openapi: %s declares components.%s.%s, which is declared already", f.Owner, kind, name)
				}
				into[name] = v
			}
		}
	}
	return nil
}

// section is m[name] as an object, made when absent.
func section(m map[string]any, name string) map[string]any {
	s, ok := m[name].(map[string]any)
	if !ok {
		s = map[string]any{}
		m[name] = s
	}
	return s
}

// converted holds each YAML text already converted, by its text: the documents are embedded
// constants, and converting them again at every app start was a twentieth of the CPU of a
// test package that starts apps (the YAML parser, under the race detector).
var converted sync.Map // string → []byte

// ToJSON is the YAML document src as JSON. The answer is shared: callers only read it.
func ToJSON(src []byte) ([]byte, error) {
	if raw, ok := converted.Load(string(src)); ok {
		return raw.([]byte), nil
	}
	raw, err := yaml.YAMLToJSON(src)
	if err != nil {
		return nil, err
	}
	converted.Store(string(src), raw)
	return raw, nil
}
