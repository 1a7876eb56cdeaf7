package scim

import (
	"encoding/json"
	"fmt"
	"strings"

	filter "github.com/scim2/filter-parser/v2"
)

// maxOperations bounds one PATCH request.
const maxOperations = 1000

// applyPatch applies an RFC 7644 §3.5.2 PatchOp body to a copy of doc (a resource's
// stored attributes, id of the resource) and returns the result, normalized. It takes
// what Okta and Microsoft Entra send: ops in any case ("Replace", "Add"), a replace
// without a path whose value is an object of attributes ({"active": false}), paths with
// value filters (members[value eq "…"], emails[type eq "work"].value), and a remove of
// members whose value lists the members to take out.
func applyPatch(doc map[string]any, body map[string]any, rt *resourceType, id string) (map[string]any, error) {
	raw, _, ok := lookup(body, "Operations")
	ops, isList := raw.([]any)
	switch {
	case !ok || !isList:
		return nil, scimErr(400, "invalidSyntax", "a PatchOp has Operations: a list of operations")
	case len(ops) == 0:
		return nil, scimErr(400, "invalidSyntax", "Operations is empty")
	case len(ops) > maxOperations:
		return nil, scimErr(400, "tooMany", "at most 1000 operations in one PATCH")
	}
	out := clone(doc).(map[string]any)
	for i, o := range ops {
		op, ok := o.(map[string]any)
		if !ok {
			return nil, scimErr(400, "invalidSyntax", fmt.Sprintf("operation %d is not an object", i))
		}
		name, _, _ := lookup(op, "op")
		verb, _ := name.(string)
		verb = strings.ToLower(verb)
		if verb != "add" && verb != "replace" && verb != "remove" {
			return nil, scimErr(400, "invalidSyntax", fmt.Sprintf("operation %d: op must be add, replace or remove", i))
		}
		v, _, hasValue := lookup(op, "value")
		p, _, hasPath := lookup(op, "path")
		if hasPath && p != nil {
			ps, ok := p.(string)
			if !ok {
				return nil, scimErr(400, "invalidPath", fmt.Sprintf("operation %d: path must be a string", i))
			}
			if verb != "remove" && !hasValue {
				return nil, scimErr(400, "invalidValue", fmt.Sprintf("operation %d: %s needs a value", i, verb))
			}
			if err := applyPath(out, rt, id, verb, ps, v, hasValue); err != nil {
				return nil, err
			}
			continue
		}
		if verb == "remove" {
			return nil, scimErr(400, "noTarget", fmt.Sprintf("operation %d: remove needs a path", i))
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, scimErr(400, "invalidValue", fmt.Sprintf("operation %d: without a path, value must be an object of attributes", i))
		}
		for k, av := range m {
			if ext, ok := rt.extension(k); ok {
				sub, ok := av.(map[string]any)
				if !ok {
					return nil, scimErr(400, "invalidValue", ext.ID+" must be an object")
				}
				for sk, sv := range sub {
					if err := applyPath(out, rt, id, verb, ext.ID+":"+sk, sv, true); err != nil {
						return nil, err
					}
				}
				continue
			}
			if err := applyPath(out, rt, id, verb, k, av, true); err != nil {
				return nil, err
			}
		}
	}
	return normalize(out, rt)
}

