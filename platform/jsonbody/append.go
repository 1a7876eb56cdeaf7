package jsonbody

import (
	"encoding/json"
	"strconv"
	"time"
)

// The Append functions write values exactly as encoding/json encodes them, for the few
// answers on a hot path that are encoded by hand: encoding/json reaches every value by
// reflection, which costs an introspection or a "who am I" answer as much as the rest of
// its request. Each writes the common case itself and hands anything else to
// encoding/json, so the two can differ only where FuzzAppendMatchesEncodingJSON looks.

// AppendString writes s quoted when it is printable ASCII with nothing encoding/json
// escapes (a quote, a backslash, <, > or &); anything else goes through encoding/json.
func AppendString(dst []byte, s string) ([]byte, error) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return AppendJSON(dst, s)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"'), nil
}

// AppendStrings writes ss as a JSON array of strings; nil is null, as encoding/json has it.
func AppendStrings(dst []byte, ss []string) ([]byte, error) {
	if ss == nil {
		return append(dst, "null"...), nil
	}
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = AppendString(dst, s); err != nil {
			return nil, err
		}
	}
	return append(dst, ']'), nil
}

// AppendTime writes t as time.Time's MarshalJSON does: its AppendText (strict RFC 3339,
// the same checks and errors) in quotes, with no allocation of its own.
func AppendTime(dst []byte, t time.Time) ([]byte, error) {
	dst = append(dst, '"')
	dst, err := t.AppendText(dst)
	if err != nil {
		return nil, err
	}
	return append(dst, '"'), nil
}

// AppendJSON writes v through encoding/json.
func AppendJSON(dst []byte, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(dst, b...), nil
}

// Members writes one JSON object member by member, in the order given, as encoding/json
// writes a struct's fields; the first error stays and the rest is skipped. Begin opens it,
// End closes it.
type Members struct {
	buf   []byte
	first bool
	err   error
}

// Begin opens an object appended to dst.
func Begin(dst []byte) Members { return Members{buf: append(dst, '{'), first: true} }

// name writes the separator and the member's name, which must need no escaping.
func (m *Members) name(n string) {
	if !m.first {
		m.buf = append(m.buf, ',')
	}
	m.first = false
	m.buf = append(m.buf, '"')
	m.buf = append(m.buf, n...)
	m.buf = append(m.buf, '"', ':')
}

func (m *Members) String(name, v string) {
	if m.err == nil {
		m.name(name)
		m.buf, m.err = AppendString(m.buf, v)
	}
}

// StringOrNull writes null for nil, as encoding/json does for a *string.
func (m *Members) StringOrNull(name string, v *string) {
	if v == nil {
		m.Null(name)
		return
	}
	m.String(name, *v)
}

func (m *Members) Strings(name string, v []string) {
	if m.err == nil {
		m.name(name)
		m.buf, m.err = AppendStrings(m.buf, v)
	}
}

func (m *Members) Bool(name string, v bool) {
	if m.err == nil {
		m.name(name)
		m.buf = strconv.AppendBool(m.buf, v)
	}
}

func (m *Members) Int(name string, v int64) {
	if m.err == nil {
		m.name(name)
		m.buf = strconv.AppendInt(m.buf, v, 10)
	}
}

func (m *Members) Null(name string) {
	if m.err == nil {
		m.name(name)
		m.buf = append(m.buf, "null"...)
	}
}

func (m *Members) Time(name string, t time.Time) {
	if m.err == nil {
		m.name(name)
		m.buf, m.err = AppendTime(m.buf, t)
	}
}

// TimeOrNull writes null for nil, as encoding/json does for a *time.Time.
func (m *Members) TimeOrNull(name string, t *time.Time) {
	if t == nil {
		m.Null(name)
		return
	}
	m.Time(name, *t)
}

// JSON writes v through encoding/json.
func (m *Members) JSON(name string, v any) {
	if m.err == nil {
		m.name(name)
		m.buf, m.err = AppendJSON(m.buf, v)
	}
}

// End closes the object: the bytes, or the first error.
func (m *Members) End() ([]byte, error) {
	if m.err != nil {
		return nil, m.err
	}
	return append(m.buf, '}'), nil
}
