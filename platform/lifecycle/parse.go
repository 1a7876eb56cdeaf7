package lifecycle

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"entgo.io/ent/schema/field"

	"github.com/authcore/authcore/platform/apperr"
	"github.com/authcore/authcore/platform/jsonbody"
)

// Bounds of a mint's expiresInDays (SPEC §6, as badges).
const minDays, maxDays = 1, 365

// ParseMint reads a mint's body for a kind with no Parse of its own, as SPEC §6 reads a
// badge's: a JSON object; each own field by its JSON name, typed as its ent schema
// declares it, required unless optional or defaulted, checked by the schema's validators;
// expiresInDays an integer from 1 to 365 (absent: never, unless the kind's credentials
// must expire). Unknown fields are ignored; every violation is listed.
func (l *Lifecycle) ParseMint(body []byte) (Mint, error) {
	o, ok := jsonbody.Parse(body)
	if !ok {
		return Mint{}, apperr.Validation(apperr.NotAnObject)
	}
	m := Mint{Own: map[string]any{}}
	var issues []apperr.Issue
	for _, c := range l.t.own {
		v, reason := c.parse(o)
		if reason != "" {
			issues = append(issues, apperr.Issue{Field: camel(c.name), Reason: reason})
			continue
		}
		m.Own[c.name] = v
	}
	switch v, whole, st := o.Integer("expiresInDays"); {
	case st == jsonbody.Absent && l.t.mixin.ExpiresRequired:
		issues = append(issues, apperr.Issue{Field: "expiresInDays", Reason: "is required"})
	case st == jsonbody.Absent:
	case st != jsonbody.OK || !whole || v < minDays || v > maxDays:
		issues = append(issues, apperr.Issue{Field: "expiresInDays", Reason: fmt.Sprintf("must be an integer from %d to %d", minDays, maxDays)})
	default:
		at := l.deps.Kit.Clock.Now().Add(time.Duration(v) * 24 * time.Hour).Truncate(time.Second)
		m.ExpiresAt = &at
	}
	if len(issues) > 0 {
		return Mint{}, apperr.Validation(issues...)
	}
	return m, nil
}

// parse reads the column's value from the body, or says what is wrong with it.
func (c column) parse(o jsonbody.Object) (any, string) {
	name := camel(c.name)
	if _, present := o[name]; !present {
		switch {
		case c.desc.Default != nil:
			return c.defaultValue(), ""
		case c.nullable:
			return nil, ""
		case c.strings:
			return []string{}, ""
		}
		return nil, "is required"
	}
	switch c.typ {
	case field.TypeString, field.TypeEnum:
		s, st := o.String(name)
		switch {
		case st == jsonbody.Null && c.nullable:
			return nil, ""
		case st != jsonbody.OK:
			return nil, "must be a string"
		case strings.IndexFunc(s, unicode.IsControl) >= 0:
			return nil, "must not contain control characters"
		case c.desc.Size > 0 && len(s) > c.desc.Size:
			return nil, fmt.Sprintf("must be at most %d bytes", c.desc.Size)
		case len(c.desc.Enums) > 0 && !slices.ContainsFunc(c.desc.Enums, func(e struct{ N, V string }) bool { return e.V == s }):
			return nil, "must be one of " + enumValues(c.desc.Enums)
		}
		for _, v := range c.desc.Validators {
			if f, ok := v.(func(string) error); ok && f(s) != nil {
				if utf8.RuneCountInString(s) == 0 {
					return nil, "must not be empty"
				}
				return nil, "is not valid: " + f(s).Error()
			}
		}
		if c.nullable {
			return &s, ""
		}
		return s, ""
	case field.TypeJSON:
		if c.strings {
			ss, st := o.Strings(name)
			if st != jsonbody.OK {
				return nil, "must be an array of strings"
			}
			return ss, ""
		}
		return json.RawMessage(o[name]), ""
	case field.TypeBool:
		b, st := o.Bool(name)
		if st != jsonbody.OK {
			return nil, "must be true or false"
		}
		return b, ""
	case field.TypeFloat64:
		f, st := o.Number(name)
		if st != jsonbody.OK {
			return nil, "must be a number"
		}
		return f, ""
	case field.TypeTime:
		s, st := o.String(name)
		t, err := time.Parse(time.RFC3339, s)
		if st != jsonbody.OK || err != nil {
			return nil, "must be a date-time (RFC 3339)"
		}
		return t.UTC(), ""
	default: // the integers
		n, whole, st := o.Integer(name)
		if st != jsonbody.OK || !whole {
			return nil, "must be an integer"
		}
		return n, ""
	}
}

// defaultValue is the field's default: ent keeps a value, or a function making one.
func (c column) defaultValue() any {
	if f := reflect.ValueOf(c.desc.Default); f.Kind() == reflect.Func && f.Type().NumIn() == 0 && f.Type().NumOut() == 1 {
		return f.Call(nil)[0].Interface()
	}
	return c.desc.Default
}

func enumValues(es []struct{ N, V string }) string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.V
	}
	return strings.Join(out, ", ")
}
