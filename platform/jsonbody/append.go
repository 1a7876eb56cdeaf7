package jsonbody

import (
	"encoding/json"
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
