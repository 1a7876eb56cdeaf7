package jsonbody

import (
	"encoding/json"
	"testing"
)

func TestParse(t *testing.T) {
	for _, body := range []string{"", "  ", "not json", "[]", `"s"`, "null", "1", "{", `{"a":1} x`} {
		if _, ok := Parse([]byte(body)); ok {
			t.Errorf("%q parsed as an object", body)
		}
	}
	if o, ok := Parse([]byte(` {"a":1} `)); !ok || len(o) != 1 {
		t.Fatal("object not parsed")
	}
	if len(ParseOrEmpty([]byte("nope"))) != 0 {
		t.Fatal("ParseOrEmpty")
	}
}

func TestFields(t *testing.T) {
	o, _ := Parse([]byte(`{"s":"x","n":1.5,"i":30,"f":30.0,"b":true,"z":null,"arr":["a","b"],"bad":[1]}`))
	if s, st := o.String("s"); s != "x" || st != OK {
		t.Error("string")
	}
	if _, st := o.String("n"); st != WrongType {
		t.Error("number as string")
	}
	if _, st := o.String("missing"); st != Absent {
		t.Error("absent")
	}
	if _, st := o.String("z"); st != Null {
		t.Error("null")
	}
	if _, whole, st := o.Integer("n"); whole || st != OK {
		t.Error("1.5 is not whole")
	}
	if v, whole, _ := o.Integer("i"); !whole || v != 30 {
		t.Error("30")
	}
	if v, whole, _ := o.Integer("f"); !whole || v != 30 {
		t.Error("30.0")
	}
	if _, _, st := o.Integer("s"); st != WrongType {
		t.Error("string as integer")
	}
	if b, st := o.Bool("b"); !b || st != OK {
		t.Error("bool")
	}
	if _, st := o.Bool("i"); st != WrongType {
		t.Error("number as bool")
	}
	if ss, st := o.Strings("arr"); len(ss) != 2 || st != OK {
		t.Error("strings")
	}
	if _, st := o.Strings("bad"); st != WrongType {
		t.Error("[1] as strings")
	}
}

// The cheap path for plain strings answers exactly as encoding/json does.
func TestStringFastPathAgreesWithEncodingJSON(t *testing.T) {
	for _, raw := range []string{`"plain"`, `""`, `"with \"quote\""`, `"tab\there"`, `"caf\u00e9"`, `"café"`, `"a\\b"`, `"\ud83d\ude00"`, "\"ctl\x01\"", `"/x?y=1&z"`} {
		o, ok := Parse([]byte(`{"s":` + raw + `}`))
		got, st := o.String("s")
		var want string
		wantErr := json.Unmarshal([]byte(raw), &want)
		if !ok {
			if wantErr == nil {
				t.Errorf("%s: not parsed", raw)
			}
			continue
		}
		if st != OK || got != want {
			t.Errorf("%s: got %q (%v), want %q", raw, got, st, want)
		}
	}
}

// FuzzObject: any body either parses as an object or does not, never panics, and every
// string field reads as encoding/json reads it.
func FuzzObject(f *testing.F) {
	for _, seed := range []string{`{"a":"b"}`, `{"a":1,"b":[1,2],"c":{"d":null}}`, `{"s":"caf\u00e9\n"}`, `[]`, ``, `{"a":"\x00"}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		o, ok := Parse(body)
		if !ok {
			return
		}
		for name, raw := range o {
			got, st := o.String(name)
			var want string
			// null is its own state (Null), not a string, on purpose.
			if err := json.Unmarshal(raw, &want); err == nil && string(raw) != "null" && (st != OK || got != want) {
				t.Fatalf("%s: got %q, want %q", raw, got, want)
			}
			_, _ = o.Number(name)
			_, _ = o.Strings(name)
			_, _, _ = o.Integer(name)
		}
		f := Read(body)
		_ = f.RequiredString("x")
		_ = f.Err()
	})
}
