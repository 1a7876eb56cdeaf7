package s3

import "unicode/utf8"

// scanVerify reads the body every storage gateway sends — one object of the known string
// fields, headers an object of strings, no escapes — by hand, in one pass over the bytes.
// Anything else (an escape, another type, an unknown or repeated name, invalid UTF-8,
// trailing data) is not ok, and decodeVerify reads it with jsontext. Hand-written because
// the profile of `authcore bench --wrk` scenario s3/verify shows jsontext's token reading
// as a third of the route's own CPU; FuzzDecodeVerify holds it to the field-by-field
// reading, like decodeVerify.
//
// The body is copied to a string once and every field is a slice of it: one allocation
// where a copy per field made a dozen.
func scanVerify(body []byte) (verifyFields, bool) {
	s := scanner{b: string(body)}
	var v verifyFields
	if !s.byte('{') {
		return v, false
	}
	const method, path, query, payloadHash, headers = 1, 2, 4, 8, 16
	seen := 0
	for first := true; ; first = false {
		if s.byte('}') {
			if first || !s.end() {
				return v, false
			}
			break
		}
		if !first && !s.byte(',') {
			return v, false
		}
		name, ok := s.str()
		if !ok || !s.byte(':') {
			return v, false
		}
		var field int
		switch name {
		case "method":
			field = method
			v.method, ok = s.str()
		case "path":
			field = path
			v.path, ok = s.str()
		case "query":
			field = query
			var q string
			q, ok = s.str()
			v.query = &q
		case "payloadHash":
			field = payloadHash
			var h string
			h, ok = s.str()
			v.payloadHash = &h
		case "headers":
			field = headers
			ok = s.headers(&v)
		default:
			return v, false
		}
		if !ok || seen&field != 0 {
			return v, false
		}
		seen |= field
	}
	return v, seen&(method|path|headers) == method|path|headers
}

// scanner reads JSON tokens from b, skipping whitespace before each.
type scanner struct {
	b string
	i int
}

func (s *scanner) skip() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// byte consumes c when it is next.
func (s *scanner) byte(c byte) bool {
	s.skip()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// end reports whether nothing but whitespace is left.
func (s *scanner) end() bool {
	s.skip()
	return s.i == len(s.b)
}

// str reads a string without escapes or control characters, in valid UTF-8.
func (s *scanner) str() (string, bool) {
	if !s.byte('"') {
		return "", false
	}
	start, ascii := s.i, true
	for ; s.i < len(s.b); s.i++ {
		switch c := s.b[s.i]; {
		case c == '"':
			raw := s.b[start:s.i]
			s.i++
			if !ascii && !utf8.ValidString(raw) {
				return "", false
			}
			return raw, true
		case c == '\\' || c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return "", false
}

// headers reads the headers object: distinct names to strings.
func (s *scanner) headers(v *verifyFields) bool {
	if !s.byte('{') {
		return false
	}
	v.headers = make(map[string]string, 8)
	if s.byte('}') {
		return true
	}
	for {
		name, ok := s.str()
		if !ok || !s.byte(':') {
			return false
		}
		value, ok := s.str()
		if !ok {
			return false
		}
		if _, dup := v.headers[name]; dup {
			return false
		}
		v.headers[name] = value
		if s.byte('}') {
			return true
		}
		if !s.byte(',') {
			return false
		}
	}
}
