package scim

import (
	"encoding/json"
	"strings"
	"time"

	filter "github.com/scim2/filter-parser/v2"
)

// The filter is parsed by github.com/scim2/filter-parser (RFC 7644 §3.4.2.2's ABNF), and
// evaluated here: that library stops at the syntax tree, and no maintained Go library
// evaluates SCIM filters over documents whose attributes follow RFC 7643's rules (names
// without case, caseExact per attribute, multi-valued attributes matching when any value
// does, dateTime ordering). The evaluator reads the same documents the endpoints return,
// so what a filter matches is what a client would see.

// maxFilterLen bounds a filter's text; the parser is a recursive descent.
const maxFilterLen = 4096

// parseFilter parses a filter; a syntax error is 400 invalidFilter.
func parseFilter(s string) (filter.Expression, error) {
	if len(s) > maxFilterLen {
		return nil, scimErr(400, "invalidFilter", "the filter is longer than 4096 characters")
	}
	e, err := filter.ParseFilter([]byte(s))
	if err != nil || e == nil {
		return nil, scimErr(400, "invalidFilter", "the filter does not parse (RFC 7644 §3.4.2.2)")
	}
	unescape(e)
	return e, nil
}

// scope is where a filter's attribute names resolve: a resource's top level (with its
// extensions) or the sub-attributes of a multi-valued complex attribute (a value path).
type scope struct {
	rt    *resourceType
	attrs []attr
}

func topScope(rt *resourceType) scope { return scope{rt: rt, attrs: rt.topAttrs()} }

// matches evaluates e over doc.
func matches(e filter.Expression, doc map[string]any, sc scope) (bool, error) {
	switch x := e.(type) {
	case *filter.LogicalExpression:
		l, err := matches(x.Left, doc, sc)
		if err != nil {
			return false, err
		}
		if x.Operator == filter.AND && !l {
			return false, nil
		}
		if x.Operator == filter.OR && l {
			return true, nil
		}
		return matches(x.Right, doc, sc)
	case *filter.NotExpression:
		m, err := matches(x.Expression, doc, sc)
		return !m, err
	case *filter.ValuePath:
		def, vals := elements(doc, sc, x.AttributePath)
		sub := scope{rt: sc.rt, attrs: def.Sub}
		for _, v := range vals {
			elem, ok := v.(map[string]any)
			if !ok {
				continue
			}
			m, err := matches(x.ValueFilter, elem, sub)
			if err != nil || m {
				return m, err
			}
		}
		return false, nil
	case *filter.AttributeExpression:
		def, vals := resolve(doc, sc, x.AttributePath)
		return compare(def, vals, x.Operator, x.CompareValue)
	}
	return false, scimErr(400, "invalidFilter", "unsupported filter expression")
}

// elements are the values of the multi-valued attribute p names, each whole.
func elements(doc map[string]any, sc scope, p filter.AttributePath) (attr, []any) {
	base, attrs := container(doc, sc, p)
	def, _ := find(attrs, p.AttributeName)
	if base == nil {
		return def, nil
	}
	v, _, ok := lookup(base, p.AttributeName)
	if !ok || v == nil {
		return def, nil
	}
	return def, asList(v)
}

// container is the object p's attribute is a member of (the resource, or an extension's
// object) and the attributes defined there; nil when p names an unknown schema.
func container(doc map[string]any, sc scope, p filter.AttributePath) (map[string]any, []attr) {
	if p.URIPrefix == nil || sc.rt == nil {
		return doc, sc.attrs
	}
	uri := *p.URIPrefix
	if strings.EqualFold(uri, sc.rt.Core.ID) {
		return doc, sc.attrs
	}
	if ext, ok := sc.rt.extension(uri); ok {
		v, _, _ := lookup(doc, ext.ID)
		m, _ := v.(map[string]any)
		return m, ext.Attrs
	}
	return nil, nil
}

// resolve is the definition of the attribute p names in sc and its values in doc: one
// element per value of a multi-valued attribute, the "value" sub-attribute of a
// multi-valued complex one named without a sub-attribute (RFC 7644 §3.4.2.2).
func resolve(doc map[string]any, sc scope, p filter.AttributePath) (attr, []any) {
	base, attrs := container(doc, sc, p)
	def, _ := find(attrs, p.AttributeName)
	if base == nil {
		return def, nil
	}
	v, _, ok := lookup(base, p.AttributeName)
	if !ok || v == nil {
		return def, nil
	}
	if p.SubAttribute != nil {
		subDef, _ := find(def.Sub, *p.SubAttribute)
		var out []any
		for _, e := range asList(v) {
			if m, ok := e.(map[string]any); ok {
				if sv, _, ok := lookup(m, *p.SubAttribute); ok && sv != nil {
					out = append(out, asList(sv)...)
				}
			}
		}
		return subDef, out
	}
	if def.Type == tComplex && def.Multi {
		valueDef, _ := find(def.Sub, "value")
		var out []any
		for _, e := range asList(v) {
			if m, ok := e.(map[string]any); ok {
				if sv, _, ok := lookup(m, "value"); ok && sv != nil {
					out = append(out, sv)
				}
			}
		}
		return valueDef, out
	}
	return def, asList(v)
}

