// Package jsonbody reads a request body as a JSON object field by field, so handlers can
// report every violation with its field (the seed's "issues") instead of failing on the
// first type mismatch the way encoding/json into a struct does. It also writes, by hand
// and to the same bytes as encoding/json, the few answers on a hot path.
package jsonbody

import (
	"bytes"
	"encoding/json"
	"math"

	"github.com/authcore/authcore/platform/apperr"
)

// Object is a parsed JSON object body.
type Object map[string]json.RawMessage

// Parse reads body as a JSON object. ok is false for an empty body, invalid JSON, or JSON
// that is not an object (an array, a string, null).
func Parse(body []byte) (Object, bool) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' {
		return nil, false
	}
	var o Object
	if err := json.Unmarshal(body, &o); err != nil {
		return nil, false
	}
	return o, true
}

// ParseOrEmpty is Parse for routes where a missing or unparsable body means {}.
func ParseOrEmpty(body []byte) Object {
	o, ok := Parse(body)
	if !ok {
		return Object{}
	}
	return o
}

// State is what a field holds.
type State int

const (
	Absent    State = iota // the key is not there
	Null                   // the key holds null
	WrongType              // the key holds another JSON type
	OK
)

func (o Object) raw(name string) (json.RawMessage, State) {
	r, ok := o[name]
	if !ok {
		return nil, Absent
	}
	if bytes.Equal(bytes.TrimSpace(r), []byte("null")) {
		return nil, Null
	}
	return r, OK
}

// RawObject reads a JSON object field as it was sent.
func (o Object) RawObject(name string) (json.RawMessage, State) {
	r, st := o.raw(name)
	if st != OK {
		return nil, st
	}
	if t := bytes.TrimSpace(r); len(t) == 0 || t[0] != '{' {
		return nil, WrongType
	}
	return r, OK
}

// String reads a JSON string field.
func (o Object) String(name string) (string, State) {
	r, st := o.raw(name)
	if st != OK {
		return "", st
	}
	if s, ok := plainString(r); ok {
		return s, OK
	}
	var s string
	if json.Unmarshal(r, &s) != nil {
		return "", WrongType
	}
	return s, OK
}

// plainString decodes a JSON string without escapes the cheap way: most field values are
// such strings, and Unmarshal's reflection costs more than the rest of a small request.
// Anything else (escapes, non-ASCII, not a string) is left to encoding/json.
func plainString(r json.RawMessage) (string, bool) {
	if len(r) < 2 || r[0] != '"' || r[len(r)-1] != '"' {
		return "", false
	}
	body := r[1 : len(r)-1]
	for _, c := range body {
		if c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			return "", false
		}
	}
	return string(body), true
}

// Bool reads a JSON boolean field.
func (o Object) Bool(name string) (bool, State) {
	r, st := o.raw(name)
	if st != OK {
		return false, st
	}
	var b bool
	if json.Unmarshal(r, &b) != nil {
		return false, WrongType
	}
	return b, OK
}

// Number reads a JSON number field (finite).
func (o Object) Number(name string) (float64, State) {
	r, st := o.raw(name)
	if st != OK {
		return 0, st
	}
	var f float64
	if json.Unmarshal(r, &f) != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, WrongType
	}
	return f, OK
}

// Integer reads a JSON number field that is a whole number (1 and 1.0 are, 1.5 is not).
// Its second result is false for a number with a fraction.
func (o Object) Integer(name string) (int64, bool, State) {
	f, st := o.Number(name)
	if st != OK {
		return 0, false, st
	}
	if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false, OK
	}
	return int64(f), true, OK
}

// Strings reads a JSON array of strings.
func (o Object) Strings(name string) ([]string, State) {
	r, st := o.raw(name)
	if st != OK {
		return nil, st
	}
	var ss []string
	if json.Unmarshal(r, &ss) != nil {
		return nil, WrongType
	}
	return ss, OK
}

// Fields reads a body that must be a JSON object field by field and collects every
// violation, for one validation_failed answer listing them all.
type Fields struct {
	Object
	notObject bool
	issues    []apperr.Issue
}

// Read starts reading body. A body that is missing or not an object is one violation;
// its fields then all read as absent.
func Read(body []byte) *Fields {
	o, ok := Parse(body)
	return &Fields{Object: o, notObject: !ok}
}

// Fail records a violation of field.
func (f *Fields) Fail(field, reason string) {
	f.issues = append(f.issues, apperr.Issue{Field: field, Reason: reason})
}

// RequiredString reads a string field that must be present.
func (f *Fields) RequiredString(name string) string {
	s, st := f.String(name)
	if st != OK {
		f.Fail(name, "required string")
	}
	return s
}

// Err is the validation_failed answer, or nil when nothing was violated. A body that is
// not an object is answered as that alone.
func (f *Fields) Err() error {
	if f.notObject {
		return apperr.Validation(apperr.NotAnObject)
	}
	if len(f.issues) > 0 {
		return apperr.Validation(f.issues...)
	}
	return nil
}
