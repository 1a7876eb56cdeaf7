package scim

import (
	"encoding/json"
	"math"
	"strings"
)

// Limits of what a resource may hold, so that no directory can fill the store or make a
// filter walk without end.
const (
	maxValues      = 10000 // elements of one multi-valued attribute (a group's members)
	maxStringBytes = 4096
)

// normalize checks a resource's attributes as a client sent them (POST, PUT, or the result
// of a PATCH) against rt's schemas and returns them spelled as the schemas spell them, the
// way they are stored. Values of the wrong type are 400 invalidValue; booleans sent as
// the strings "True"/"False" (Microsoft Entra) become booleans. Read-only attributes (id,
// meta, a User's groups) are ignored, as RFC 7643 §2.2 says; so are attributes no schema
// defines and the password, which authcore never keeps.
func normalize(in map[string]any, rt *resourceType) (map[string]any, error) {
	out := map[string]any{}
	for k, v := range in {
		switch {
		case strings.EqualFold(k, "schemas"):
			list, ok := v.([]any)
			if !ok {
				return nil, scimErr(400, "invalidValue", "schemas must be a list of URNs")
			}
			for _, s := range list {
				if _, ok := s.(string); !ok {
					return nil, scimErr(400, "invalidValue", "schemas must be a list of URNs")
				}
			}
		case strings.EqualFold(k, "externalId"):
			if v == nil {
				continue
			}
			s, ok := v.(string)
			if !ok || len(s) > maxStringBytes {
				return nil, scimErr(400, "invalidValue", "externalId must be a string")
			}
			out["externalId"] = s
		case strings.EqualFold(k, rt.Core.ID):
			m, ok := v.(map[string]any)
			if !ok {
				return nil, scimErr(400, "invalidValue", k+" must be an object")
			}
			if err := normalizeAttrs(m, rt.Core.Attrs, "", out); err != nil {
				return nil, err
			}
		default:
			if ext, ok := rt.extension(k); ok {
				if v == nil {
					continue
				}
				m, ok := v.(map[string]any)
				if !ok {
					return nil, scimErr(400, "invalidValue", ext.ID+" must be an object")
				}
				sub := map[string]any{}
				if err := normalizeAttrs(m, ext.Attrs, ext.ID+":", sub); err != nil {
					return nil, err
				}
				if len(sub) > 0 {
					out[ext.ID] = sub
				}
				continue
			}
			if err := normalizeAttrs(map[string]any{k: v}, rt.Core.Attrs, "", out); err != nil {
				return nil, err
			}
		}
	}
	for _, a := range rt.Core.Attrs {
		if a.Required {
			if s, _ := out[a.Name].(string); strings.TrimSpace(s) == "" {
				return nil, scimErr(400, "invalidValue", a.Name+" is required: a non-empty string")
			}
		}
	}
	return out, nil
}

// normalizeAttrs checks the members of in against attrs into out; at prefixes names in
// errors.
func normalizeAttrs(in map[string]any, attrs []attr, at string, out map[string]any) error {
	for k, v := range in {
		a, ok := find(attrs, k)
		if !ok || a.Mutability == "readOnly" || a.Mutability == "writeOnly" {
			continue
		}
		if v == nil {
			delete(out, a.Name)
			continue
		}
		nv, err := value(a, v, at+a.Name)
		if err != nil {
			return err
		}
		if nv != nil {
			out[a.Name] = nv
		}
	}
	return nil
}

// value checks one attribute's value; nil drops it (an empty list, an empty object).
func value(a attr, v any, at string) (any, error) {
	if a.Multi {
		list, ok := v.([]any)
		if !ok {
			list = []any{v} // a single value where a list belongs: one element
		}
		if len(list) > maxValues {
			return nil, scimErr(400, "invalidValue", at+" has more than 10000 values")
		}
		single := a
		single.Multi = false
		out := make([]any, 0, len(list))
		for _, e := range list {
			if e == nil {
				continue
			}
			ne, err := value(single, e, at)
			if err != nil {
				return nil, err
			}
			if ne != nil {
				out = append(out, ne)
			}
		}
		if len(out) == 0 {
			return nil, nil
		}
		return out, nil
	}
	switch a.Type {
	case tString, tReference, tDateTime:
		s, ok := v.(string)
		if !ok {
			return nil, scimErr(400, "invalidValue", at+" must be a string")
		}
		if len(s) > maxStringBytes {
			return nil, scimErr(400, "invalidValue", at+" is longer than 4096 bytes")
		}
		return s, nil
	case tBoolean:
		switch x := v.(type) {
		case bool:
			return x, nil
		case string: // Microsoft Entra sends "True" and "False"
			switch strings.ToLower(x) {
			case "true":
				return true, nil
			case "false":
				return false, nil
			}
		}
		return nil, scimErr(400, "invalidValue", at+" must be a boolean")
	case tInteger, tDecimal:
		f, ok := v.(float64)
		if !ok || (a.Type == tInteger && f != math.Trunc(f)) {
			return nil, scimErr(400, "invalidValue", at+" must be a number")
		}
		return f, nil
	case tComplex:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, scimErr(400, "invalidValue", at+" must be an object")
		}
		out := map[string]any{}
		if err := normalizeAttrs(m, a.Sub, at+".", out); err != nil {
			return nil, err
		}
		if len(out) == 0 {
			return nil, nil
		}
		return out, nil
	}
	return nil, scimErr(400, "invalidValue", at+" has a type authcore does not take")
}

// decodeObject reads a request body that must be one JSON object: an empty body, JSON
// that does not parse or anything but an object is 400 invalidSyntax.
func decodeObject(body []byte) (map[string]any, error) {
	if len(strings.TrimSpace(string(body))) == 0 {
		return nil, scimErr(400, "invalidSyntax", "the request has no body: send a JSON object")
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil || m == nil {
		return nil, scimErr(400, "invalidSyntax", "the body is not a JSON object")
	}
	return m, nil
}

// clone copies a document deeply (PATCH works on a copy, so a failed one changes nothing).
func clone(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = clone(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = clone(e)
		}
		return l
	}
	return v
}