// applyPath applies one operation at path.
func applyPath(doc map[string]any, rt *resourceType, id, verb, path string, v any, hasValue bool) error {
	switch {
	case strings.EqualFold(path, "schemas") || strings.EqualFold(path, "meta"):
		return nil // not the client's to change; Okta and Entra send them back unchanged
	case strings.EqualFold(path, "id"):
		if s, _ := v.(string); verb != "remove" && s == id {
			return nil
		}
		return scimErr(400, "mutability", "id is read-only")
	}
	p, err := filter.ParsePath([]byte(path))
	if err != nil {
		return scimErr(400, "invalidPath", "the path does not parse (RFC 7644 §3.5.2): "+path)
	}
	unescape(p.ValueExpression)
	container, attrs := doc, rt.Core.Attrs
	if p.AttributePath.URIPrefix != nil {
		uri := *p.AttributePath.URIPrefix
		switch ext, ok := rt.extension(uri); {
		case strings.EqualFold(uri, rt.Core.ID):
		case ok:
			m, _ := doc[ext.ID].(map[string]any)
			if m == nil {
				m = map[string]any{}
				doc[ext.ID] = m
			}
			container, attrs = m, ext.Attrs
		default:
			return scimErr(400, "invalidPath", "no such schema: "+uri)
		}
	}
	if strings.EqualFold(p.AttributePath.AttributeName, "externalId") && p.AttributePath.URIPrefix == nil {
		attrs = commonAttrs
	}
	def, ok := find(attrs, p.AttributePath.AttributeName)
	if !ok {
		return scimErr(400, "invalidPath", "no such attribute: "+p.AttributePath.AttributeName)
	}
	if def.Mutability == "readOnly" {
		return scimErr(400, "mutability", def.Name+" is read-only")
	}
	if def.Mutability == "writeOnly" {
		return nil // the password: accepted, never kept
	}
	if p.ValueExpression != nil {
		return applyFiltered(container, def, verb, p, v)
	}
	if sub := p.AttributePath.SubAttribute; sub != nil {
		subDef, ok := find(def.Sub, *sub)
		if !ok {
			return scimErr(400, "invalidPath", "no such attribute: "+def.Name+"."+*sub)
		}
		if def.Multi { // every element's sub-attribute
			for _, e := range asList(container[def.Name]) {
				if m, ok := e.(map[string]any); ok {
					setSub(m, subDef.Name, verb, v)
				}
			}
			return nil
		}
		m, _ := container[def.Name].(map[string]any)
		if m == nil {
			if verb == "remove" {
				return nil
			}
			m = map[string]any{}
			container[def.Name] = m
		}
		setSub(m, subDef.Name, verb, v)
		return nil
	}
	switch {
	case verb == "remove" && def.Multi && hasValue && v != nil:
		// Entra: {"op":"Remove","path":"members","value":[{"value":"<id>"}]}
		drop := map[string]bool{}
		for _, e := range asList(v) {
			if m, ok := e.(map[string]any); ok {
				if s, _, _ := lookup(m, "value"); s != nil {
					drop[fmt.Sprint(s)] = true
				}
			}
		}
		var keep []any
		for _, e := range asList(container[def.Name]) {
			if m, ok := e.(map[string]any); ok && drop[fmt.Sprint(m["value"])] {
				continue
			}
			keep = append(keep, e)
		}
		setOrDelete(container, def.Name, keep)
	case verb == "remove":
		delete(container, def.Name)
	case def.Multi && verb == "add":
		list, _ := container[def.Name].([]any)
		// By an index of what the list holds: adding n values to m costs n+m, where
		// comparing each with every other took minutes of CPU for a 1 MiB group PATCH.
		held := make(map[string]bool, len(list))
		for _, x := range list {
			held[valueKey(x)] = true
		}
		for _, e := range asList(v) {
			if k := valueKey(e); !held[k] {
				held[k] = true
				list = append(list, e)
			}
		}
		container[def.Name] = list
	case def.Type == tComplex && !def.Multi:
		m, ok := v.(map[string]any)
		if !ok {
			return scimErr(400, "invalidValue", def.Name+" must be an object")
		}
		cur, _ := container[def.Name].(map[string]any)
		if cur == nil {
			cur = map[string]any{}
			container[def.Name] = cur
		}
		for k, sv := range m {
			setSub(cur, k, "replace", sv)
		}
	default:
		container[def.Name] = v
	}
	return nil
}