func asList(v any) []any {
	if l, ok := v.([]any); ok {
		return l
	}
	return []any{v}
}

// compare applies op to each value: true when any value satisfies it; ne is the negation
// of eq, so it matches an absent attribute, and eq null matches exactly those (RFC 7644
// §3.4.2.2 leaves both open).
func compare(def attr, vals []any, op filter.CompareOperator, want any) (bool, error) {
	switch op {
	case filter.PR:
		for _, v := range vals {
			if present(v) {
				return true, nil
			}
		}
		return false, nil
	case filter.NE:
		m, err := compare(def, vals, filter.EQ, want)
		return !m, err
	case filter.EQ, filter.CO, filter.SW, filter.EW, filter.GT, filter.GE, filter.LT, filter.LE:
	default:
		return false, scimErr(400, "invalidFilter", "unknown operator "+string(op))
	}
	if want == nil {
		if op != filter.EQ {
			return false, scimErr(400, "invalidFilter", "null compares with eq and ne only")
		}
		for _, v := range vals {
			if present(v) {
				return false, nil
			}
		}
		return true, nil
	}
	if b, ok := want.(bool); ok {
		if op != filter.EQ {
			return false, scimErr(400, "invalidFilter", "a boolean compares with eq and ne only")
		}
		for _, v := range vals {
			if vb, ok := v.(bool); ok && vb == b {
				return true, nil
			}
		}
		return false, nil
	}
	for _, v := range vals {
		if one(def, v, op, want) {
			return true, nil
		}
	}
	return false, nil
}

func present(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case string:
		return x != ""
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	}
	return true
}

// one compares a single value with a string or a number.
func one(def attr, v any, op filter.CompareOperator, want any) bool {
	switch w := want.(type) {
	case string:
		s, ok := v.(string)
		if !ok {
			return false
		}
		if def.Type == tDateTime {
			if a, err := time.Parse(time.RFC3339Nano, s); err == nil {
				if b, err := time.Parse(time.RFC3339Nano, w); err == nil {
					return ordered(op, a.Compare(b))
				}
			}
		}
		if !def.CaseExact {
			s, w = strings.ToLower(s), strings.ToLower(w)
		}
		switch op {
		case filter.CO:
			return strings.Contains(s, w)
		case filter.SW:
			return strings.HasPrefix(s, w)
		case filter.EW:
			return strings.HasSuffix(s, w)
		}
		return ordered(op, strings.Compare(s, w))
	case int, float64, json.Number:
		a, ok := number(v)
		b, _ := number(w)
		if !ok {
			return false
		}
		switch {
		case a < b:
			return ordered(op, -1)
		case a > b:
			return ordered(op, 1)
		}
		return ordered(op, 0)
	}
	return false
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case float64:
		return x, true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

// ordered is whether a comparison's result c satisfies op (eq and the orderings; the
// substring operators never hold for numbers or times).
func ordered(op filter.CompareOperator, c int) bool {
	switch op {
	case filter.EQ:
		return c == 0
	case filter.GT:
		return c > 0
	case filter.GE:
		return c >= 0
	case filter.LT:
		return c < 0
	case filter.LE:
		return c <= 0
	}
	return false
}

// unescape decodes the JSON escapes of a parsed filter's strings ("a\"b"), which the
// parser leaves as written.
func unescape(e filter.Expression) {
	switch x := e.(type) {
	case *filter.LogicalExpression:
		unescape(x.Left)
		unescape(x.Right)
	case *filter.NotExpression:
		unescape(x.Expression)
	case *filter.ValuePath:
		unescape(x.ValueFilter)
	case *filter.AttributeExpression:
		if s, ok := x.CompareValue.(string); ok && strings.ContainsRune(s, '\\') {
			var d string
			if json.Unmarshal([]byte(`"`+s+`"`), &d) == nil {
				x.CompareValue = d
			}
		}
	}
}