// applyFiltered applies an operation whose path has a value filter
// (emails[type eq "work"].value, members[value eq "…"]).
func applyFiltered(container map[string]any, def attr, verb string, p filter.Path, v any) error {
	if !def.Multi || def.Type != tComplex {
		return scimErr(400, "invalidPath", def.Name+" is not a multi-valued complex attribute")
	}
	var subDef *attr
	if p.SubAttribute != nil {
		s, ok := find(def.Sub, *p.SubAttribute)
		if !ok {
			return scimErr(400, "invalidPath", "no such attribute: "+def.Name+"."+*p.SubAttribute)
		}
		subDef = &s
	}
	list := asList(container[def.Name])
	if container[def.Name] == nil {
		list = nil
	}
	sc := scope{attrs: def.Sub}
	var keep []any
	matched := 0
	for _, e := range list {
		m, ok := e.(map[string]any)
		hit := false
		if ok {
			var err error
			if hit, err = matches(p.ValueExpression, m, sc); err != nil {
				return err
			}
		}
		if !hit {
			keep = append(keep, e)
			continue
		}
		matched++
		switch {
		case verb == "remove" && subDef == nil:
			continue
		case subDef != nil:
			setSub(m, subDef.Name, verb, v)
		default:
			nv, ok := v.(map[string]any)
			if !ok {
				return scimErr(400, "invalidValue", def.Name+" values are objects")
			}
			for k, sv := range nv {
				setSub(m, k, "replace", sv)
			}
		}
		keep = append(keep, m)
	}
	if matched == 0 && verb != "remove" {
		// Entra adds (and replaces) a value that is not there yet by naming it with a
		// filter: phoneNumbers[type eq "work"].value. The filter's equalities make it.
		elem, ok := equalities(p.ValueExpression)
		if !ok {
			return scimErr(400, "noTarget", "no value of "+def.Name+" matches the path's filter")
		}
		if subDef != nil {
			elem[subDef.Name] = v
		} else if nv, ok := v.(map[string]any); ok {
			for k, sv := range nv {
				setSub(elem, k, "replace", sv)
			}
		}
		keep = append(keep, elem)
	}
	setOrDelete(container, def.Name, keep)
	return nil
}

// equalities is the element a filter of equalities joined by and describes.
func equalities(e filter.Expression) (map[string]any, bool) {
	switch x := e.(type) {
	case *filter.AttributeExpression:
		if x.Operator != filter.EQ || x.AttributePath.SubAttribute != nil || x.AttributePath.URIPrefix != nil {
			return nil, false
		}
		return map[string]any{x.AttributePath.AttributeName: x.CompareValue}, true
	case *filter.LogicalExpression:
		if x.Operator != filter.AND {
			return nil, false
		}
		l, ok := equalities(x.Left)
		r, ok2 := equalities(x.Right)
		if !ok || !ok2 {
			return nil, false
		}
		for k, v := range r {
			l[k] = v
		}
		return l, true
	}
	return nil, false
}

// setSub sets (or, for remove, deletes) m's member name, whatever case m spells it in.
func setSub(m map[string]any, name, verb string, v any) {
	for k := range m {
		if strings.EqualFold(k, name) {
			delete(m, k)
		}
	}
	if verb != "remove" {
		m[name] = v
	}
}

func setOrDelete(m map[string]any, k string, list []any) {
	if len(list) == 0 {
		delete(m, k)
		return
	}
	m[k] = list
}

// valueKey is what a multi-valued attribute holds each of once (Entra adds a member that
// is already there): an element with a value by its value, any other by the whole of it.
// Both are decoded JSON, whose encoding (map keys sorted) is the same for equal values.
func valueKey(e any) string {
	if m, ok := e.(map[string]any); ok {
		if v, _, _ := lookup(m, "value"); v != nil {
			b, _ := json.Marshal(v)
			return "v" + string(b)
		}
	}
	b, _ := json.Marshal(e)
	return "e" + string(b)
}
